#include "rep.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void rep_defaults(rep_settings *s) {
  s->precision = 0.01;
  s->budget_s = 1.0;
  s->warmup_share = 0.25;
  s->warmup_max = 20000;
  s->warmup_tol = 0.05;
  s->min_count = 20;
  s->max_count = 200000;
  s->timer_cost_ns = 0.0;
  s->batch_factor = 50.0;
}

int rep_init(rep_state *r, const rep_settings *s) {
  memset(r, 0, sizeof *r);
  r->set = *s;
  r->window = 8;
  r->prev_median = NAN;
  r->warm_median = NAN;
  r->batch = 1;
  r->cap = s->min_count > 64 ? s->min_count : 64;
  r->samples = malloc(r->cap * sizeof(double));
  r->work = malloc(r->cap * sizeof(double));
  r->summary.ci_rel = NAN;
  r->summary.median = NAN;
  return r->samples && r->work ? 0 : -1;
}

void rep_free(rep_state *r) {
  free(r->samples);
  free(r->work);
  r->samples = r->work = NULL;
}

size_t rep_warmup_chunk(const rep_state *r) {
  return r->window;
}

static double median_of(const double *x, size_t n, double *scratch) {
  memcpy(scratch, x, n * sizeof *x);
  stats_sort(scratch, n);
  return stats_quantile_sorted(scratch, n, 0.5);
}

int rep_warmup_feed(rep_state *r, const double *ns, size_t n, double seconds) {
  double *scratch = malloc((n ? n : 1) * sizeof(double));
  double m = scratch ? median_of(ns, n, scratch) : NAN;
  free(scratch);
  r->warm_n += n;
  r->warm_s += seconds;
  r->warm_median = m;
  if (!isnan(r->prev_median) && fabs(m - r->prev_median) <= r->set.warmup_tol * r->prev_median) {
    r->warm_done = r->warm_converged = 1;
    return 1;
  }
  r->prev_median = m;
  if (r->warm_n >= r->set.warmup_max || r->warm_s >= r->set.warmup_share * r->set.budget_s) {
    r->warm_done = 1;
    return 1;
  }
  /* A longer window has a steadier median, so a noisy but stationary operation converges
   * instead of running into the cap. */
  if (r->window < 4096)
    r->window *= 2;
  size_t left = r->set.warmup_max - r->warm_n;
  if (r->window > left)
    r->window = left;
  return 0;
}

size_t rep_batch(rep_state *r) {
  double need = r->set.batch_factor * r->set.timer_cost_ns;
  double t = r->warm_median;
  if (!(t > 0))
    t = 1e-3;
  r->batch = t >= need ? 1 : (size_t)ceil(need / t);
  if (r->batch > (1u << 20))
    r->batch = 1u << 20;
  return r->batch;
}

size_t rep_next_chunk(const rep_state *r) {
  const rep_settings *s = &r->set;
  size_t n = r->n, c;
  if (n < s->min_count) {
    c = s->min_count - n;
  } else if (isnan(r->summary.ci_rel)) {
    c = n;
  } else {
    /* The CI's width shrinks as 1/sqrt(n): aim a little past the predicted need. */
    double ratio = r->summary.ci_rel / s->precision;
    double need = (double)n * ratio * ratio * 1.2;
    double lo = fmax(8.0, (double)n / 4.0), hi = (double)n;
    double want = need - (double)n;
    c = (size_t)fmin(fmax(want, lo), hi);
  }
  if (n + c > s->max_count)
    c = s->max_count > n ? s->max_count - n : 1;
  double per = r->summary.median;
  if (!(per > 0))
    per = r->warm_median;
  if (n >= s->min_count && per > 0) {
    double left = s->budget_s - r->warm_s - r->elapsed_s;
    double fit = left / (per * (double)r->batch * 1e-9);
    if (fit < (double)c)
      c = fit < 1.0 ? 1 : (size_t)fit;
  }
  return c ? c : 1;
}

rep_stop rep_feed(rep_state *r, const double *ns, size_t n, double seconds) {
  if (r->n + n > r->cap) {
    size_t cap = r->cap;
    while (cap < r->n + n)
      cap *= 2;
    double *a = realloc(r->samples, cap * sizeof(double));
    if (a)
      r->samples = a;
    double *b = realloc(r->work, cap * sizeof(double));
    if (b)
      r->work = b;
    if (!a || !b)
      return r->stop = REP_MAX_COUNT;
    r->cap = cap;
  }
  memcpy(r->samples + r->n, ns, n * sizeof *ns);
  r->n += n;
  r->elapsed_s += seconds;
  memcpy(r->work, r->samples, r->n * sizeof(double));
  stats_summarise(r->work, r->n, &r->summary);
  const rep_settings *s = &r->set;
  if (r->n >= s->min_count && r->summary.ci_rel <= s->precision)
    r->stop = REP_PRECISION;
  else if (r->n >= s->max_count)
    r->stop = REP_MAX_COUNT;
  else if (r->n >= s->min_count && r->warm_s + r->elapsed_s >= s->budget_s)
    r->stop = REP_BUDGET;
  else
    r->stop = REP_CONTINUE;
  return r->stop;
}

const char *rep_stop_name(rep_stop s) {
  switch (s) {
  case REP_PRECISION:
    return "precision";
  case REP_BUDGET:
    return "budget";
  case REP_MAX_COUNT:
    return "max_count";
  default:
    return "continue";
  }
}
