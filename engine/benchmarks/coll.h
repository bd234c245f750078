/* Shared by the collective tests: the size is the bytes each rank contributes (one block);
 * rooted operations rotate the root with -p root=rotate (every rank takes a turn, as
 * SKaMPI and IMB's root shift do) or keep a fixed rank. */
#ifndef SCOPE_COLL_H
#define SCOPE_COLL_H
#include <stdlib.h>
#include <string.h>

#include "../core/pattern.h"
#include "../core/stats.h"
#include "../core/timer.h"
#include "../scope.h"

static const char *const coll_roots[] = {"0", "rotate", NULL};
static const char *const coll_nb_modes[] = {"no", "yes", "overlap", NULL};
#define SCOPE_PARAM_NB                                                                                                 \
  {                                                                                                                    \
    "nonblocking", SP_ENUM, "no", 0, 0, coll_nb_modes,                                                                 \
        "no: the blocking call; yes: MPI_I... + wait; overlap: + computation of t_pure between start and wait"         \
  }
#define SCOPE_PARAM_ROOT                                                                                               \
  { "root", SP_ENUM, "rotate", 0, 0, coll_roots, "root rank: 0, or rotate through all ranks" }

/* One operation: the blocking call when req is NULL, else the non-blocking one. */
typedef void (*coll_op)(scope_ctx *c, void *st, MPI_Request *req);

typedef struct {
  long iter;
  int root;               /* root of the last call */
  uint64_t compute_ticks; /* nonblocking=overlap: computation between start and wait */
  coll_op op;             /* the test's operation, for coll_run and coll_start */
  int nb;                 /* nonblocking: 0 no, 1 yes, 2 overlap */
  int rotate;             /* root=rotate */
} coll_state;

/* The parameters every collective shares, read by name once per point. */
static inline void coll_read_params(scope_ctx *c, coll_state *s) {
  s->nb = scope_has_param(c, "nonblocking") ? (int)scope_param_get(c, "nonblocking") : 0;
  s->rotate = scope_has_param(c, "root") && scope_param_get(c, "root") == 1;
}

static inline int coll_setup_state(scope_ctx *c, void **st, coll_op op) {
  coll_state *s = calloc(1, sizeof *s);
  *st = s;
  if (!s)
    return -1;
  s->op = op;
  coll_read_params(c, s);
  return 0;
}

/* A paired repetition's two variants share a root: rotating per repetition would give the
 * reference and the measured variant different roots (with 2 ranks, always different ones). */
static inline int coll_next_root(scope_ctx *c, coll_state *s) {
  if (c->paired && c->variant == 1)
    return s->root;
  s->root = s->rotate ? (int)(s->iter % c->nranks) : 0;
  s->iter++;
  return s->root;
}

/* Words [word0, word0 + words) of the sum over ranks 0 .. upto-1 (scan, reduce-scatter). */
static inline size_t coll_check_sum_range(const void *got, size_t words, uint64_t seed, size_t word0, int upto,
                                          size_t *first) {
  const uint32_t *g = got;
  size_t bad = 0;
  for (size_t i = 0; i < words; i++) {
    uint32_t want = 0;
    for (int r = 0; r < upto; r++) {
      uint32_t v = 0;
      for (int b = 0; b < 4; b++)
        v |= (uint32_t)pattern_byte(seed, r, 4 * (word0 + i) + (size_t)b) << (8 * b);
      want += v;
    }
    if (g[i] != want) {
      if (!bad && first)
        *first = 4 * i;
      bad++;
    }
  }
  return bad;
}

/* Reductions work on uint32 words (sums wrap, so the reference is exact): the whole sum over
 * every rank (allreduce, reduce). */
static inline size_t coll_check_sum(const scope_ctx *c, const void *got, size_t bytes, uint64_t seed, size_t *first) {
  return coll_check_sum_range(got, bytes / 4, seed, 0, c->nranks, first);
}

/* Vector variants: odd ranks contribute half a block, so uneven counts and displacements
 * are exercised (and a wrong displacement fails the check). */
static inline int coll_vcount(size_t n, int r) {
  return (int)(r % 2 ? n / 2 : n);
}

static inline void coll_vlayout(size_t n, int p, int *counts, int *displs) {
  int at = 0;
  for (int r = 0; r < p; r++) {
    counts[r] = coll_vcount(n, r);
    displs[r] = at;
    at += counts[r];
  }
}

/* SCOPE's effective bandwidth (thesis §6.5.4): the aggregated payload of all transfers
 * between distinct ranks in one call, over the call's time.  Each collective's setup puts that
 * payload in bytes_per_op, so the record's bandwidth is B_eff and there is one definition. */
static inline double coll_vsum(size_t n, int p) {
  double sum = 0;
  for (int r = 0; r < p; r++)
    sum += coll_vcount(n, r);
  return sum;
}

/* v-state: counts and displacements for p ranks */
typedef struct {
  coll_state base;
  int *counts, *displs, *scounts, *sdispls;
} coll_vstate;

static inline int coll_vsetup(scope_ctx *c, void **st, coll_op op) {
  coll_vstate *s = calloc(1, sizeof *s);
  if (!s)
    return -1;
  s->base.op = op;
  coll_read_params(c, &s->base);
  s->counts = calloc((size_t)c->nranks, sizeof(int));
  s->displs = calloc((size_t)c->nranks, sizeof(int));
  s->scounts = calloc((size_t)c->nranks, sizeof(int));
  s->sdispls = calloc((size_t)c->nranks, sizeof(int));
  *st = s;
  if (!s->counts || !s->displs || !s->scounts || !s->sdispls)
    return -1;
  coll_vlayout(c->size, c->nranks, s->counts, s->displs);
  return 0;
}

/* gatherv, scatterv: every block but the root's crosses; a rotating root averages over roots. */
static inline double coll_rooted_vpayload(const scope_ctx *c, const coll_vstate *s) {
  double all = coll_vsum(c->size, c->nranks);
  return s->base.rotate ? all * (c->nranks - 1) / c->nranks : all - coll_vcount(c->size, 0);
}

static inline void coll_vfree(scope_ctx *c, void *st) {
  coll_vstate *s = st;
  (void)c;
  free(s->counts);
  free(s->displs);
  free(s->scounts);
  free(s->sdispls);
  free(s);
}

/* Non-blocking versions and overlap, as OSU's non-blocking collective benchmarks define it:
 * overlap = 1 - (t_total - t_compute) / t_pure, where t_pure is start + wait with nothing
 * between and t_total is start + a computation of t_compute (a spin on the clock, no MPI
 * calls) + wait.  OSU measures the two in separate loops; here they are the two variants of
 * paired repetitions (scope.h), timed alike in one window-timed loop: variant 0 is t_pure,
 * variant 1 the point's own samples.  With nonblocking=yes the variants are the same
 * operation, so the overlap it reports is 0 up to noise: the check of the method. */
static inline void coll_call(scope_ctx *c, void *st, coll_op op) {
  coll_state *s = st; /* every collective's state starts with a coll_state */
  if (!s->nb) {
    op(c, st, NULL);
    return;
  }
  MPI_Request req;
  op(c, st, &req);
  if (s->compute_ticks && c->variant == 1) {
    uint64_t t0 = timer_now();
    while (timer_now() - t0 < s->compute_ticks)
      ;
  }
  MPI_Wait(&req, MPI_STATUS_IGNORE);
}

/* The computation to insert: the median of 51 untimed start + wait, the largest over ranks
 * (so every rank computes for the same time); recorded as extra.compute_us.  It only sizes
 * the computation: t_pure itself is measured in the timed loop. */
static inline void coll_calibrate(scope_ctx *c, void *st, coll_op op) {
  coll_state *s = st;
  if (!s->nb)
    return;
  c->paired = 1;
  enum { N = 51 };
  double t[N], mine, pure;
  for (int i = 0; i < N; i++) {
    MPI_Barrier(c->comm);
    uint64_t a = timer_now();
    MPI_Request req;
    op(c, st, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    t[i] = (double)(timer_now() - a) * timer_tick_ns();
  }
  stats_sort(t, N);
  mine = t[N / 2];
  MPI_Allreduce(&mine, &pure, 1, MPI_DOUBLE, MPI_MAX, c->comm);
  double compute = s->nb == 2 ? pure : 0;
  s->compute_ticks = (uint64_t)(compute / timer_tick_ns());
  c->extra[0].name = "compute_us";
  c->extra[0].value = (double)s->compute_ticks * timer_tick_ns() * 1e-3;
  c->nextra = 1;
}

/* The descriptors' run and start hooks: the operation the test's setup stored. */
static inline void coll_run(scope_ctx *c, void *st) {
  coll_call(c, st, ((coll_state *)st)->op);
}

static inline void coll_start(scope_ctx *c, void *st) {
  coll_calibrate(c, st, ((coll_state *)st)->op);
}

/* A collective's descriptor: every collective is window-timed over --procs, needs two ranks
 * and uses the shared start and run hooks; the file defines setup and verify. */
#define SCOPE_COLLECTIVE(ID, NAME, SIZED, SUMMARY, PARAMS, TEARDOWN, ...)                                              \
  const scope_test test_##ID = {.name = NAME,                                                                          \
                                .level = "coll",                                                                       \
                                .summary = SUMMARY,                                                                    \
                                .measures = "global completion time (last exit - common start)",                       \
                                .min_ranks = 2,                                                                        \
                                .sized = SIZED,                                                                        \
                                .timing = SCOPE_TIMING_WINDOW,                                                         \
                                .roles = {__VA_ARGS__},                                                                \
                                SCOPE_PARAMS(PARAMS),                                                                  \
                                .setup = setup,                                                                        \
                                .start = coll_start,                                                                   \
                                .run = coll_run,                                                                       \
                                .verify = verify,                                                                      \
                                .teardown = TEARDOWN}

static inline void coll_free(scope_ctx *c, void *st) {
  (void)c;
  free(st);
}

#endif
