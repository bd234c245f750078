/* NAS EP, "embarrassingly parallel" (Bailey et al., RNR-94-007 §2.3; NPB 3): 2^(M+1) uniform
 * numbers from NPB's generator (seed 271828183), taken in batches of 2^17 whose starting states
 * every rank can compute by jumping ahead, turned into Gaussian pairs by the acceptance method
 * (Marsaglia's polar method: keep (x1, x2) in the unit disc, scale by sqrt(-2 ln t / t)), the pairs
 * counted by the square annulus max(|X|, |Y|) falls in and summed; one reduction at the end.
 * Batches are split in blocks over the ranks.
 *
 * Verified as NPB verifies: the sums against the official values to a relative 1e-8 (classes S,
 * W, A, B); for class S also the ten annulus counts against NPB's published output (13,176,389
 * pairs).  Mop/s as NPB defines it: 2^(M+1) / time / 10^6. */
#include <math.h>
#include <stdio.h>

#include "kernel.h"
#include "npb.h"

static const char *const classes[] = {"S", "W", "A", "B", NULL};
static const int class_m[] = {24, 25, 28, 30};
/* NPB's verification values of the sums (ep.f) */
static const double ref_sx[] = {-3.247834652034740e3, -2.863319731645753e3, -4.295875165629892e3, 4.033815542441498e4};
static const double ref_sy[] = {-6.958407078382297e3, -6.320053679109499e3, -1.580732573678431e4, -2.660669192809235e4};
/* NPB 3.3's class S output: the pairs in each annulus */
static const double ref_q_s[10] = {6140517, 5865300, 1100361, 68546, 1648, 17, 0, 0, 0, 0};

static const scope_param params[] = {
    {"class", SP_ENUM, "S", 0, 0, classes, "NPB problem class: S (2^24 pairs), W (2^25), A (2^28), B (2^30)"},
};

#define EP_MK 16 /* a batch: 2^16 pairs, 2^17 numbers */
#define EP_NQ 10
#define EP_SEED 271828183ull

typedef struct {
  int cls;
  long first, batches; /* this rank's batches [first, first + batches) of 2^(M - MK) */
  uint64_t an;         /* a^(2^(MK+1)): a jump of one batch */
  double *x;
  double sums[2 + EP_NQ]; /* sx, sy, q[10]: after the reduction, on every rank */
} ep_state;

static void teardown(scope_ctx *c, void *st) {
  ep_state *s = st;
  (void)c;
  free(s->x);
  free(s);
}

static const char *refuse(scope_ctx *c) {
  (void)c;
  return NULL; /* the pairs split over any number of ranks */
}

static int setup(scope_ctx *c, void **st) {
  ep_state *s = calloc(1, sizeof *s);
  *st = s;
  if (!s || !(s->x = malloc(sizeof(double) << (EP_MK + 1))))
    return -1;
  s->cls = (int)scope_param_get(c, "class");
  int m = class_m[s->cls];
  size_t nn = (size_t)1 << (m - EP_MK);
  s->first = (long)kernel_part_start(nn, c->nranks, c->rank);
  s->batches = (long)kernel_part(nn, c->nranks, c->rank);
  s->an = npb_pow(NPB_A, 2ull << EP_MK);
  c->sbuf_bytes = c->rbuf_bytes = 64;
  c->bytes_per_op = 0;
  c->extra[0].name = "nas_ops";
  c->extra[0].value = ldexp(1.0, m + 1); /* NPB's operation count: the numbers generated */
  c->nextra = 1;
  snprintf(c->note, sizeof c->note, "class %s: 2^%d pairs in %zu batches over %d rank(s)", classes[s->cls], m, nn,
           c->nranks);
  return 0;
}

/* The inputs are NPB's, not the seed's: only the previous result goes, so a check reads a fresh one. */
static void fill(scope_ctx *c, void *st, uint64_t seed) {
  ep_state *s = st;
  (void)c, (void)seed;
  memset(s->sums, 0, sizeof s->sums);
}

static void run(scope_ctx *c, void *st) {
  ep_state *s = st;
  double sx = 0, sy = 0, q[EP_NQ] = {0};
  const long pairs = 1L << EP_MK;
  scope_phase(c, SCOPE_PH_COMP);
  uint64_t x = npb_mul(EP_SEED, npb_pow(s->an, (uint64_t)s->first)); /* the first batch's state */
  for (long k = 0; k < s->batches; k++) {
    uint64_t t = x;
    npb_fill(&t, NPB_A, s->x, (size_t)(2 * pairs));
    for (long i = 0; i < pairs; i++) {
      double x1 = 2.0 * s->x[2 * i] - 1.0, x2 = 2.0 * s->x[2 * i + 1] - 1.0;
      double t1 = x1 * x1 + x2 * x2;
      if (t1 <= 1.0) {
        double t2 = sqrt(-2.0 * log(t1) / t1), t3 = x1 * t2, t4 = x2 * t2;
        int l = (int)fmax(fabs(t3), fabs(t4));
        q[l] += 1.0;
        sx += t3;
        sy += t4;
      }
    }
    x = npb_mul(x, s->an);
  }
  double mine[2 + EP_NQ] = {sx, sy};
  memcpy(mine + 2, q, sizeof q);
  kernel_comm_from(c, -1, SCOPE_DEP_ALL);
  MPI_Allreduce(mine, s->sums, 2 + EP_NQ, MPI_DOUBLE, MPI_SUM, c->comm);
  scope_comm_end(c);
}

/* NPB's test: |(sum - reference) / sum| <= 1e-8 for both sums.  The values, NPB's reference
 * and the relative error go with the point; a failure is said in NPB's terms. */
static size_t verify(scope_ctx *c, void *st, uint64_t seed, size_t *first) {
  ep_state *s = st;
  (void)seed;
  double pairs = 0;
  size_t bad = 0;
  for (int i = 0; i < EP_NQ; i++) {
    pairs += s->sums[2 + i];
    if (s->cls == 0 && s->sums[2 + i] != ref_q_s[i] && !bad++)
      *first = (size_t)i;
  }
  double skew = 1 + npb_test_skew(), sx = s->sums[0] * skew, sy = s->sums[1] * skew;
  double ex = fabs((sx - ref_sx[s->cls]) / sx), ey = fabs((sy - ref_sy[s->cls]) / sy);
  if (!(ex <= 1e-8) || !(ey <= 1e-8))
    bad += 2;
  if (c->rank != 0)
    return 0;
  kernel_set_extra(c, "pairs", pairs);
  kernel_set_extra(c, "sx", sx);
  kernel_set_extra(c, "sx_reference", ref_sx[s->cls]);
  kernel_set_extra(c, "sy", sy);
  kernel_set_extra(c, "sy_reference", ref_sy[s->cls]);
  kernel_set_extra(c, "verification_error", fmax(ex, ey));
  kernel_set_extra(c, "verification_bound", 1e-8);
  if (bad)
    snprintf(c->check_message, sizeof c->check_message,
             "NPB verification failed: sx = %.15e against NPB's %.15e, sy = %.15e against %.15e "
             "(relative error %.2e, NPB's bound 1e-8)",
             sx, ref_sx[s->cls], sy, ref_sy[s->cls], fmax(ex, ey));
  return bad;
}

/* One batch of numbers a rank, whatever the class: EP is compute, not memory. */
static double memory(scope_ctx *c) {
  snprintf(c->note, sizeof c->note, "one batch of 2^%d numbers on each rank", EP_MK + 1);
  return (double)(sizeof(double) << (EP_MK + 1)) * c->nranks;
}

SCOPE_PHASED(app_ep, "app.ep", "app", "NAS EP: Gaussian pairs from NPB's generator, one reduction; NPB's verification",
             "time of one whole EP (all batches and the reduction), last rank's completion", 1);
