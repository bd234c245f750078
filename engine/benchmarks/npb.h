/* What the NAS Parallel Benchmarks codes share (app.ep, app.ft): NPB's linear congruential
 * generator x_{k+1} = a x_k mod 2^46, a = 5^13, whose outputs are x_k / 2^46 (Bailey et al., "The
 * NAS Parallel Benchmarks", RNR-94-007, and NPB 3 spec).  NPB computes it in double arithmetic
 * split into 23-bit halves so that every product is exact; 128-bit integers give the same exact
 * values directly.  A jump ahead by n outputs multiplies by a^n mod 2^46. */
#ifndef SCOPE_NPB_H
#define SCOPE_NPB_H
#include <stdint.h>
#include <stdlib.h>

#define NPB_A 1220703125ull /* 5^13 */
#define NPB_MASK ((1ull << 46) - 1)
#define NPB_R46 (1.0 / 70368744177664.0) /* 2^-46 */

static inline uint64_t npb_mul(uint64_t a, uint64_t x) {
  return (uint64_t)(((unsigned __int128)a * x) & NPB_MASK);
}

/* a^n mod 2^46 */
static inline uint64_t npb_pow(uint64_t a, uint64_t n) {
  uint64_t r = 1;
  for (; n; n >>= 1, a = npb_mul(a, a))
    if (n & 1)
      r = npb_mul(r, a);
  return r;
}

/* The next n outputs after state *x into y (NPB's vranlc), advancing *x. */
static inline void npb_fill(uint64_t *x, uint64_t a, double *y, size_t n) {
  uint64_t s = *x;
  for (size_t i = 0; i < n; i++) {
    s = npb_mul(a, s);
    y[i] = (double)s * NPB_R46;
  }
  *x = s;
}

/* Test hook: SCOPE_TEST_NPB_SKEW=REL moves the values the NAS codes verify by that relative
 * amount before they are compared with NPB's reference, so a failed verification is tested for
 * real (tests/test_apps.py). */
static inline double npb_test_skew(void) {
  const char *s = getenv("SCOPE_TEST_NPB_SKEW");
  return s ? strtod(s, NULL) : 0.0;
}

#endif
