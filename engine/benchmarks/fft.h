/* Complex 1-D FFTs of power-of-two length over blocks of lines, for app.ft.  Iterative radix-2
 * (Cooley & Tukey 1965): bit-reversal, then log2 n passes of butterflies.  A block holds B lines
 * interleaved, element j of line b at j * B + b, so every butterfly runs over B contiguous
 * complex numbers: the inner loop vectorises, and lines along a strided axis are copied in B at
 * a time in whole cache lines (the blocking NPB's own FT uses, fftblock = 16).  The roots are
 * computed directly (cos and sin of 2 pi k / n), not by recurrence, so they are exact to a
 * rounding and the checksums can meet NPB's 1e-12.  Unnormalised in both directions. */
#ifndef SCOPE_FFT_H
#define SCOPE_FFT_H
#include <math.h>
#include <stdlib.h>

typedef struct {
  double re, im;
} cplx;

typedef struct {
  size_t n;
  cplx *w;      /* w[k] = exp(-2 pi i k / n), k < n/2 */
  size_t *swap; /* pairs (i, j), i < j, of the bit-reversal permutation */
  size_t nswap;
} fft_plan;

static inline void fft_plan_free(fft_plan *P) {
  free(P->w), free(P->swap);
  P->w = NULL, P->swap = NULL;
}

/* 0, or -1 when n is not a power of two or memory runs out. */
static inline int fft_plan_make(fft_plan *P, size_t n) {
  P->n = n;
  P->nswap = 0;
  P->w = malloc(sizeof(cplx) * (n / 2 + 1));
  P->swap = malloc(sizeof(size_t) * (n + 1));
  if (!P->w || !P->swap || n < 2 || (n & (n - 1))) {
    fft_plan_free(P);
    return -1;
  }
  const double pi = 3.14159265358979323846;
  for (size_t k = 0; k < n / 2; k++)
    P->w[k] = (cplx){cos(2 * pi * (double)k / (double)n), -sin(2 * pi * (double)k / (double)n)};
  int bits = 0;
  while (((size_t)1 << bits) < n)
    bits++;
  for (size_t i = 0; i < n; i++) {
    size_t j = 0;
    for (int b = 0; b < bits; b++)
      j |= ((i >> b) & 1) << (bits - 1 - b);
    if (i < j)
      P->swap[P->nswap++] = i, P->swap[P->nswap++] = j;
  }
  return 0;
}

/* B interleaved lines of length P->n in a; sign -1: exp(-2 pi i jk/n), +1: exp(+...). */
static inline void fft_block(const fft_plan *P, cplx *a, size_t B, int sign) {
  size_t n = P->n;
  for (size_t s = 0; s < P->nswap; s += 2) {
    cplx *x = a + P->swap[s] * B, *y = a + P->swap[s + 1] * B;
    for (size_t b = 0; b < B; b++) {
      cplx t = x[b];
      x[b] = y[b], y[b] = t;
    }
  }
  for (size_t len = 2; len <= n; len <<= 1) {
    size_t half = len / 2, step = n / len;
    for (size_t start = 0; start < n; start += len)
      for (size_t k = 0; k < half; k++) {
        double wr = P->w[k * step].re, wi = sign < 0 ? P->w[k * step].im : -P->w[k * step].im;
        cplx *x = a + (start + k) * B, *y = a + (start + k + half) * B;
        for (size_t b = 0; b < B; b++) {
          double tr = wr * y[b].re - wi * y[b].im, ti = wr * y[b].im + wi * y[b].re;
          y[b].re = x[b].re - tr, y[b].im = x[b].im - ti;
          x[b].re += tr, x[b].im += ti;
        }
      }
  }
}

/* FFTs of the lines a[j * stride + b * bstride], j < n, for `count` lines b (count a multiple of
 * B or the rest done in a last short block), through the block buffer buf (n * B). */
static inline void fft_lines(const fft_plan *P, cplx *a, size_t stride, size_t bstride, size_t count, cplx *buf,
                             size_t B, int sign) {
  size_t n = P->n;
  for (size_t b0 = 0; b0 < count; b0 += B) {
    size_t nb = count - b0 < B ? count - b0 : B;
    for (size_t j = 0; j < n; j++)
      for (size_t b = 0; b < nb; b++)
        buf[j * nb + b] = a[j * stride + (b0 + b) * bstride];
    fft_block(P, buf, nb, sign);
    for (size_t j = 0; j < n; j++)
      for (size_t b = 0; b < nb; b++)
        a[j * stride + (b0 + b) * bstride] = buf[j * nb + b];
  }
}

#endif
