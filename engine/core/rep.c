#include "rep.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* seconds a warm-up window spans at least, before its doubling */
#define WARM_WINDOW_S 0.002

double rep_target(const rep_state *r) {
  const rep_settings *s = &r->set;
  const launch_refs *e = &s->earlier;
  double m = r->summary.median, c = r->summary.ci_rel;
  if (e->n < 1 || !(m > 0) || !(s->ref_scale > 0) || isnan(c))
    return s->precision;
  /* logs of the launch medians (this one's running median last) and their own variances,
   * a 95 % half-width being 1.96 sd */
  int k = e->n + 1;
  double x = log(m / s->ref_scale), sum = x, own = (c / 1.96) * (c / 1.96);
  for (int j = 0; j < e->n; j++) {
    sum += log(e->v[j].median);
    own += (e->v[j].ci_rel / 1.96) * (e->v[j].ci_rel / 1.96);
  }
  double mean = sum / k, ss = (x - mean) * (x - mean);
  for (int j = 0; j < e->n; j++)
    ss += (log(e->v[j].median) - mean) * (log(e->v[j].median) - mean);
  double between = ss / (k - 1) - own / k;
  if (!(between > 0))
    return s->precision;
  return fmax(s->precision, fmin(REP_TARGET_CAP, 1.96 * REP_RELAX * sqrt(between)));
}

void rep_defaults(rep_settings *s) {
  s->precision = 0.01;
  s->budget_s = 1.0;
  s->warmup_share = 0.25;
  s->warmup_max = 20000;
  s->warmup_tol = 0.05;
  s->min_count = 20;
  s->max_count = 200000;
  s->floor_count = 0;
  s->min_time_s = 0.0;
  s->timer_cost_ns = 0.0;
  s->batch_factor = 50.0;
  s->earlier = (launch_refs){0};
  s->ref_scale = 1.0;
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
  return r->probed ? r->window : 1;
}

/* Warm-up cut short, unconverged: by its count cap, or (recorded) by the budget. */
static int rep_warmup_end(rep_state *r, int by_budget) {
  r->warm_done = 1;
  if (by_budget)
    r->gave_up |= REP_GAVE_WARMUP;
  return 1;
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
  double share = r->set.warmup_share * r->set.budget_s;
  if (!r->probed) {
    /* The probe is cold: it sizes the first window, it is not compared with it.  An operation
     * of milliseconds is warm after a few (OSU skips 2 at large sizes): a window then spans
     * about WARM_WINDOW_S, never fewer than 2 iterations, so comparing two medians stays
     * possible. */
    r->probed = 1;
    double fits = m > 0 ? WARM_WINDOW_S / (m * 1e-9) : (double)r->window;
    if (fits < (double)r->window)
      r->window = fits < 2.0 ? 2 : (size_t)fits;
  } else if (!isnan(r->prev_median) && fabs(m - r->prev_median) <= r->set.warmup_tol * r->prev_median) {
    r->warm_done = r->warm_converged = 1;
    return 1;
  } else {
    r->prev_median = m;
    /* A longer window has a steadier median, so a noisy but stationary operation converges
     * instead of running into the cap. */
    if (r->window < 4096)
      r->window *= 2;
  }
  if (r->warm_s >= share)
    return rep_warmup_end(r, 1);
  if (r->warm_n >= r->set.warmup_max)
    return rep_warmup_end(r, 0);
  size_t left = r->set.warmup_max - r->warm_n;
  if (left < 2)
    return rep_warmup_end(r, 0);
  if (r->window > left)
    r->window = left;
  /* The next window must fit in what is left of the warm-up's share of the budget. */
  double fit = m > 0 ? (share - r->warm_s) / (m * 1e-9) : (double)r->window;
  if (fit < (double)r->window)
    r->window = fit < 2.0 ? 0 : (size_t)fit;
  if (r->window < 2)
    return rep_warmup_end(r, 1);
  return 0;
}

void rep_warm_from(rep_state *r, double ns) {
  r->probed = 1;
  r->warm_median = ns;
  rep_warmup_end(r, 1);
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

/* Seconds of measurement that count towards min_time: never more than the budget leaves. */
static double min_time_due(const rep_state *r) {
  return fmin(r->set.min_time_s, r->set.budget_s - r->warm_s);
}

double rep_sample_seconds(const rep_state *r) {
  /* Once samples are measured, what each took on the wall: a window-timed collective's sample
   * costs its window and its share of the gathers, 3 to 6 times its median, and sizing chunks
   * by the median ran min_time's last chunk up to 3 times past it (bench/sweep.py). */
  if (r->n > 0 && r->elapsed_s > 0)
    return r->elapsed_s / (double)r->n;
  double per = r->summary.median > 0 ? r->summary.median : r->warm_median;
  return per > 0 ? per * (double)r->batch * 1e-9 : 0;
}

size_t rep_next_chunk(const rep_state *r) {
  const rep_settings *s = &r->set;
  size_t n = r->n, c;
  double sample_s = rep_sample_seconds(r), target = rep_target(r);
  if (n < s->min_count) {
    c = s->min_count - n;
  } else if (isnan(r->summary.ci_rel)) {
    c = n;
  } else if (r->summary.ci_rel <= target) {
    /* Precise already, short of min_time: measure the time that is missing. */
    double want = sample_s > 0 ? (min_time_due(r) - r->elapsed_s) / sample_s * 1.05 : (double)n;
    c = (size_t)fmin(fmax(want, 8.0), 4.0 * (double)n + 64.0);
  } else {
    /* The CI's width shrinks as 1/sqrt(n): aim at the predicted need, growing by at most half
     * of what there is.  A distribution-free interval of the median jumps with the order
     * statistics it lands on, so a prediction from a wide early interval overshoots: aiming
     * past it, or doubling, ran 2 to 3 times the samples a 1 % point needed (bench/sweep.py). */
    double ratio = r->summary.ci_rel / target;
    double need = (double)n * ratio * ratio;
    double lo = fmax(8.0, (double)n / 4.0), hi = (double)n / 2.0;
    double want = need - (double)n;
    c = (size_t)fmin(fmax(want, lo), hi);
  }
  if (n + c > s->max_count)
    c = s->max_count > n ? s->max_count - n : 1;
  if (sample_s > 0) {
    /* The budget is a promise: even the minimum count yields to it. */
    double fit = (s->budget_s - r->warm_s - r->elapsed_s) / sample_s;
    if (fit < (double)c)
      c = fit < 1.0 ? 1 : (size_t)fit;
    if (n + c < s->floor_count) /* ... but not a test's own floor */
      c = s->floor_count - n;
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
  double spent = r->warm_s + r->elapsed_s;
  int timed = r->elapsed_s >= min_time_due(r);
  if (r->n >= s->min_count && timed && r->summary.ci_rel <= rep_target(r))
    r->stop = REP_PRECISION;
  else if (r->n >= s->max_count)
    r->stop = REP_MAX_COUNT;
  else if (r->n >= s->floor_count && (spent >= s->budget_s || spent + rep_sample_seconds(r) > s->budget_s))
    r->stop = REP_BUDGET; /* a sample that would end past the budget is not begun */
  else
    r->stop = REP_CONTINUE;
  if (r->stop == REP_BUDGET && r->n < s->min_count)
    r->gave_up |= REP_GAVE_MIN_COUNT;
  if (r->stop != REP_CONTINUE && r->elapsed_s < s->min_time_s && r->stop != REP_MAX_COUNT)
    r->gave_up |= REP_GAVE_MIN_TIME;
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

const char *rep_gave_up_name(int bit) {
  switch (bit) {
  case REP_GAVE_MIN_COUNT:
    return "min_count";
  case REP_GAVE_MIN_TIME:
    return "min_time";
  case REP_GAVE_WARMUP:
    return "warmup";
  case REP_GAVE_WINDOW:
    return "window";
  case REP_GAVE_STREAM_WINDOW:
    return "stream_window";
  default:
    return "?";
  }
}
