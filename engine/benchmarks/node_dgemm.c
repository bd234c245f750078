/* Double-precision matrix multiply through OpenBLAS (scipy-openblas32, the build numpy and
 * scipy ship), one thread a rank: the single-node compute rate (SCOPE §6.4) that the kernel
 * level's efficiency is read against (ParaStation2's Tables 4-5: parallel matrix multiply
 * against the uniprocessor rate).  Window-timed over --procs like node.stream: procs=1 one
 * core alone, procs=all every rank at once; GFLOP/s = procs x 2 n^3 / completion time.
 * Checked exactly: small-integer matrices, sampled entries recomputed serially. */
#include <stdio.h>
#include <stdlib.h>

#include "../core/pattern.h"
#include "node.h"

#ifdef SCOPE_HAVE_BLAS
#include <cblas.h>
#endif

static const scope_param params[] = {
    {"n", SP_INT, "1024", 16, 16384, NULL, "matrix order: C (n x n) = A (n x n) B (n x n)"},
};

#define SAMPLES 64 /* entries of C recomputed serially by the check */

static int setup(scope_ctx *c, void **st) {
  node_arrays *s = calloc(1, sizeof *s);
  *st = s;
  if (!s)
    return -1;
  s->order = (size_t)scope_param_get(c, "n");
  c->sbuf_bytes = c->rbuf_bytes = 64;
  c->ops_per_iter = 1;
  c->bytes_per_op = 0; /* a rate of operations, not of bytes: extra.flop */
#ifndef SCOPE_HAVE_BLAS
  c->skip = "this engine was built without a BLAS: install scipy-openblas32 in SCOPE's environment (pip install "
            "-e .) and run again";
  return 0;
#else
  if (node_alloc(s, s->order * s->order))
    return -1;
  scipy_openblas_set_num_threads(1); /* one thread a rank: the ranks are the parallelism */
  double flop = 2.0 * (double)s->order * (double)s->order * (double)s->order;
  c->extra[0].name = "flop";
  c->extra[0].value = flop * c->nranks; /* the node's: every rank's multiply */
  c->extra[1].name = "blas_threads";
  c->extra[1].value = scipy_openblas_get_num_threads();
  c->nextra = 2;
  snprintf(c->note, sizeof c->note, "%d rank(s) at once, each a %zu x %zu DGEMM; %s (scipy-openblas32)", c->nranks,
           s->order, s->order, scipy_openblas_get_config());
  return 0;
#endif
}

static void fill(scope_ctx *c, void *st, uint64_t seed) {
  node_arrays *s = st;
  for (size_t i = 0; i < s->n; i++) {
    s->a[i] = pattern_byte(seed, 2 * c->rank, i) & 3;
    s->b[i] = pattern_byte(seed, 2 * c->rank + 1, i) & 3;
    s->c[i] = 0.0;
  }
}

static void run(scope_ctx *c, void *st) {
#ifdef SCOPE_HAVE_BLAS
  node_arrays *s = st;
  blasint n = (blasint)s->order;
  scipy_cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, s->a, n, s->b, n, 0.0, s->c, n);
#endif
  (void)c, (void)st;
}

/* Sampled entries of C against the serial sum (integers: exact in doubles). */
static size_t verify(scope_ctx *c, void *st, uint64_t seed, size_t *first) {
  node_arrays *s = st;
  size_t bad = 0, n = s->order;
  for (int k = 0; k < SAMPLES; k++) {
    size_t i = pattern_index(seed, 7, 2 * (size_t)k, n), j = pattern_index(seed, 7, 2 * (size_t)k + 1, n);
    double want = 0;
    for (size_t m = 0; m < n; m++)
      want += s->a[i * n + m] * s->b[m * n + j];
    if (s->c[i * n + j] != want) {
      if (!bad)
        *first = (i * n + j) * sizeof(double);
      bad += sizeof(double);
    }
  }
  (void)c;
  return bad;
}

/* A, B and C on every rank. */
static double memory(scope_ctx *c) {
  double n = (double)scope_param_get(c, "n");
  snprintf(c->note, sizeof c->note, "3 matrices of n x n doubles on each rank");
  return 3 * 8 * n * n * c->nranks;
}

SCOPE_NODE(node_dgemm, "node.dgemm",
           "double-precision matrix multiply (OpenBLAS, one thread a rank) on every rank at once",
           "time of one n x n DGEMM, last rank's completion; GFLOP/s is the node's (extra.flop)", 0);
