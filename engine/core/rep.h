/* Adaptive repetition: the decision logic only, fed with per-iteration times, so it can be
 * driven by synthetic samples in unit tests.  The engine runs iterations in chunks, feeds
 * each chunk's samples (slowest rank per iteration) here, and asks what to do next.
 *
 * Warm-up: one probe iteration (so a slow operation's cost is known before a window of
 * them is committed), then windows of iterations until two successive window medians agree
 * within warmup_tol (window length doubling while they do not), capped in count and in share
 * of the point's time budget.  Measurement: until the 95 % CI of the median is within
 * +/- precision and at least min_time has been measured, the budget runs out, or max_count
 * is reached.  The budget is a promise: min_count and min_time yield to it, a sample that
 * would end past it is not begun, and what was given up is recorded (rep_state.gave_up). */
#ifndef SCOPE_REP_H
#define SCOPE_REP_H
#include <stddef.h>

#include "refs.h"
#include "stats.h"

typedef struct {
  double precision;    /* target relative half-width of the median's CI, e.g. 0.01 */
  double budget_s;     /* time budget of one point, warm-up included */
  double warmup_share; /* at most this share of the budget goes to warm-up */
  size_t warmup_max;   /* at most this many warm-up iterations */
  double warmup_tol;   /* window medians agreeing within this relative tolerance = stable */
  size_t min_count, max_count;
  size_t floor_count;   /* samples taken whatever the budget (a test's own rule); 0: none */
  double min_time_s;    /* measured seconds at least (within the budget), so a point spans
                           more than one scheduler tick */
  double timer_cost_ns; /* resolution + overhead of the timer in use */
  double batch_factor;  /* a timed sample must last at least this many timer costs */
  launch_refs earlier;  /* this point's launches before this one, if any (rep_target) */
  double ref_scale;     /* their medians' unit in the samples' unit (samples = medians x this) */
} rep_settings;

typedef enum { REP_CONTINUE = 0, REP_PRECISION, REP_BUDGET, REP_MAX_COUNT } rep_stop;

/* What the budget made a point give up (bits of rep_state.gave_up). */
enum {
  REP_GAVE_MIN_COUNT = 1,
  REP_GAVE_MIN_TIME = 2,
  REP_GAVE_WARMUP = 4,
  REP_GAVE_WINDOW = 8,
  REP_GAVE_STREAM_WINDOW = 16 /* a streaming test ran fewer messages a window than asked */
};
#define REP_GAVE_LAST REP_GAVE_STREAM_WINDOW

typedef struct {
  rep_settings set;
  /* warm-up */
  size_t warm_n, window;
  double warm_s, prev_median, warm_median;
  int warm_done, warm_converged, probed;
  /* measurement */
  size_t batch;
  double *samples, *work;
  size_t n, cap;
  double elapsed_s;
  stats_summary summary;
  rep_stop stop;
  int gave_up; /* REP_GAVE_* bits */
} rep_state;

void rep_defaults(rep_settings *s);
int rep_init(rep_state *r, const rep_settings *s);
void rep_free(rep_state *r);

/* Iterations in the next warm-up window. */
size_t rep_warmup_chunk(const rep_state *r);
/* Feed a finished window (ns per iteration); returns 1 when warm-up is over. */
int rep_warmup_feed(rep_state *r, const double *ns, size_t n, double seconds);

/* Warm-up done without a window of its own: one iteration (the data check's, ns long) is all
 * the budget holds, so it is the warm-up, and the warm-up is recorded as given up. */
void rep_warm_from(rep_state *r, double ns);

/* Operations per timed sample, decided from the warm-up median: 1 unless one operation is
 * shorter than batch_factor timer costs. */
size_t rep_batch(rep_state *r);

/* What one more sample is expected to take on the wall, in seconds (0 when not known yet). */
double rep_sample_seconds(const rep_state *r);

/* Samples in the next measurement chunk. */
size_t rep_next_chunk(const rep_state *r);
/* Feed a chunk of samples (ns per operation) and the wall time it took. */
rep_stop rep_feed(rep_state *r, const double *ns, size_t n, double seconds);

/* The relative half-width the median's CI must reach: `precision`, or, when earlier launches
 * of the point already differ, what that spread makes worth measuring (two-stage sampling,
 * Cochran, Sampling Techniques, 1977, ch. 10).  The median of L launch medians varies as
 * (s_b^2 + s_w^2) / L, s_b the spread between launches, s_w a launch's own error: once s_w is
 * small beside s_b, more samples in this launch hardly narrow the run's interval, and the time
 * is better spent on the next launch.  So the target is 1.96 x REP_RELAX x s_b (this launch's
 * own sd at most half the spread: the interval at most sqrt(1 + 1/4), 12 %, wider than with
 * exact launch medians), capped at REP_TARGET_CAP, never below `precision`.  s_b comes from
 * the earlier launches' medians and this launch's running median (log scale), less the part
 * their own errors explain; it is re-estimated as samples come in. */
#define REP_RELAX 0.5
#define REP_TARGET_CAP 0.25
double rep_target(const rep_state *r);

const char *rep_stop_name(rep_stop s);
/* The names of the gave_up bits, for the record: "min_count", "min_time", "warmup", "window"
 * (window timing stopped with repetitions still starting late), "stream_window" (a streaming
 * test's window of messages cut to fit the budget). */
const char *rep_gave_up_name(int bit);

#endif
