/* Unit tests of the MPI-free core: statistics, the median's confidence interval, the
 * adaptive repetition logic driven by a fake timer and synthetic samples of known median,
 * timers, size lists, patterns and the JSON writer. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../core/json.h"
#include "../core/pairing.h"
#include "../core/pattern.h"
#include "../core/refs.h"
#include "../core/rep.h"
#include "../core/reservoir.h"
#include "../core/sizes.h"
#include "../core/stats.h"
#include "../core/timer.h"
#include "../core/warm.h"
#include "../core/window.h"
#include "../options.h"
#include "unit.h"

/* xorshift64* and Box-Muller: reproducible synthetic samples */
static uint64_t rng = 88172645463325252ull;
static double uniform(void) {
  rng ^= rng >> 12;
  rng ^= rng << 25;
  rng ^= rng >> 27;
  return ((rng * 2685821657736338717ull) >> 11) * (1.0 / 9007199254740992.0);
}
static double normal(void) {
  double u = uniform(), v = uniform();
  return sqrt(-2.0 * log(u + 1e-300)) * cos(2 * M_PI * v);
}

static void test_quantiles(void) {
  double x[100];
  for (int i = 0; i < 100; i++)
    x[i] = 100 - i; /* unsorted on purpose */
  stats_summary s;
  stats_summarise(x, 100, &s);
  CHECK(s.median == 50.5, "median %g", s.median);
  CHECK(fabs(s.p25 - 25.75) < 1e-12, "p25 %g (type 7)", s.p25);
  CHECK(fabs(s.p99 - 99.01) < 1e-9, "p99 %g", s.p99);
  CHECK(s.min == 1 && s.max == 100, "min %g max %g", s.min, s.max);
  CHECK(fabs(s.mean - 50.5) < 1e-12, "mean %g", s.mean);
  CHECK(fabs(s.sd - 29.011491975882016) < 1e-9, "sd %g", s.sd);
  stats_summarise(x, 0, &s);
  CHECK(isnan(s.median) && s.n == 0, "empty sample gives NaN");
}

static void test_median_ci(void) {
  size_t j, k;
  CHECK(!stats_median_ci_ranks(5, &j, &k), "no 95%% CI from 5 samples");
  CHECK(stats_median_ci_ranks(6, &j, &k) && j == 1 && k == 6, "n=6: %zu..%zu", j, k);
  /* Le Boudec's table for n = 20: order statistics 6 and 15 */
  CHECK(stats_median_ci_ranks(20, &j, &k) && j == 6 && k == 15, "n=20: %zu..%zu", j, k);
  CHECK(stats_median_ci_ranks(1001, &j, &k) && j == 469 && k == 533, "n=1001: %zu..%zu", j, k);
  /* Coverage: the interval must contain the true median (0.5 of U(0,1)) about 95 % of the
   * time, never less.  The exact ranks over-cover a little at small n. */
  int sizes[] = {10, 50, 300, 2000};
  for (int si = 0; si < 4; si++) {
    int n = sizes[si], hit = 0, trials = 2000;
    double *x = malloc(sizeof(double) * (size_t)n);
    stats_summary s;
    for (int t = 0; t < trials; t++) {
      for (int i = 0; i < n; i++)
        x[i] = uniform();
      stats_summarise(x, (size_t)n, &s);
      hit += s.ci_lo <= 0.5 && 0.5 <= s.ci_hi;
    }
    double cov = (double)hit / trials;
    CHECK(cov >= 0.935 && cov <= 0.995, "coverage %.3f at n=%d", cov, n);
    free(x);
  }
}

/* The fake timer returns, per read, the duration of the "operation" that just ran, drawn
 * from a lognormal with a known median; an optional warm-up transient decays first. */
typedef struct {
  double median_ns, sigma, transient, decay;
  long reads;
} synth;

static uint64_t synth_step(void *arg) {
  synth *s = arg;
  double t = s->median_ns * exp(s->sigma * normal());
  t *= 1.0 + s->transient * exp(-(double)s->reads / s->decay);
  s->reads++;
  return (uint64_t)llround(t);
}

/* What the engine does for one point, without MPI: chained timestamps, chunks sized by the
 * controller, elapsed time from the same (fake) clock. */
static void drive(rep_state *r, synth *sy) {
  timer_use_fake(synth_step, sy);
  double *buf = NULL;
  size_t cap = 0;
  int warm = 1;
  for (int guard = 0; guard < 100000; guard++) {
    size_t n = warm ? rep_warmup_chunk(r) : rep_next_chunk(r);
    size_t batch = warm ? 1 : r->batch;
    if (n > cap) {
      cap = n;
      buf = realloc(buf, cap * sizeof *buf);
    }
    uint64_t start = timer_now(), prev = start;
    for (size_t i = 0; i < n; i++) {
      uint64_t now = prev;
      for (size_t b = 0; b < batch; b++)
        now = timer_now();
      buf[i] = (double)(now - prev) / (double)batch;
      prev = now;
    }
    double secs = (double)(prev - start) * 1e-9;
    if (warm) {
      if (rep_warmup_feed(r, buf, n, secs)) {
        warm = 0;
        rep_batch(r);
      }
    } else if (rep_feed(r, buf, n, secs) != REP_CONTINUE) {
      break;
    }
  }
  free(buf);
}

static void test_repetition(void) {
  rep_settings set;
  rep_defaults(&set);
  set.timer_cost_ns = 20;

  /* Precision reached: the CI is within 1 % and contains the true median. */
  synth sy = {2000, 0.05, 0, 1, 0};
  rep_state r;
  rep_init(&r, &set);
  drive(&r, &sy);
  CHECK(r.stop == REP_PRECISION, "stop %s", rep_stop_name(r.stop));
  CHECK(r.summary.ci_rel <= 0.01, "ci_rel %g", r.summary.ci_rel);
  CHECK(r.summary.ci_lo <= 2000 && 2000 <= r.summary.ci_hi, "CI %g..%g misses 2000", r.summary.ci_lo, r.summary.ci_hi);
  CHECK(fabs(r.summary.median / 2000 - 1) < 0.01, "median %g", r.summary.median);
  CHECK(r.n >= set.min_count && r.n < 5000, "count %zu", r.n);
  CHECK(r.batch == 1, "batch %zu for a 2 us operation", r.batch);
  rep_free(&r);

  /* Warm-up: a transient of +300 % decaying over ~100 reads must be waited out, and the
   * measured median must not carry it. */
  synth tr = {2000, 0.02, 3.0, 100, 0};
  rep_init(&r, &set);
  drive(&r, &tr);
  CHECK(r.warm_converged, "warm-up did not converge");
  CHECK(r.warm_n >= 200, "warm-up stopped after %zu iterations, inside the transient", r.warm_n);
  CHECK(fabs(r.summary.median / 2000 - 1) < 0.01, "median %g carries the transient", r.summary.median);
  rep_free(&r);

  /* Stationary data converges after two windows: no fixed count is assumed. */
  synth flat = {2000, 0.01, 0, 1, 0};
  rep_init(&r, &set);
  drive(&r, &flat);
  CHECK(r.warm_converged && r.warm_n == 1 + 8 + 16, "flat warm-up took %zu (probe, 8, 16)", r.warm_n);
  rep_free(&r);

  /* A flat 1 ms operation: windows of 2 ms (2 iterations, then 4), not 8 and 16 (24 ms). */
  synth flat_ms = {1e6, 0.01, 0, 1, 0};
  rep_init(&r, &set);
  drive(&r, &flat_ms);
  CHECK(r.warm_converged && r.warm_n == 1 + 2 + 4, "flat 1 ms warm-up took %zu (probe, 2, 4)", r.warm_n);
  rep_free(&r);

  /* Budget: very noisy samples cannot reach 1 % within 5 ms. */
  rep_settings tight = set;
  tight.budget_s = 0.005;
  synth noisy = {2000, 1.5, 0, 1, 0};
  rep_init(&r, &tight);
  drive(&r, &noisy);
  CHECK(r.stop == REP_BUDGET, "stop %s", rep_stop_name(r.stop));
  double spent = r.warm_s + r.elapsed_s;
  /* it stops once the next sample, at the wall time a sample has taken, would end past it */
  CHECK(spent >= 0.0049 && spent < 0.0075, "spent %g s of a 5 ms budget", spent);
  rep_free(&r);
}

/* The budget, the minimum time and count, and batching. */
static void test_repetition_limits(void) {
  rep_settings set;
  rep_defaults(&set);
  set.timer_cost_ns = 20;
  rep_state r;
  double spent;

  /* The budget is a promise: a 50 ms operation under a 120 ms budget with min_count 20
   * stops on the budget, records that min_count and min_time were given up, and does not
   * begin a sample that would end past the budget. */
  rep_settings slow = set;
  slow.budget_s = 0.12;
  slow.min_time_s = 1.0;
  synth slowop = {5e7, 0.01, 0, 1, 0};
  rep_init(&r, &slow);
  drive(&r, &slowop);
  spent = r.warm_s + r.elapsed_s;
  CHECK(r.stop == REP_BUDGET, "slow: stop %s", rep_stop_name(r.stop));
  CHECK(spent <= 0.12, "slow: spent %g s of a 0.12 s budget (a sample that would end past it is not begun)", spent);
  CHECK(r.n >= 1 && r.n < 20, "slow: n %zu", r.n);
  CHECK(r.gave_up & REP_GAVE_MIN_COUNT, "slow: min_count not recorded as given up");
  CHECK(r.gave_up & REP_GAVE_MIN_TIME, "slow: min_time not recorded as given up");
  CHECK(r.gave_up & REP_GAVE_WARMUP, "slow: warm-up cut not recorded");
  CHECK(r.warm_n == 1, "slow: warm-up of %zu iterations; the probe alone fits the share", r.warm_n);
  rep_free(&r);

  /* A test's own floor (STREAM: best of at least 10 trials) outlasts the budget: the same
   * 50 ms operation under the same budget takes exactly 10 samples, then stops on it. */
  rep_settings floored = slow;
  floored.floor_count = 10;
  floored.min_count = 20;
  rep_init(&r, &floored);
  drive(&r, &slowop);
  CHECK(r.stop == REP_BUDGET && r.n == 10, "floor: stop %s after %zu samples, want budget after 10",
        rep_stop_name(r.stop), r.n);
  CHECK(r.warm_s + r.elapsed_s > 0.12, "floor: %g s, past the budget", r.warm_s + r.elapsed_s);
  rep_free(&r);

  /* min_time: a precise 2 us operation keeps measuring until 50 ms have been measured. */
  rep_settings timed = set;
  timed.min_time_s = 0.05;
  synth quick = {2000, 0.01, 0, 1, 0};
  rep_init(&r, &timed);
  drive(&r, &quick);
  CHECK(r.stop == REP_PRECISION && r.elapsed_s >= 0.05 && r.elapsed_s < 0.08, "min_time: stop %s after %g s",
        rep_stop_name(r.stop), r.elapsed_s);
  CHECK(!r.gave_up, "min_time: gave up %d", r.gave_up);
  rep_free(&r);

  /* Maximum count. */
  rep_settings capped = set;
  capped.max_count = 100;
  capped.precision = 1e-5;
  rep_init(&r, &capped);
  synth s2 = {2000, 0.1, 0, 1, 0};
  drive(&r, &s2);
  CHECK(r.stop == REP_MAX_COUNT && r.n == 100, "stop %s n %zu", rep_stop_name(r.stop), r.n);
  rep_free(&r);

  /* Minimum count holds even when the first samples are already precise. */
  rep_settings least = set;
  least.min_count = 500;
  rep_init(&r, &least);
  synth s3 = {2000, 0.001, 0, 1, 0};
  drive(&r, &s3);
  CHECK(r.n >= 500, "n %zu below min_count", r.n);
  rep_free(&r);

  /* Batching: a 100 ns operation with a 20 ns timer is timed 10 at a time, and the
   * per-operation median is still right. */
  synth fast = {100, 0.02, 0, 1, 0};
  rep_init(&r, &set);
  drive(&r, &fast);
  /* 50 timer costs / ~100 ns: 10, or 11 when the warm-up median fell just below 100 ns */
  CHECK(r.batch == 10 || r.batch == 11, "batch %zu", r.batch);
  CHECK(fabs(r.summary.median / 100 - 1) < 0.01, "batched median %g", r.summary.median);
  rep_free(&r);
}

/* Earlier launches (--earlier-launches): parsed per point, and a point whose launches
 * already differ stops once its own error is small beside that spread (rep_target). */
static void test_earlier_launches(void) {
  refs_list L = {0};
  char err[160];
  CHECK(refs_parse(&L, "0=1.5/0.01:1.6/0.02,3=2/0", err, sizeof err) == 0, "parse: %s", err);
  launch_refs *at = refs_by_point(&L, 4, err, sizeof err);
  CHECK(at && at[0].n == 2 && at[0].v[1].median == 1.6 && at[0].v[1].ci_rel == 0.02 && at[3].n == 1 && at[1].n == 0,
        "points by index");
  free(at);
  CHECK(!refs_by_point(&L, 3, err, sizeof err) && strstr(err, "point 3"), "an index beyond the plan: %s", err);
  const char *bad[] = {"x=1/0", "0=1", "0=-1/0.1", "0=1/x", "0=1/0.1;1=2/0", "-1=1/0"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    CHECK(refs_parse(&L, bad[i], err, sizeof err) == -1, "'%s' accepted", bad[i]);
  refs_free(&L);

  /* 10 % noise a sample, 1 % asked: alone, hundreds of samples */
  rep_settings set;
  rep_defaults(&set);
  set.timer_cost_ns = 20;
  synth sy = {20000, 0.10, 0, 1, 0};
  rep_state r;
  rep_init(&r, &set);
  drive(&r, &sy);
  size_t alone = r.n;
  CHECK(r.stop == REP_PRECISION && alone > 300 && rep_target(&r) == 0.01, "alone: n %zu", alone);
  rep_free(&r);

  /* launches before at 1.3x and 0.75x the median (1 % each): they differ by ~27 %, so this
   * launch's own error may be ~13 %: it stops within a few dozen samples */
  const launch_ref far[] = {{26000, 0.01}, {15000, 0.01}}, agreeing[] = {{20000, 0.01}, {20000, 0.01}},
                   vague[] = {{26000, 2.0}, {15000, 2.0}}, far_us[] = {{26, 0.01}, {15, 0.01}};
  rep_settings spread = set;
  spread.earlier = (launch_refs){2, far};
  rep_init(&r, &spread);
  drive(&r, &sy);
  double t = rep_target(&r);
  CHECK(r.stop == REP_PRECISION && r.n < 150, "spread: n %zu against %zu alone", r.n, alone);
  CHECK(t > 0.2 && t <= REP_TARGET_CAP, "spread: target %g (1.96 x 0.5 x ~0.27)", t);
  CHECK(r.summary.ci_rel <= t, "spread: stopped at %g above its target %g", r.summary.ci_rel, t);
  rep_free(&r);

  /* launches that agree leave the asked precision as it is */
  rep_settings agree = set;
  agree.earlier = (launch_refs){2, agreeing};
  rep_init(&r, &agree);
  drive(&r, &sy);
  CHECK(r.n > 300 && rep_target(&r) < 0.02, "agree: n %zu, target %g", r.n, rep_target(&r));
  rep_free(&r);

  /* a spread that the launches' own errors explain is no spread */
  rep_settings own = set;
  own.earlier = (launch_refs){2, vague};
  rep_init(&r, &own);
  drive(&r, &sy);
  CHECK(rep_target(&r) == 0.01 && r.n > 300, "vague: target %g, n %zu", rep_target(&r), r.n);
  rep_free(&r);

  /* the medians' unit is converted: the same launches in us, the samples in ns */
  rep_settings scaled = set;
  scaled.earlier = (launch_refs){2, far_us};
  scaled.ref_scale = 1e3;
  rep_init(&r, &scaled);
  drive(&r, &sy);
  CHECK(rep_target(&r) > 0.2, "scaled: target %g", rep_target(&r));
  rep_free(&r);
}

static void test_timers(void) {
  timer_info ti[TIMER_COUNT];
  timer_probe(ti);
  CHECK(ti[TIMER_CLOCK].available, "clock_gettime unavailable");
  CHECK(ti[TIMER_CLOCK].overhead_ns > 0 && ti[TIMER_CLOCK].overhead_ns < 10000, "clock overhead %g ns",
        ti[TIMER_CLOCK].overhead_ns);
  CHECK(!ti[TIMER_MPI].available, "MPI_Wtime without MPI");
  timer_kind best = timer_best(ti);
  CHECK(ti[best].available, "best timer %s unavailable", ti[best].name);
  CHECK(timer_by_name("tsc") == TIMER_TSC && timer_by_name("nope") == TIMER_COUNT, "timer names");
  if (ti[TIMER_TSC].available) {
    /* The calibrated TSC must agree with CLOCK_MONOTONIC_RAW over an independent 50 ms. */
    uint64_t c0 = timer_read_kind(TIMER_CLOCK), t0 = timer_read_kind(TIMER_TSC), c1;
    do
      c1 = timer_read_kind(TIMER_CLOCK);
    while (c1 - c0 < 50000000ull);
    uint64_t t1 = timer_read_kind(TIMER_TSC);
    double tsc_ns = (double)(t1 - t0) * ti[TIMER_TSC].tick_ns;
    CHECK(fabs(tsc_ns / (double)(c1 - c0) - 1) < 0.002, "TSC %g ns vs clock %g ns", tsc_ns, (double)(c1 - c0));
    CHECK(ti[TIMER_TSC].overhead_ns > 0 && ti[TIMER_TSC].overhead_ns < 1000, "TSC overhead %g",
          ti[TIMER_TSC].overhead_ns);
  }
}

static void test_sizes(const char *vectors) {
  FILE *f = fopen(vectors, "r");
  CHECK(f != NULL, "cannot open %s", vectors);
  if (!f)
    return;
  char line[1024];
  int cases = 0;
  while (fgets(line, sizeof line, f)) {
    if (line[0] == '#')
      continue;
    line[strcspn(line, "\n")] = 0;
    char *tab = strchr(line, '\t');
    if (!tab)
      continue;
    *tab = 0;
    const char *spec = line, *want = tab + 1;
    unsigned long long out[SIZES_MAX_COUNT];
    char err[256] = "";
    long n = sizes_parse(spec, out, SIZES_MAX_COUNT, err, sizeof err);
    cases++;
    if (strcmp(want, "error") == 0) {
      CHECK(n < 0 && err[0], "'%s' should be refused", spec);
      continue;
    }
    char got[1024] = "";
    for (long i = 0; i < n; i++) {
      char b[32];
      snprintf(b, sizeof b, "%s%llu", i ? "," : "", out[i]);
      strcat(got, b);
    }
    CHECK(n >= 0 && strcmp(got, want) == 0, "'%s' -> '%s' (%s), want '%s'", spec, got, err, want);
  }
  fclose(f);
  CHECK(cases >= 20, "only %d size vectors", cases);
}

/* The summaries of tests/data/stats_vectors.txt, which the front end's analysis/stats.py is held
 * to as well (tests/test_stats.py): one implementation a side, one truth (issue 42). */
static int same(double got, double want) {
  if (isnan(want))
    return isnan(got);
  return fabs(got - want) <= 1e-12 * fmax(1.0, fabs(want));
}

static void test_stats_vectors(const char *vectors) {
  FILE *f = fopen(vectors, "r");
  CHECK(f != NULL, "cannot open %s", vectors);
  if (!f)
    return;
  char *line = NULL;
  size_t cap = 0;
  int cases = 0;
  while (getline(&line, &cap, f) > 0) {
    if (line[0] == '#')
      continue;
    char *name = strtok(line, "\t"), *samples = strtok(NULL, "\t"), *want = strtok(NULL, "\n");
    if (!name || !samples || !want)
      continue;
    double *x = malloc(sizeof *x * (strlen(samples) / 2 + 1));
    size_t n = 0;
    if (strcmp(samples, "-") != 0)
      for (char *v = strtok(samples, ","); v; v = strtok(NULL, ","))
        x[n++] = strtod(v, NULL);
    double w[14];
    char *at = want;
    for (int i = 0; i < 14; i++)
      w[i] = strtod(at, &at);
    stats_summary s;
    stats_summarise(x, n, &s);
    double g[14] = {(double)s.n, s.min, s.max, s.mean, s.sd,    s.median, s.p5,
                    s.p25,       s.p75, s.p95, s.p99,  s.ci_lo, s.ci_hi,  s.ci_rel};
    static const char *const field[14] = {"n",   "min", "max", "mean", "sd",    "median", "p5",
                                          "p25", "p75", "p95", "p99",  "ci_lo", "ci_hi",  "ci_rel"};
    for (int i = 0; i < 14; i++)
      CHECK(same(g[i], w[i]), "stats vector '%s': %s = %.17g, want %.17g", name, field[i], g[i], w[i]);
    free(x);
    cases++;
  }
  free(line);
  fclose(f);
  CHECK(cases >= 10, "only %d stats vectors", cases);
}

static void test_pattern(void) {
  unsigned char b[4099];
  pattern_fill(b, sizeof b, 42, 3);
  size_t first = 0;
  CHECK(pattern_check(b, sizeof b, 42, 3, &first) == 0, "clean pattern flagged");
  b[4000] ^= 1;
  CHECK(pattern_check(b, sizeof b, 42, 3, &first) == 1 && first == 4000, "flip at 4000 -> first %zu", first);
  CHECK(pattern_check(b, sizeof b, 43, 3, NULL) > 4000, "another seed must not match");
  CHECK(pattern_check(b, sizeof b, 42, 4, NULL) > 4000, "another source must not match");
  unsigned char z[4096] = {0};
  CHECK(pattern_check(z, sizeof z, 42, 3, NULL) > 4000, "zeros must not match");
  /* filled and checked a word at a time, the pattern is still the one byte_at defines */
  pattern_fill(b, sizeof b, 7, 1);
  size_t differ = 0;
  for (size_t i = 0; i < sizeof b; i++)
    differ += b[i] != pattern_byte(7, 1, i);
  CHECK(differ == 0, "word-wise fill differs from pattern_byte at %zu bytes", differ);
  /* a slice at an offset off the word boundary, two bad bytes in one word and one in the tail */
  CHECK(pattern_check_at(b + 13, 4000, 7, 1, 13, &first) == 0, "clean slice at offset 13 flagged");
  b[13 + 17] ^= 4;
  b[13 + 18] ^= 4;
  b[13 + 3998] ^= 4;
  CHECK(pattern_check_at(b + 13, 4000, 7, 1, 13, &first) == 3 && first == 17, "3 bad from 17, got first %zu", first);
  CHECK(pattern_check_at(b + 13, 5, 7, 1, 13, &first) == 0, "a slice inside the first word is clean");
}

static void test_json(void) {
  json_w w;
  jw_init(&w);
  jw_obj_begin(&w);
  jw_kstr(&w, "s", "a\"b\\c\n\x01");
  jw_knum(&w, "nan", NAN);
  jw_knum(&w, "inf", INFINITY);
  jw_knum(&w, "x", 1.5);
  jw_key(&w, "a");
  jw_arr_begin(&w);
  jw_int(&w, 1);
  jw_bool(&w, 0);
  jw_null(&w);
  jw_arr_end(&w);
  jw_obj_end(&w);
  const char *want = "{\"s\":\"a\\\"b\\\\c\\n\\u0001\",\"nan\":null,\"inf\":null,\"x\":1.5,\"a\":[1,false,null]}";
  CHECK(strcmp(w.buf, want) == 0, "got %s", w.buf);
  /* numbers read back bit for bit: the largest exact integer, a byte count above 10^9 that
   * %.9g rounded (node.stream's 12,079,595,520), and fractions of every kind */
  const double exact[] = {
      9007199254740991.0,     12079595520.0, 0.1, 1.0 / 3.0, 2.0 / 3.0 * 1e-9, 123456.789012345678, 5e-324,
      1.7976931348623157e308, -2.5};
  for (size_t i = 0; i < sizeof exact / sizeof *exact; i++) {
    jw_reset(&w);
    jw_num(&w, exact[i]);
    CHECK(strtod(w.buf, NULL) == exact[i], "%.17g written as %s does not read back", exact[i], w.buf);
  }
  jw_reset(&w);
  jw_num(&w, 9007199254740991.0);
  CHECK(strcmp(w.buf, "9007199254740991") == 0, "2^53-1 as an integer, got %s", w.buf);
  jw_reset(&w);
  jw_num(&w, 12079595520.0);
  CHECK(strcmp(w.buf, "12079595520") == 0, "a large byte count as an integer, got %s", w.buf);
  jw_reset(&w);
  jw_num(&w, 0.1);
  CHECK(strcmp(w.buf, "0.1") == 0, "the shortest form, got %s", w.buf);
  jw_free(&w);
}

/* The window rules: values computed by hand from the rules' definitions. */
static void test_window_rules(void) {
  CHECK(window_late_ns(100) == 500, "late bound floor 0.5 us");
  CHECK(window_late_ns(500) == 2000, "late bound 4x the clock error");
  CHECK(window_initial_ns(500, 1000) == 6000, "2 us floor + 4 late bounds");
  CHECK(window_initial_ns(10000, 2000) == 38000, "3x warm median + 4 late bounds");
  CHECK(window_floor_ns(10000, 1000) == 17000, "1.5x warm median + 2 late bounds");
  CHECK(window_next_ns(1e4, 100, 75, 5e3, 1e9) == 1e4, "25 %% late: keep");
  CHECK(window_next_ns(1e4, 100, 74, 5e3, 1e9) == 2e4, "26 %% late: double");
  CHECK(window_next_ns(1e4, 100, 97, 5e3, 1e9) == 1e4, "3 %% late: keep");
  CHECK(window_next_ns(1e4, 100, 98, 5e3, 1e9) == 5e3, "2 %% late or fewer: halve");
  CHECK(window_next_ns(1.2e4, 100, 100, 1e4, 1e9) == 1e4, "... down to the floor");
  CHECK(window_next_ns(1e4, 10, 10, 5e3, 1e9) == 1e4, "too few repetitions to judge: keep");
  CHECK(window_next_ns(1e4, 19, 0, 5e3, 1e9) == 1e4, "... even all late (one descheduled rank)");
  CHECK(window_next_ns(2e9, 100, 0, 5e3, 1e9) == 2e9, "never past 1 s");
  CHECK(window_next_ns(1e4, 0, 0, 5e3, 1e9) == 1e4, "an empty chunk says nothing");
  /* the budget bounds the window: 0.05 s gives 3.125 ms, unless the operation needs more */
  double top = window_ceiling_ns(0.05, 32e3);
  CHECK(top == 3.125e6, "a 0.05 s budget: windows up to 3.125 ms, got %g", top);
  CHECK(window_ceiling_ns(0.05, 1e6) == 8e6, "a 1 ms operation keeps room for eight initial windows");
  CHECK(window_ceiling_ns(100, 1e4) == 1e9, "never past 1 s");
  CHECK(window_next_ns(2e6, 100, 0, 5e3, top) == top, "doubling stops at the ceiling");
  CHECK(window_next_ns(top, 100, 0, 5e3, top) == top, "... and stays there");
  double w = 32e3;
  for (int i = 0; i < 40; i++) /* every repetition late, chunk after chunk (a loaded machine) */
    w = window_next_ns(w, 100, 0, 5e3, top);
  CHECK(w == top, "all late for 40 chunks: %g ns, not past the ceiling", w);
  CHECK(window_lead_ns(10000) == 50000 && window_lead_ns(3e5) == 6e5, "lead: 2 windows, >= 50 us");
  CHECK(!window_give_up(3.9, 1, 100), "within 4 budgets: go on");
  CHECK(window_give_up(4.1, 1, 6) && !window_give_up(4.1, 1, 5), "4 budgets and 6 samples: stop");
  CHECK(!window_give_up(29.9, 1, 0) && window_give_up(30.1, 1, 0), "20 budgets + 10 s: stop anyway");
}

/* Every option's default passes its own check; ranges hold at their ends and refuse past them. */
static void test_options(void) {
  char err[256];
  opt_value v;
  for (int i = 1; i < OPT_COUNT; i++) {
    const opt_spec *o = &opt_table[i];
    CHECK(o->name && o->help && *o->help, "option %d lacks a name or help", i);
    if (o->def) {
      memset(&v, 0, sizeof v);
      CHECK(opt_check((opt_id)i, o->def, &v, err, sizeof err) == 0, "--%s default: %s", o->name, err);
    }
    for (int j = 1; j < i; j++)
      CHECK(strcmp(o->name, opt_table[j].name) != 0, "--%s twice", o->name);
  }
  struct {
    opt_id id;
    const char *text;
    int ok;
  } cases[] = {
      {OPT_WARMUP_MAX, "1", 0},
      {OPT_WARMUP_MAX, "2", 1},
      {OPT_BUDGET, "inf", 0},
      {OPT_BUDGET, "0.0001", 0},
      {OPT_BUDGET, "100000", 0},
      {OPT_BUDGET, "86400", 1},
      {OPT_PRECISION, "0", 0},
      {OPT_PRECISION, "1", 1},
      {OPT_PRECISION, "nan", 0},
      {OPT_MIN_COUNT, "2.5", 0},
      {OPT_SEED, "abc", 0},
      {OPT_SEED, "-1", 0},
      {OPT_TIMING, "windows", 0},
      {OPT_TIMING, "barrier", 1},
      {OPT_PROCS, "abc", 0},
      {OPT_PROCS, "2,4", 1},
      {OPT_PROCS, "2,", 0},
      {OPT_PROCS, "pow2", 1},
      {OPT_PROCS, "0", 0},
      {OPT_TIMER, "mpi_wtime", 1},
      {OPT_SYNC_SPAN, "61", 0},
      {OPT_SEED, "9007199254740992", 1},
      {OPT_SEED, "9007199254740993", 0},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    memset(&v, 0, sizeof v);
    int ok = opt_check(cases[i].id, cases[i].text, &v, err, sizeof err) == 0;
    CHECK(ok == cases[i].ok, "--%s %s: %s", opt_table[cases[i].id].name, cases[i].text, ok ? "accepted" : err);
  }
  memset(&v, 0, sizeof v);
  opt_check(OPT_BUDGET, "2.5", &v, err, sizeof err);
  CHECK(v.num == 2.5, "parsed value %g", v.num);
}

/* Every pair exactly once per sweep, no rank twice in a step, slots numbered 0..pairs-1 and
 * shared by the two ranks of a pair, for odd and even counts and several seeds. */
static void test_pairing(void) {
  CHECK(pairing_steps(1) == 0 && pairing_steps(2) == 1 && pairing_steps(7) == 7 && pairing_steps(8) == 7, "steps");
  for (int n = 2; n <= 13; n++)
    for (uint64_t seed = 1; seed <= 3; seed++) {
      pairing p;
      CHECK(pairing_init(&p, n, seed * 7919) == 0, "init n=%d", n);
      int *met = calloc((size_t)(n * n), sizeof(int)), bad = 0;
      for (int s = 0; s < pairing_steps(n); s++) {
        int *slots = calloc((size_t)pairing_pairs_per_step(n), sizeof(int)), out = 0;
        for (int r = 0; r < n; r++) {
          int q = pairing_partner(&p, s, r), k = pairing_slot(&p, s, r);
          if (q < 0) {
            out++;
            bad += k != -1;
            continue;
          }
          bad += q == r || q >= n || pairing_partner(&p, s, q) != r || k != pairing_slot(&p, s, q);
          bad += k < 0 || k >= pairing_pairs_per_step(n);
          if (k >= 0 && k < pairing_pairs_per_step(n))
            slots[k]++;
          met[r * n + q]++;
        }
        for (int k = 0; k < pairing_pairs_per_step(n); k++)
          bad += slots[k] != 2; /* each slot one pair: its two ranks */
        bad += out != n % 2;    /* one rank sits out a step when n is odd, none when even */
        free(slots);
      }
      for (int a = 0; a < n; a++)
        for (int b = 0; b < n; b++)
          bad += met[a * n + b] != (a != b);
      CHECK(!bad, "n=%d seed=%llu: %d faults in the schedule", n, (unsigned long long)seed, bad);
      free(met);
      pairing_free(&p);
    }
  pairing a, b;
  pairing_init(&a, 8, 1);
  pairing_init(&b, 8, 2);
  int differ = 0;
  for (int r = 0; r < 8; r++)
    differ += pairing_partner(&a, 0, r) != pairing_partner(&b, 0, r);
  CHECK(differ > 0, "another seed pairs the ranks otherwise");
  pairing_free(&a);
  pairing_free(&b);
}

/* The reservoir keeps every value while there is room, then `cap` of them, each offer kept with
 * probability cap / n: the kept values of 1..100000 have a mean near 50000 and span the stream. */
static void test_reservoir(void) {
  double keep[1000];
  reservoir r = {keep, 1000, 0, 0, 42};
  for (int v = 1; v <= 500; v++)
    reservoir_offer(&r, v);
  CHECK(r.kept == 500 && keep[0] == 1 && keep[499] == 500, "room for all: %ld kept", r.kept);
  for (int v = 501; v <= 100000; v++)
    reservoir_offer(&r, v);
  double sum = 0, lo = 1e9, hi = 0;
  for (long i = 0; i < r.kept; i++) {
    sum += keep[i];
    lo = keep[i] < lo ? keep[i] : lo;
    hi = keep[i] > hi ? keep[i] : hi;
  }
  /* the mean of 1000 uniform draws from 1..100000: sd 28868 / sqrt(1000) = 913; within 4 sd */
  CHECK(r.kept == 1000 && r.seen == 100000, "kept %ld of %ld", r.kept, r.seen);
  CHECK(fabs(sum / 1000 - 50000.5) < 3652, "mean %g", sum / 1000);
  CHECK(lo < 1000 && hi > 99000, "span %g..%g", lo, hi);
}

/* A fake clock for warm_spin: each read advances it by `step` seconds; until `slow_until`
 * the fake rank loses its core every other 3.5 ms (a read then takes three steps), so slices
 * read it unevenly, as a rank the launcher's processes still take turns with. */
static double fake_t, fake_step, fake_slow_until;
static double fake_now(void) {
  int away = fake_t < fake_slow_until && (long)(fake_t / 0.0035) % 2 == 0;
  fake_t += away ? 3 * fake_step : fake_step;
  return fake_t;
}

static void test_warm_spin(void) {
  fake_t = 0, fake_step = 1e-6, fake_slow_until = 0;
  double spun = warm_spin(0.2, fake_now);
  CHECK(spun > (WARM_STEADY - 0.5) * WARM_SLICE_S && spun < (WARM_STEADY + 1) * WARM_SLICE_S,
        "a steady core: %g s, the %d slices that show it", spun, WARM_STEADY);
  fake_t = 0, fake_slow_until = 0.05;
  spun = warm_spin(0.2, fake_now);
  CHECK(spun > 0.05 + (WARM_STEADY - 1) * WARM_SLICE_S && spun < 0.05 + (WARM_STEADY + 2) * WARM_SLICE_S,
        "a core lost by turns for 50 ms: %g s, until it has run steadily since", spun);
  fake_t = 0, fake_slow_until = 1;
  spun = warm_spin(0.02, fake_now);
  CHECK(spun >= 0.02 && spun < 0.02 + WARM_SLICE_S + 1e-5, "never past the cap: %g s", spun);
  fake_t = 0, fake_slow_until = 0;
  CHECK(warm_spin(0, fake_now) == 0, "--warm 0: no spin");
}

int main(int argc, char **argv) {
  test_warm_spin();
  test_window_rules();
  test_options();
  test_quantiles();
  test_median_ci();
  test_repetition();
  test_repetition_limits();
  test_earlier_launches();
  test_timers();
  test_sizes(argc > 1 ? argv[1] : "../tests/data/sizes_vectors.txt");
  test_stats_vectors(argc > 2 ? argv[2] : "../tests/data/stats_vectors.txt");
  test_pattern();
  test_pairing();
  test_reservoir();
  test_json();
  return unit_finish("engine core");
}
