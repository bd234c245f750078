/* The points of a test (see point.h). */
#include "point.h"

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buffers.h"
#include "core/pattern.h"
#include "core/rng.h"
#include "core/timer.h"
#include "engine_clock.h"
#include "measure.h"
#include "mpit.h"
#include "phases.h"
#include "records.h"

#define MAX_PROCS 64

long point_count(const run_plan *rp, const scope_test *T, const test_values *tv) {
  int pl[MAX_PROCS];
  return sel_combos(T, tv) * (T->sized ? tv->nsizes : 1) * sel_procs(rp->procs, T, rp->rc->nranks, pl, MAX_PROCS);
}

void point_sync_clock(const run_plan *rp) {
  engine_clock_sync();
  point_clock_record(rp, "sync");
}

void point_clock_record(const run_plan *rp, const char *at) {
  int write_it = 0;
  engine_clock_record(rec_writer(), context_one_node(rp->rc), at, &write_it);
  if (write_it)
    rec_emit();
  else
    jw_reset(rec_writer());
}

/* Re-synchronise by the drift model, not by habit (the library's rule, scope_clock_keep):
 * when the bound would pass --sync-bound before the next point is done (the last one's length
 * ahead), a synchronisation could bring it down, and it costs at most 5 % of the run. */
static void maybe_resync(const run_plan *rp, double point_s) {
  if (engine_clock_keep(rp->sync_bound_ns, point_s))
    point_clock_record(rp, "sync");
}

/* Test hook: SCOPE_TEST_KILL=RANK:POINTS kills that rank after that many points, so the
 * front end's handling of a rank that dies can be tested for real. */
static void maybe_die(int rank) {
  const char *spec = getenv("SCOPE_TEST_KILL");
  int who, after;
  if (spec && sscanf(spec, "%d:%d", &who, &after) == 2 && who == rank && rec_counted()->points >= after)
    raise(SIGKILL);
}

/* Test hook: SCOPE_TEST_HANG=NAME=VALUE stops rank 0 for good before it measures anything
 * while the environment variable NAME is VALUE, so the other ranks wait in the operation as
 * under an algorithm that hangs (e.g. MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM=ring). */
static void maybe_hang(int rank) {
  const char *spec = getenv("SCOPE_TEST_HANG"), *eq = spec ? strchr(spec, '=') : NULL;
  if (rank != 0 || !eq)
    return;
  char name[128];
  snprintf(name, sizeof name, "%.*s", (int)(eq - spec), spec);
  const char *now = getenv(name);
  if (now && strcmp(now, eq + 1) == 0)
    for (;;)
      pause();
}

/* One untimed iteration on fresh patterns; returns bad bytes summed over ranks. */
static size_t validate(const scope_test *T, scope_ctx *c, void *st, bufset *B, uint64_t seed, size_t *first_bad) {
  buffers_slot(B, c, 0);
  pattern_fill(c->sbuf, c->sbuf_bytes, seed, c->rank);
  memset(c->rbuf, 0, c->rbuf_bytes);
  if (T->fill)
    T->fill(c, st, seed);
  MPI_Barrier(c->comm);
  T->run(c, st);
  const char *corrupt = getenv("SCOPE_TEST_CORRUPT");
  if (corrupt && atoi(corrupt) == c->rank && c->rbuf_bytes > 0)
    c->rbuf[c->size ? c->size / 2 : c->rbuf_bytes / 2] ^= 0x5a; /* test hook: proves a bad byte is caught */
  size_t first = 0;
  c->check_message[0] = '\0';
  unsigned long long bad = T->verify ? T->verify(c, st, seed, &first) : 0, total = 0;
  MPI_Allreduce(&bad, &total, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, c->comm);
  unsigned long long f = bad ? first : ~0ull, fmin;
  MPI_Allreduce(&f, &fmin, 1, MPI_UNSIGNED_LONG_LONG, MPI_MIN, c->comm);
  *first_bad = (size_t)fmin;
  return (size_t)total;
}

static int any_rank(int mine, MPI_Comm comm) {
  int any = 0;
  MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_LOR, comm);
  return any;
}

/* What a simulated run cannot measure (issue 69): a node test times this host's cores and
 * memory, a net test its own sockets, neither of which SimGrid simulates; their figures would
 * be the machine running the simulation, shown as the platform's. */
static const char *sim_refused(const scope_test *T) {
#ifdef SCOPE_SIM
  if (!strncmp(T->name, "node.", 5))
    return "a node test times this machine's cores and memory, which SimGrid does not simulate "
           "(smpi/simulate-computation:no): run it without --sim";
  if (!strncmp(T->name, "net.", 4))
    return "a net test times this machine's own sockets, outside SimGrid's simulated network: run it without --sim";
#else
  (void)T;
#endif
  return NULL;
}

/* Setup on every rank; 0 to go on, else the point is recorded as a skip or an error. */
static int setup_point(const scope_test *T, scope_ctx *c, void **st, const rec_where *at) {
  const char *refused = sim_refused(T);
  if (!refused && T->refuse)
    refused = T->refuse(c);
  if (refused) { /* the same answer on every rank: parameters and nranks only */
    rec_skip(at, refused);
    *st = NULL;
    return -1;
  }
  int rc = T->setup(c, st), fail = any_rank(rc != 0, c->comm), skip = any_rank(c->skip != NULL, c->comm);
  if (!fail && !skip)
    return 0;
  if (fail)
    rec_error(at, "test setup failed (out of memory?)");
  else
    rec_skip(at, c->skip ? c->skip : "skipped by the test on another rank");
  if (!rc && T->teardown)
    T->teardown(c, *st);
  return -1;
}

int point_on_clock(const run_plan *rp, const scope_test *T) {
  return SCOPE_ON_CLOCK(T) && !rp->barrier_timing;
}

static const timing_method *method_of(const run_plan *rp, const scope_test *T) {
  if (T->timing == SCOPE_TIMING_PAIRS)
    return &timing_pairs;
  if (!SCOPE_WINDOWED(T))
    return &timing_loop;
  if (point_on_clock(rp, T))
    return &timing_window;
  return rp->osu_timing && T->timing == SCOPE_TIMING_WINDOW ? &timing_osu : &timing_barrier;
}

static void rec_check_failed(const rec_where *at, const char *when, size_t bad, size_t first) {
  char msg[300];
  if (at->c && at->c->check_message[0]) /* the test's own words (rank 0's, which writes the record) */
    snprintf(msg, sizeof msg, "%s (%s measuring)", at->c->check_message, when);
  else
    snprintf(msg, sizeof msg, "data check failed %s measuring: %zu bad bytes summed over ranks, first at offset %zu",
             when, bad, first);
  rec_error(at, msg);
}

/* One iteration may take at most this share of the budget: the data checks, the probe and a
 * few samples must fit in it. */
#define ITERATION_SHARE 0.1

/* The data check before measuring, on this point's own seed; *secs: how long it took on this
 * rank.  A failure is recorded here; returns the bad bytes. */
static size_t check_before(const run_plan *rp, const scope_test *T, scope_ctx *c, void *st, bufset *B,
                           const rec_where *at, double *secs) {
  size_t first = 0;
  double t0 = timer_wall_s();
  size_t bad = validate(T, c, st, B, rp->seed ^ (uint64_t)(2 * at->index + 1), &first);
  *secs = timer_wall_s() - t0;
  if (bad)
    rec_check_failed(at, "before", bad, first);
  return bad ? bad : (size_t)scope_faulted; /* a fault of the machine: nothing to measure */
}

/* A point set up and ready to measure. */
typedef struct {
  void *st;
  bufset B;
  double checked_s; /* > 0: the data check before measuring is done, and took this long */
  int gave_up;      /* REP_GAVE_STREAM_WINDOW when the window was cut */
} ready_point;

/* Measure between two data checks; records the point, or the error that prevented it.
 * r->checked_s: when the check before measuring was already made (by the pilot), how long it
 * took; else 0.  The point's budget covers its checks: what they take (the one after is
 * expected to take as long as the one before) is taken from the measurement's share. */
static void measure_point(const run_plan *rp, const scope_test *T, scope_ctx *c, ready_point *r, const rec_where *at,
                          double t_start) {
  void *st = r->st;
  bufset *B = &r->B;
  int gave_up = r->gave_up;
  double checked_s = r->checked_s, check_s = checked_s;
  if (!checked_s && check_before(rp, T, c, st, B, at, &check_s))
    return;
  maybe_hang(c->rank);
  measure_args a = {
      T, c, st, B, rp->rep, 0, 0, rp->osu_loop && !SCOPE_WINDOWED(T), at, pairs_seed(rp->seed, rp->launch, at->index)};
  a.rep.floor_count = (size_t)T->min_samples;
  if (a.osu_loop)
    a.rep.batch_factor = 0; /* OSU times every iteration on its own */
  if (a.rep.min_count < a.rep.floor_count)
    a.rep.min_count = a.rep.floor_count;
  if (rp->earlier) { /* samples are ns per iteration, the medians us per operation */
    a.rep.earlier = rp->earlier[at->index];
    a.rep.ref_scale = 1e3 * c->ops_per_iter;
  }
  double spent = timer_wall_s() - t_start + check_s, most;
  MPI_Allreduce(&spent, &most, 1, MPI_DOUBLE, MPI_MAX, c->comm); /* every rank plans alike */
  a.rep.budget_s = fmax(rp->rep.budget_s - most, 0.05 * rp->rep.budget_s);
  if (checked_s > ITERATION_SHARE * rp->rep.budget_s) /* the pilot's check was the warm-up there is room for */
    a.warm_ns = checked_s * 1e9;
  if (point_on_clock(rp, T)) {
    double err;
    scope_clock_global_ns(engine_clock, &err);
    MPI_Allreduce(&err, &a.sync_error_ns, 1, MPI_DOUBLE, MPI_MAX, c->comm);
  }
  measured m = {0};
  mpit_point_begin(c->comm);
  int nomem = method_of(rp, T)->measure(&a, &m) != 0;
  mpit_point_end(c->comm);
  long faults = m.faults;
  MPI_Reduce(&faults, &m.faults, 1, MPI_LONG, MPI_MAX, 0, c->comm);
  m.rs.gave_up |= gave_up;
  m.w.why = T->timing == SCOPE_TIMING_BARRIER ? "the test's own: long repetitions, an untimed step between them"
            : rp->barrier_forced              ? "oversubscribed: ranks sharing cores cannot keep agreed start times"
            : rp->osu_timing                  ? "--timing osu"
                                              : "--timing barrier";
  size_t first = 0, bad = 0;
  if (nomem) {
    rec_error(at, "out of memory for the samples of this point");
  } else if ((bad = validate(T, c, st, B, rp->seed ^ (uint64_t)(2 * at->index + 2), &first))) {
    rec_check_failed(at, "after", bad, first);
  } else if (scope_faulted) {
    /* the machine failed while measuring (the fault is recorded): the samples time failed calls */
  } else {
    if (c->phases)
      phases_gather(c->phases, c->comm);
    point_result pr = {*at, B, &m, timer_wall_s() - t_start, 2, rp->samples};
    rec_point(&pr);
  }
  measured_free(&m);
}

/* Setup, buffers and start: 0 when the point is ready to run, else it has been recorded (a
 * skip or an error) and nothing is left to undo. */
static int open_point(const run_plan *rp, const scope_test *T, scope_ctx *c, void **st, bufset *B,
                      const rec_where *at) {
  if (setup_point(T, c, st, at))
    return -1;
  int bad_alloc = buffers_alloc(B, c, rp->offcache, rp->seed) != 0;
  if (any_rank(bad_alloc, c->comm)) {
    char msg[160];
    snprintf(msg, sizeof msg, "cannot allocate buffers (%zu + %zu bytes per slot)", c->sbuf_bytes, c->rbuf_bytes);
    rec_error(at, msg);
    buffers_free(B);
    if (T->teardown)
      T->teardown(c, *st);
    return -1;
  }
  buffers_slot(B, c, 0);
  if (T->start)
    T->start(c, *st);
  MPI_Barrier(c->comm);
  return 0;
}

static void close_point(const scope_test *T, scope_ctx *c, void *st, bufset *B) {
  if (T->teardown)
    T->teardown(c, st);
  buffers_free(B);
}

/* Messages of `one` second each that ITERATION_SHARE of the budget holds. */
static double window_fits(const run_plan *rp, double one) {
  return ITERATION_SHARE * rp->rep.budget_s / (one > 0 ? one : 1e-9);
}

/* A window of fewer bytes is over too soon for any link to break a budget with it. */
#define PILOT_BYTES (1ull << 20)

/* What a test's setup fills in, cleared between the pilot and the point. */
static void reset_ctx(scope_ctx *c) {
  c->sbuf_bytes = c->rbuf_bytes = c->size;
  c->ops_per_iter = 1;
  c->bytes_per_op = (double)c->size;
  c->note[0] = '\0';
  c->nextra = 0;
  c->untimed = 0;
  c->cycle = 0;
  c->self_sync = 0;
  phases_reset_ops(c->phases);
}

static int window_param(const scope_test *T) {
  for (int k = 0; k < T->nparams; k++)
    if (strcmp(T->params[k].name, "window") == 0 && T->params[k].type == SP_INT)
      return k;
  return -1;
}

/* A streaming test sends a window of messages per iteration (its `window` parameter); on a
 * slow link one window can outlast the point's budget (64 x 1 MiB at 37 Mbit/s: 15 s).  So a
 * large window is first set up with one message, whose data check times it (a pilot), and the
 * window is cut to what ITERATION_SHARE of the budget holds: kept set up when that is one
 * message, set up again otherwise.  The record keeps the asked window as the point's parameter
 * (its identity) and says what ran in `note` and `gave_up`.  0 when ready, -1 when the point
 * was recorded as an error or skip. */
static int prepare_point(const run_plan *rp, const scope_test *T, scope_ctx *c, const rec_where *at, ready_point *r) {
  int k = window_param(T);
  long asked = k >= 0 ? c->p[k] : 0;
  r->checked_s = 0;
  r->gave_up = 0;
  if (asked <= 1 || (unsigned long long)asked * c->size < PILOT_BYTES)
    return open_point(rp, T, c, &r->st, &r->B, at);
  c->p[k] = 1;
  int failed = open_point(rp, T, c, &r->st, &r->B, at);
  c->p[k] = asked; /* the record names the point by what was asked */
  if (failed)
    return -1;
  double mine, one;
  size_t bad = check_before(rp, T, c, r->st, &r->B, at, &mine);
  MPI_Allreduce(&mine, &one, 1, MPI_DOUBLE, MPI_MAX, c->comm);
  double fits = window_fits(rp, one);
  if (!bad && fits < (double)asked && fits >= 1) {
    /* One timing may be a first contact or a descheduling: a second, warm one before cutting,
     * when one message is cheap beside the budget (on a slow link it is not, and is no fluke). */
    double again;
    bad = check_before(rp, T, c, r->st, &r->B, at, &mine);
    MPI_Allreduce(&mine, &again, 1, MPI_DOUBLE, MPI_MAX, c->comm);
    one = fmin(one, again);
    fits = window_fits(rp, one);
  }
  if (bad) {
    close_point(T, c, r->st, &r->B);
    return -1;
  }
  long w = fits >= (double)asked ? asked : (fits < 1 ? 1 : (long)fits);
  if (w == 1) {
    r->checked_s = one;
  } else {
    close_point(T, c, r->st, &r->B);
    reset_ctx(c);
    c->p[k] = w;
    failed = open_point(rp, T, c, &r->st, &r->B, at);
    c->p[k] = asked;
    if (failed)
      return -1;
  }
  if (w < asked) {
    char own[sizeof c->note];
    snprintf(own, sizeof own, "%s", c->note);
    snprintf(c->note, sizeof c->note,
             "window cut from %ld to %ld messages for the %g s budget (one took %.3g s)%s%.100s", asked, w,
             rp->rep.budget_s, one, own[0] ? "; " : "", own);
    r->gave_up = REP_GAVE_STREAM_WINDOW;
  }
  return 0;
}

/* One point: setup, buffers, validate, measure, validate, record, teardown. */
static void run_point(const run_plan *rp, const scope_test *T, const scope_ctx *base, MPI_Comm comm, size_t size,
                      long index) {
  scope_ctx c = *base;
  c.comm = comm;
  MPI_Comm_rank(comm, &c.rank);
  MPI_Comm_size(comm, &c.nranks);
  c.size = T->sized ? size : 0;
  c.phases = T->timing == SCOPE_TIMING_KERNEL ? phases_new() : NULL;
  reset_ctx(&c);
  c.peer = -1; /* pairs timing: step 0's partner; out of memory, none (the measurement says so, agreed) */
  if (T->timing == SCOPE_TIMING_PAIRS)
    pairs_first_partner(&c, pairs_seed(rp->seed, rp->launch, index));
  rec_where at = {T, &c, index, rp->npoints};
  double t_start = timer_wall_s();
  ready_point r;
  if (!prepare_point(rp, T, &c, &at, &r)) {
    measure_point(rp, T, &c, &r, &at, t_start);
    close_point(T, &c, r.st, &r.B);
  }
  phases_free(c.phases);
}

/* One point of the run's plan: which test, parameter combination, process count and size,
 * and its index in the listed order (the same in every launch, whatever the visiting order). */
typedef struct {
  int t, procs;
  long comb, si, index;
} point_ref;

/* Ranks 0 .. procs-1 form a sub-communicator for the point; the others sit it out. */
static void run_ref(const run_plan *rp, const scope_test *T, const test_values *tv, const point_ref *pr) {
  int me = rp->rc->rank;
  scope_ctx base = {0};
  base.comm = MPI_COMM_WORLD;
  base.rank = me;
  base.nranks = rp->rc->nranks;
  base.node = rp->rc->node;
  base.node0 = rp->rc->node0;
  base.node1 = rp->rc->node1;
  base.test = T;
  sel_combo(T, tv, pr->comb, base.p);
  static double last_point_s = 0; /* how far ahead the clock must hold: about one point */
  double started = timer_wall_s();
  if (point_on_clock(rp, T))
    maybe_resync(rp, last_point_s);
  MPI_Comm sub = MPI_COMM_WORLD;
  if (pr->procs != rp->rc->nranks)
    MPI_Comm_split(MPI_COMM_WORLD, me < pr->procs ? 0 : MPI_UNDEFINED, me, &sub);
  if (sub != MPI_COMM_NULL)
    run_point(rp, T, &base, sub, T->sized ? (size_t)tv->sizes[pr->si] : 0, pr->index);
  MPI_Barrier(MPI_COMM_WORLD);
  last_point_s = timer_wall_s() - started;
  if (sub != MPI_COMM_NULL)
    maybe_die(me);
  if (sub != MPI_COMM_WORLD && sub != MPI_COMM_NULL)
    MPI_Comm_free(&sub);
}

/* The points of the tests that can run, in listed order; skips are recorded here. */
static long plan_points(const run_plan *rp, const scope_test **sel, const test_values *tv, int nsel, point_ref *list) {
  long n = 0, index = 0;
  for (int t = 0; t < nsel; t++) {
    const scope_test *T = sel[t];
    rec_where at = {T, NULL, index, rp->npoints};
    if (tv[t].rejected[0]) {
      char why[320];
      snprintf(why, sizeof why, "not supported by this test: %s", tv[t].rejected);
      rec_skip(&at, why);
    }
    if (rp->rc->nranks < T->min_ranks) {
      char why[128];
      snprintf(why, sizeof why, "needs at least %d ranks, this run has %d", T->min_ranks, rp->rc->nranks);
      rec_skip(&at, why);
      index += point_count(rp, T, &tv[t]);
      continue;
    }
    int procs[MAX_PROCS], nprocs = sel_procs(rp->procs, T, rp->rc->nranks, procs, MAX_PROCS);
    long ncomb = sel_combos(T, &tv[t]), nsz = T->sized ? tv[t].nsizes : 1;
    for (long comb = 0; comb < ncomb; comb++)
      for (int pi = 0; pi < nprocs; pi++)
        for (long si = 0; si < nsz; si++)
          list[n++] = (point_ref){t, procs[pi], comb, si, index++};
  }
  return n;
}

void point_run_all(const run_plan *rp, const scope_test **sel, const test_values *tv, int nsel) {
  point_ref *list = malloc((size_t)(rp->npoints > 0 ? rp->npoints : 1) * sizeof *list);
  if (!list) {
    fprintf(stderr, "scope-engine: error: out of memory planning %ld points\n", rp->npoints);
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
  long n = plan_points(rp, sel, tv, nsel, list);
  if (rp->shuffled) {
    /* Fisher-Yates on a stream seeded by the run's seed and the launch number, so replicate
     * launches visit the points in different orders and drifts do not line up with sizes. */
    uint64_t x = rp->seed ^ (0x2545f4914f6cdd1dull * (uint64_t)rp->launch);
    for (long i = n - 1; i > 0; i--) {
      long j = (long)(splitmix64(&x) % (uint64_t)(i + 1));
      point_ref tmp = list[i];
      list[i] = list[j];
      list[j] = tmp;
    }
  }
  for (long i = 0; i < n && !scope_faulted; i++) /* a fault of the machine ends the run */
    run_ref(rp, sel[list[i].t], &tv[list[i].t], &list[i]);
  free(list);
}
