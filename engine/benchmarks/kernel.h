/* What the kernel-level tests share (SCOPE §6.6-6.7, App. F): the matrix multiply they call
 * (OpenBLAS, one thread a rank, as node.dgemm, so efficiency reads against its rate), inputs
 * that are a function of the seed and the global index (so any rank, and the check, can
 * recompute any entry), the block split of n items over p ranks, and the descriptor. */
#ifndef SCOPE_KERNEL_H
#define SCOPE_KERNEL_H
#include <stdlib.h>
#include <string.h>

#include "../core/pattern.h"
#include "../scope.h"

#ifdef SCOPE_HAVE_BLAS
#include <cblas.h>
#define KERNEL_GEMM_NAME "OpenBLAS (scipy-openblas32), one thread a rank"
#else
#define KERNEL_GEMM_NAME "no BLAS in this build: a plain triple loop"
#endif

/* C (m x n) = A (m x k) B (k x n) + beta C, row-major with leading dimensions. */
static inline void kernel_gemm(size_t m, size_t n, size_t k, const double *A, size_t lda, const double *B, size_t ldb,
                               double beta, double *C, size_t ldc) {
  if (!m || !n)
    return;
#ifdef SCOPE_HAVE_BLAS
  scipy_cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (blasint)m, (blasint)n, (blasint)k, 1.0, A, (blasint)lda,
                    B, (blasint)ldb, beta, C, (blasint)ldc);
#else
  for (size_t i = 0; i < m; i++) {
    for (size_t j = 0; j < n; j++)
      C[i * ldc + j] *= beta;
    for (size_t q = 0; q < k; q++)
      for (size_t j = 0; j < n; j++)
        C[i * ldc + j] += A[i * lda + q] * B[q * ldb + j];
  }
#endif
}

static inline void kernel_one_thread(void) {
#ifdef SCOPE_HAVE_BLAS
  scipy_openblas_set_num_threads(1); /* the ranks are the parallelism */
#endif
}

/* Entry (i, j) of input matrix `which` of order n: a small integer, so products and sums of
 * products are exact in doubles and the check can compare exactly. */
static inline double kernel_entry(uint64_t seed, int which, size_t i, size_t j, size_t n) {
  return (double)(pattern_byte(seed, which, i * n + j) & 3);
}

/* Entry (i, j) of A B, computed serially from the generator (the check's reference). */
static inline double kernel_product_entry(uint64_t seed, size_t i, size_t j, size_t n) {
  double s = 0;
  for (size_t q = 0; q < n; q++)
    s += kernel_entry(seed, 0, i, q, n) * kernel_entry(seed, 1, q, j, n);
  return s;
}

/* n items over p ranks: the first n % p ranks hold one more. */
static inline size_t kernel_part(size_t n, int p, int r) {
  return n / (size_t)p + ((size_t)r < n % (size_t)p);
}
static inline size_t kernel_part_start(size_t n, int p, int r) {
  return (size_t)r * (n / (size_t)p) + ((size_t)r < n % (size_t)p ? (size_t)r : n % (size_t)p);
}

/* A communication that waits for one rank, or for every rank (SCOPE_DEP_ALL; -2: for none).
 * Waiting on a rank that may not hold one up costs nothing: idle is clipped to the
 * communication's own time. */
static inline void kernel_comm_from(scope_ctx *c, int op, int src) {
  scope_comm_begin(c, op, src >= 0 || src == SCOPE_DEP_ALL, &src);
}

/* Sets the record's named number (replacing it: the checks run twice), from a check's result. */
static inline void kernel_set_extra(scope_ctx *c, const char *name, double value) {
  int k = 0;
  while (k < c->nextra && strcmp(c->extra[k].name, name) != 0)
    k++;
  if (k >= (int)(sizeof c->extra / sizeof c->extra[0]))
    return;
  c->extra[k].name = name;
  c->extra[k].value = value;
  if (k == c->nextra)
    c->nextra++;
}

/* A whole algorithm timed in phases, at the kernel level or (the NAS codes) the application's. */
#define SCOPE_KERNEL(ID, NAME, SUMMARY, MEASURES, MIN_RANKS)                                                           \
  SCOPE_PHASED(ID, NAME, "kernel", SUMMARY, MEASURES, MIN_RANKS)
#define SCOPE_PHASED(ID, NAME, LEVEL, SUMMARY, MEASURES, MIN_RANKS)                                                    \
  const scope_test test_##ID = {.name = NAME,                                                                          \
                                .level = LEVEL,                                                                        \
                                .summary = SUMMARY,                                                                    \
                                .measures = MEASURES,                                                                  \
                                .min_ranks = MIN_RANKS,                                                                \
                                .sized = 0,                                                                            \
                                .timing = SCOPE_TIMING_KERNEL,                                                         \
                                SCOPE_PARAMS(params),                                                                  \
                                .setup = setup,                                                                        \
                                .fill = fill,                                                                          \
                                .run = run,                                                                            \
                                .verify = verify,                                                                      \
                                .teardown = teardown,                                                                  \
                                .memory = memory,                                                                      \
                                .refuse = refuse}

#endif
