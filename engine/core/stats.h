/* Summary statistics of one point's samples. */
#ifndef SCOPE_STATS_H
#define SCOPE_STATS_H
#include <stddef.h>

typedef struct {
  size_t n;
  double min, max, mean, sd, median;
  double p5, p25, p75, p95, p99;
  double ci_lo, ci_hi; /* 95 % distribution-free confidence interval of the median */
  double ci_rel;       /* max(median - ci_lo, ci_hi - median) / median; NaN when undefined */
} stats_summary;

/* Quantile q in [0,1] of sorted data, linear interpolation between order statistics
 * (Hyndman & Fan type 7, the default of R and NumPy). */
double stats_quantile_sorted(const double *sorted, size_t n, double q);

/* 1-based ranks (j, k) of the order statistics bounding a 95 % confidence interval for the
 * median of n samples.  Returns 0 when n is too small for one (n < 6). */
int stats_median_ci_ranks(size_t n, size_t *j, size_t *k);

/* Sorts `work` (a scratch copy of the samples) in place and summarises it. */
void stats_summarise(double *work, size_t n, stats_summary *s);

void stats_sort(double *x, size_t n);

#endif
