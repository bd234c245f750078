#include "stats.h"

#include <math.h>
#include <stdlib.h>

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

void stats_sort(double *x, size_t n) {
  qsort(x, n, sizeof *x, cmp_double);
}

double stats_quantile_sorted(const double *x, size_t n, double q) {
  if (n == 0)
    return NAN;
  double h = (double)(n - 1) * q;
  size_t lo = (size_t)floor(h);
  if (lo + 1 >= n)
    return x[n - 1];
  return x[lo] + (h - (double)lo) * (x[lo + 1] - x[lo]);
}

/* The number of samples below the median is Binomial(n, 1/2), so [x_(j), x_(k)] covers the
 * median with probability P(j <= B < k).  For n <= 1000 j is chosen exactly from the
 * binomial tail; above that, the normal approximation of Le Boudec, "Performance Evaluation
 * of Computer and Communication Systems", Thm 2.1: j = floor(n/2 - 0.98 sqrt(n)),
 * k = ceil(n/2 + 1 + 0.98 sqrt(n)). */
int stats_median_ci_ranks(size_t n, size_t *j, size_t *k) {
  if (n < 6)
    return 0;
  if (n > 1000) {
    double rn = sqrt((double)n);
    *j = (size_t)floor(0.5 * (double)n - 0.98 * rn);
    *k = (size_t)ceil(0.5 * (double)n + 1.0 + 0.98 * rn);
    if (*j < 1)
      *j = 1;
    if (*k > n)
      *k = n;
    return 1;
  }
  /* Largest j with P(B <= j-1) <= 0.025, accumulating the pmf in log space. */
  double log_half_n = (double)n * log(0.5);
  double cdf = 0.0;
  size_t jj = 0;
  for (size_t i = 0; i <= n / 2; i++) {
    double lp = lgamma((double)n + 1) - lgamma((double)i + 1) - lgamma((double)(n - i) + 1) + log_half_n;
    if (cdf + exp(lp) > 0.025)
      break;
    cdf += exp(lp);
    jj = i + 1;
  }
  if (jj < 1)
    return 0;
  *j = jj;
  *k = n + 1 - jj;
  return 1;
}

void stats_summarise(double *x, size_t n, stats_summary *s) {
  s->n = n;
  if (n == 0) {
    s->min = s->max = s->mean = s->sd = s->median = NAN;
    s->p5 = s->p25 = s->p75 = s->p95 = s->p99 = NAN;
    s->ci_lo = s->ci_hi = s->ci_rel = NAN;
    return;
  }
  stats_sort(x, n);
  double sum = 0;
  for (size_t i = 0; i < n; i++)
    sum += x[i];
  double mean = sum / (double)n, ss = 0;
  for (size_t i = 0; i < n; i++)
    ss += (x[i] - mean) * (x[i] - mean);
  s->min = x[0];
  s->max = x[n - 1];
  s->mean = mean;
  s->sd = n > 1 ? sqrt(ss / (double)(n - 1)) : NAN;
  s->median = stats_quantile_sorted(x, n, 0.5);
  s->p5 = stats_quantile_sorted(x, n, 0.05);
  s->p25 = stats_quantile_sorted(x, n, 0.25);
  s->p75 = stats_quantile_sorted(x, n, 0.75);
  s->p95 = stats_quantile_sorted(x, n, 0.95);
  s->p99 = stats_quantile_sorted(x, n, 0.99);
  size_t j, k;
  if (stats_median_ci_ranks(n, &j, &k)) {
    s->ci_lo = x[j - 1];
    s->ci_hi = x[k - 1];
    double half = fmax(s->median - s->ci_lo, s->ci_hi - s->median);
    s->ci_rel = s->median > 0 ? half / s->median : NAN;
  } else {
    s->ci_lo = s->ci_hi = s->ci_rel = NAN;
  }
}
