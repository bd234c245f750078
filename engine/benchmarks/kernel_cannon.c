/* Cannon's algorithm (SCOPE App. F; Kumar et al., Introduction to Parallel Computing §8.2.2)
 * on a q x q process grid: each rank holds one b x b block of A and of B (b = n / q), aligns
 * them (row i of A shifted left by i, column j of B up by j), then q times multiplies its
 * blocks into C and shifts A left and B up by one.  Every shift is an operation in context,
 * reported beside p2p.ring's loop figure for the same block.  Needs a square number of ranks
 * and q dividing n (otherwise a skip says so).  Checked on sampled entries of every rank's C
 * block against the serial sum from the inputs' generator. */
#include <math.h>
#include <stdio.h>

#include "kernel.h"

static const scope_param params[] = {
    {"n", SP_INT, "512", 2, 16384, NULL, "matrix order: C (n x n) = A (n x n) B (n x n)"},
};

#define SAMPLES 24

typedef struct {
  size_t n, b;
  int q, i, j;
  double *A0, *B0, *A, *B, *C, *tmp;
  int op;
} cannon_state;

static void teardown(scope_ctx *c, void *st) {
  cannon_state *s = st;
  (void)c;
  free(s->A0), free(s->B0), free(s->A), free(s->B), free(s->C), free(s->tmp);
  free(s);
}

static const char *refuse(scope_ctx *c) {
  long n = scope_param_get(c, "n"), q = lround(sqrt((double)c->nranks));
  if (q * q != c->nranks)
    return "Cannon's algorithm needs a square number of ranks (1, 4, 9, ...): pick them with --procs";
  if (n % q)
    return "Cannon's algorithm needs n divisible by the grid's side sqrt(procs)";
  return NULL;
}

static int setup(scope_ctx *c, void **st) {
  cannon_state *s = calloc(1, sizeof *s);
  *st = s;
  if (!s)
    return -1;
  s->n = (size_t)scope_param_get(c, "n");
  s->q = (int)lround(sqrt((double)c->nranks));
  s->b = s->n / (size_t)s->q;
  s->i = c->rank / s->q, s->j = c->rank % s->q;
  size_t bb = s->b * s->b;
  double **all[] = {&s->A0, &s->B0, &s->A, &s->B, &s->C, &s->tmp};
  for (size_t k = 0; k < sizeof all / sizeof all[0]; k++)
    if (!(*all[k] = calloc(bb, sizeof(double))))
      return -1;
  kernel_one_thread();
  s->op = scope_op(c, "shift", "p2p.ring", (double)(bb * sizeof(double)));
  c->sbuf_bytes = c->rbuf_bytes = 64;
  c->bytes_per_op = 0;
  c->extra[0].name = "flop";
  c->extra[0].value = 2.0 * (double)s->n * (double)s->n * (double)s->n;
  c->nextra = 1;
  snprintf(c->note, sizeof c->note, "Cannon on a %d x %d grid, %zu x %zu blocks; %s", s->q, s->q, s->b, s->b,
           KERNEL_GEMM_NAME);
  return 0;
}

static void fill(scope_ctx *c, void *st, uint64_t seed) {
  cannon_state *s = st;
  size_t b = s->b, r0 = (size_t)s->i * b, c0 = (size_t)s->j * b;
  for (size_t r = 0; r < b; r++)
    for (size_t k = 0; k < b; k++) {
      s->A0[r * b + k] = kernel_entry(seed, 0, r0 + r, c0 + k, s->n);
      s->B0[r * b + k] = kernel_entry(seed, 1, r0 + r, c0 + k, s->n);
      s->C[r * b + k] = -1.0;
    }
  (void)c;
}

static int at(const cannon_state *s, int i, int j) {
  return ((i + s->q) % s->q) * s->q + (j + s->q) % s->q;
}

/* Block *blk goes to `to` and is replaced by the one from `from`; a shift by zero is an empty
 * communication, so every rank logs the same ones. */
static void shift(scope_ctx *c, cannon_state *s, double **blk, int to, int from) {
  int deps[2] = {from, to};
  scope_comm_begin(c, s->op, to == c->rank ? 0 : 2, deps);
  if (to != c->rank) {
    int count = (int)(s->b * s->b);
    MPI_Sendrecv(*blk, count, MPI_DOUBLE, to, 11, s->tmp, count, MPI_DOUBLE, from, 11, c->comm, MPI_STATUS_IGNORE);
    double *t = *blk;
    *blk = s->tmp, s->tmp = t;
  }
  scope_comm_end(c);
}

static void run(scope_ctx *c, void *st) {
  cannon_state *s = st;
  size_t bb = s->b * s->b;
  memcpy(s->A, s->A0, bb * sizeof(double));
  memcpy(s->B, s->B0, bb * sizeof(double));
  int i = s->i, j = s->j;
  shift(c, s, &s->A, at(s, i, j - i), at(s, i, j + i)); /* alignment */
  shift(c, s, &s->B, at(s, i - j, j), at(s, i + j, j));
  for (int step = 0; step < s->q; step++) {
    scope_phase(c, SCOPE_PH_COMP);
    kernel_gemm(s->b, s->b, s->b, s->A, s->b, s->B, s->b, step ? 1.0 : 0.0, s->C, s->b);
    if (step + 1 < s->q) {
      shift(c, s, &s->A, at(s, i, j - 1), at(s, i, j + 1));
      shift(c, s, &s->B, at(s, i - 1, j), at(s, i + 1, j));
    }
  }
}

static size_t verify(scope_ctx *c, void *st, uint64_t seed, size_t *first) {
  cannon_state *s = st;
  size_t bad = 0, b = s->b;
  for (size_t k = 0; k < SAMPLES; k++) {
    size_t r = pattern_index(seed, 8 + c->rank, 2 * k, b), q = pattern_index(seed, 8 + c->rank, 2 * k + 1, b);
    if (k == 0)
      r = q = b - 1;
    if (s->C[r * b + q] != kernel_product_entry(seed, (size_t)s->i * b + r, (size_t)s->j * b + q, s->n)) {
      if (!bad)
        *first = (r * b + q) * sizeof(double);
      bad += sizeof(double);
    }
  }
  return bad;
}

/* Six blocks a rank (A, B, C and their shift buffers): six n x n matrices over the grid. */
static double memory(scope_ctx *c) {
  double n = (double)scope_param_get(c, "n");
  snprintf(c->note, sizeof c->note, "6 blocks a rank, 6 n x n matrices of doubles over the grid");
  return 6 * 8 * n * n;
}

SCOPE_KERNEL(kernel_cannon, "kernel.cannon", "Cannon's matrix multiply on a square process grid (block shifts)",
             "time of one whole multiply, alignment included, last rank's completion", 1);
