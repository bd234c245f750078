/* The timing methods (see measure.h).  Rank 0 decides what happens next (warm-up, a
 * measurement chunk, stop) from the repetition controller in core/rep.c and broadcasts it;
 * the rules of window timing are in core/window.c. */
#include "measure.h"

#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "core/timer.h"
#include "core/window.h"
#include "engine_clock.h"
#include "phases.h"

enum { PH_WARM, PH_MEASURE, PH_STOP };

#define WINDOW_KEEP 5000 /* repetitions whose per-rank times are kept in the record ... */
/* ... and at most this many per-rank times in all: 5000 repetitions of 16,384 ranks' starts and
 * ends took 1.3 GB at rank 0 (issue 55); at 2M values, 400 repetitions at 4,096 ranks */
#define WINDOW_KEEP_VALUES 2000000

/* Grows an array of doubles for n values; out of memory mid-point cannot be agreed on
 * without a collective every chunk, so it aborts with the reason. */
static void *grow(void *p, size_t n, size_t each) {
  void *q = realloc(p, n && each ? n * each : 1);
  if (!q) {
    fprintf(stderr, "scope-engine: error: out of memory for %zu samples\n", n);
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
  return q;
}

void measure_touch(void *p, size_t bytes) {
  static int untouched = -1; /* test hook: the arrays as they were before, to see the faults counted */
  if (untouched < 0)
    untouched = getenv("SCOPE_TEST_UNTOUCHED") != NULL;
  if (bytes && !untouched)
    memset(p, 0, bytes);
}

/* grow, and the new part touched now (measure_touch) */
static void *grow_touched(void *p, size_t old_n, size_t n, size_t each) {
  char *q = grow(p, n, each);
  if (n > old_n)
    measure_touch(q + old_n * each, (n - old_n) * each);
  return q;
}

long measure_faults(void) {
#if defined(RUSAGE_THREAD) && !defined(SCOPE_SIM)
  struct rusage u;
  if (getrusage(RUSAGE_THREAD, &u) == 0)
    return u.ru_minflt + u.ru_majflt;
#endif
  return 0;
}

/* A measured chunk's page faults since `since` count in the point's; a warm-up chunk's do not. */
static void count_faults(measured *m, int measuring, long since) {
  if (measuring)
    m->faults += measure_faults() - since;
}

/* rep_init on every rank, agreed: -1 everywhere if it failed anywhere. */
static int start_rep(const measure_args *a, measured *m) {
  int bad = rep_init(&m->rs, &a->rep) != 0, any = 0;
  MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_LOR, a->c->comm);
  return any ? -1 : 0;
}

/* ---------------------------------------------------------------- loop */

/* A sample this long is not paced by a lead-in: how late a rank left the previous collective
 * (microseconds) is lost in it, and a lead-in would cost the budget a whole iteration. */
#define LEAD_IN_MAX_S 0.01

/* One untimed iteration first (lead_in): every rank then enters the timed loop already paced by
 * the operation itself, not by when it left the previous collective.  Timestamps are chained
 * (one read per sample) and stay local; they are combined after the loop. */
static void lead_in_once(const measure_args *a) {
  buffers_next(a->buffers, a->c);
  a->test->run(a->c, a->state);
}

static void run_chunk(const measure_args *a, size_t n, size_t batch, int lead_in, uint64_t *ticks) {
  const scope_test *T = a->test;
  scope_ctx *c = a->c;
  if (lead_in)
    lead_in_once(a);
  uint64_t prev = timer_now();
  for (size_t i = 0; i < n; i++) {
    for (size_t j = 0; j < batch; j++) {
      buffers_next(a->buffers, c);
      T->run(c, a->state);
    }
    uint64_t now = timer_now();
    ticks[i] = now - prev;
    prev = now;
  }
}

static volatile double osu_sink;

/* OSU 7's latency loop (--loop osu): MPI_Wtime read before and after every operation, one
 * operation a sample; the samples chain on the first read, so a sample is exactly what an
 * iteration of OSU's loop takes, both reads included, and their mean is OSU's figure.  The
 * reads are kept as they are and turned into ns after the loop, never converted inside it
 * (issue 52: bench/bare_put.c, the engine's way of reaching the operation cost 10 ns an
 * iteration beside OSU's 0.11 us put). */
static void run_chunk_osu(const measure_args *a, size_t n, int lead_in, double *ns) {
  const scope_test *T = a->test;
  scope_ctx *c = a->c;
  if (lead_in)
    lead_in_once(a);
  double first = MPI_Wtime();
  for (size_t i = 0; i < n; i++) {
    buffers_next(a->buffers, c);
    T->run(c, a->state);
    osu_sink = MPI_Wtime(); /* OSU's t_graph_end */
    ns[i] = MPI_Wtime();
  }
  for (size_t i = n; i-- > 0;) /* each read less the one before it, in place */
    ns[i] = (ns[i] - (i ? ns[i - 1] : first)) * 1e9;
}

static int measure_loop(const measure_args *a, measured *m) {
  if (start_rep(a, m))
    return -1;
  long act[4] = {PH_WARM, (long)rep_warmup_chunk(&m->rs), 1, 1}; /* phase, samples, batch, lead-in */
  if (a->warm_ns > 0 && a->c->rank == 0) {
    rep_warm_from(&m->rs, a->warm_ns);
    act[0] = PH_MEASURE;
    act[2] = (long)rep_batch(&m->rs);
    act[1] = (long)rep_next_chunk(&m->rs);
  }
  uint64_t *ticks = NULL;
  double *ns = NULL, *maxns = NULL;
  size_t cap = 0;
  double tick = timer_tick_ns();
  for (;;) {
    if (a->c->rank == 0)
      act[3] = !(rep_sample_seconds(&m->rs) > LEAD_IN_MAX_S);
    MPI_Bcast(act, 4, MPI_LONG, 0, a->c->comm);
    if (act[0] == PH_STOP)
      break;
    size_t n = (size_t)act[1], batch = (size_t)act[2];
    if (n > cap) {
      ticks = grow_touched(ticks, cap, n, sizeof *ticks);
      ns = grow_touched(ns, cap, n, sizeof *ns);
      maxns = grow(maxns, n, sizeof *maxns);
      cap = n;
    }
    double t0 = timer_wall_s();
    long f0 = measure_faults();
    if (a->osu_loop) {
      run_chunk_osu(a, n, (int)act[3], ns);
    } else {
      run_chunk(a, n, batch, (int)act[3], ticks);
      for (size_t i = 0; i < n; i++)
        ns[i] = (double)ticks[i] * tick / (double)batch;
    }
    count_faults(m, act[0] == PH_MEASURE, f0);
    if (a->c->untimed)
      for (size_t i = 0; i < n; i++)
        ns[i] = 0.0;
    /* Per sample, the slowest rank: a rank that waited is not averaged away. */
    MPI_Reduce(ns, maxns, (int)n, MPI_DOUBLE, MPI_MAX, 0, a->c->comm);
    if (a->c->rank != 0)
      continue;
    double secs = timer_wall_s() - t0;
    if (act[0] == PH_WARM) {
      if (rep_warmup_feed(&m->rs, maxns, n, secs)) {
        act[0] = PH_MEASURE;
        act[2] = (long)rep_batch(&m->rs);
        act[1] = (long)rep_next_chunk(&m->rs);
      } else {
        act[1] = (long)rep_warmup_chunk(&m->rs);
      }
    } else if (rep_feed(&m->rs, maxns, n, secs) != REP_CONTINUE) {
      act[0] = PH_STOP;
    } else {
      act[1] = (long)rep_next_chunk(&m->rs);
    }
  }
  free(ticks);
  free(ns);
  free(maxns);
  return 0;
}

/* ---------------------------------------------------------------- window and barrier */

static void window_keep(windowed *W, const double *s, const double *e, size_t n, size_t k) {
  if (W->nrep >= W->cap)
    return;
  for (int r = 0; r < W->nranks; r++) {
    W->start[(size_t)r * W->cap + W->nrep] = s[(size_t)r * n + k];
    W->end[(size_t)r * W->cap + W->nrep] = e[(size_t)r * n + k];
  }
  W->nrep++;
}

/* Which variant repetition k0 + k runs (paired tests alternate; others always run variant 1's
 * operation, which is their only one). */
static void set_variant(scope_ctx *c, size_t k) {
  c->variant = c->paired ? (int)(k & 1) : 1;
}

/* One repetition; a kernel's phase accounts are opened and closed around it. */
static inline void run_one(const measure_args *a, double *b0, double *b1) {
  *b0 = scope_clock_local_ns(engine_clock);
  if (a->c->phases)
    phases_rep_begin(a->c->phases, *b0);
  a->test->run(a->c, a->state);
  *b1 = scope_clock_local_ns(engine_clock);
  if (a->c->phases)
    phases_rep_end(a->c->phases, *b1);
}

/* n repetitions, each after a barrier: s[k] = 0, e[k] = this rank's own time. */
static void run_reps_barrier(const measure_args *a, size_t k0, size_t n, double *s, double *e) {
  for (size_t k = 0; k < n; k++) {
    set_variant(a->c, k0 + k);
    if (a->test->prep)
      a->test->prep(a->c, a->state);
    MPI_Barrier(a->c->comm);
    buffers_next(a->buffers, a->c);
    double b0, b1;
    run_one(a, &b0, &b1);
    s[k] = 0;
    e[k] = b1 - b0;
  }
}

/* n repetitions, repetition k at global time t0 + k w: s[k], e[k] = this rank's start and
 * end relative to that common start. */
static void run_reps_window(const measure_args *a, size_t k0, size_t n, double w, double t0, double *s, double *e) {
  for (size_t k = 0; k < n; k++) {
    set_variant(a->c, k0 + k);
    double tk = t0 + (double)k * w, lk = scl_to_local_ns(engine_clock, tk);
    buffers_next(a->buffers, a->c);
#ifdef SCOPE_SIM
    scl_wait_local(engine_clock, lk); /* a simulated rank sleeps: its MPI progresses in the simulator */
#endif
    /* Yield while the start is far off: with more ranks than cores, spinning would steal the
     * core from the ranks still finishing the previous repetition. */
    for (double now = scope_clock_local_ns(engine_clock); now < lk; now = scope_clock_local_ns(engine_clock)) {
      if (a->c->untimed) { /* a serving rank waits in MPI, where the MPI progresses for others */
        int flag;
        MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, a->c->comm, &flag, MPI_STATUS_IGNORE);
      }
      if (lk - now > 20000)
        sched_yield();
    }
    double b0, b1;
    run_one(a, &b0, &b1);
    s[k] = scope_clock_to_global_ns(engine_clock, b0) - tk;
    e[k] = scope_clock_to_global_ns(engine_clock, b1) - tk;
  }
}

/* OSU 7's collective loop: each rank reads MPI_Wtime around its own call, and a barrier follows
 * every call (one precedes the chunk, so every call follows one) unless the call is a barrier
 * itself (osu_barrier times them back to back).  s[k] = 0, e[k] = that time. */
static void run_reps_osu(const measure_args *a, size_t k0, size_t n, double *s, double *e) {
  MPI_Barrier(a->c->comm);
  for (size_t k = 0; k < n; k++) {
    set_variant(a->c, k0 + k);
    buffers_next(a->buffers, a->c);
    double t0 = MPI_Wtime();
    a->test->run(a->c, a->state);
    double t1 = MPI_Wtime();
    if (!a->c->self_sync)
      MPI_Barrier(a->c->comm);
    s[k] = 0;
    e[k] = a->c->untimed ? 0 : (t1 - t0) * 1e9; /* a serving rank's time is not the operation's */
  }
}

/* Rank 0: keeps a valid sample of the reference variant. */
static void keep_ref(windowed *W, double v) {
  if (W->nref == W->refcap) {
    W->refcap = W->refcap ? 2 * W->refcap : 256;
    W->ref = grow(W->ref, W->refcap, sizeof(double));
  }
  W->ref[W->nref++] = v;
}

/* A chunk of repetitions as rank 0 judges it. */
typedef struct {
  const double *as, *ae; /* every rank's starts and ends of the chunk, rank by rank */
  size_t k0, n;          /* the chunk's first repetition (counted over the point) and its length */
  int measuring;         /* measurement, not warm-up: late repetitions are counted and left out */
  int barrier;           /* barrier-timed: no start is late */
  int paired;            /* a paired test: even repetitions are the reference variant's */
  double late_ns;        /* a start later than this invalidates its repetition */
} chunk;

/* Rank 0: the samples of a gathered chunk (global completion: last exit - common start; OSU
 * timing: the mean over ranks of their own times, the sample whose mean is OMB's figure, as the
 * mean over ranks of each rank's mean is the mean over repetitions of the mean over ranks);
 * during measurement, late repetitions are counted and left out, and a paired test's
 * reference repetitions (even k0 + k) go to W->ref.  vals[k]: repetition k's sample, NAN when
 * it was late or a reference.  Returns the count of valid repetitions of the rest. */
static size_t judge_chunk(windowed *W, const chunk *ch, double *vals, unsigned char *kept) {
  const double *as = ch->as, *ae = ch->ae;
  size_t n = ch->n, valid = 0;
  for (size_t k = 0; k < n; k++) {
    kept[k] = 0;
    vals[k] = NAN;
    double smax = -INFINITY, emax = -INFINITY, esum = 0;
    for (int r = 0; r < W->nranks; r++) {
      smax = fmax(smax, as[(size_t)r * n + k]);
      emax = fmax(emax, ae[(size_t)r * n + k]);
      esum += ae[(size_t)r * n + k];
    }
    if (W->barrier == WINDOWED_OSU)
      emax = esum / W->timed; /* the untimed ranks' zeros left out */
    int reference = ch->paired && !((ch->k0 + k) & 1);
    if (ch->measuring) {
      W->total++;
      if (!ch->barrier && smax > ch->late_ns) {
        W->invalid++;
        continue;
      }
      kept[k] = !reference;
      if (reference)
        keep_ref(W, emax);
      else
        window_keep(W, as, ae, n, k);
    }
    if (!reference) {
      vals[k] = emax;
      valid++;
    }
  }
  return valid;
}

/* The samples of a chunk: each `cycle` consecutive repetitions (a rotating root's full turn, so
 * every root once) make one sample, their mean, when none of them was late.  A root's own time
 * differs from another's (MPICH's 2-rank bcast: 0.1 us from rank 0, 1.3 us from rank 1), and a
 * median over repetitions of alternating roots falls between the modes and never converges;
 * over turns it does.  cycle 1: each repetition its own sample. */
static size_t cycle_samples(const double *vals, size_t n, size_t cycle, double *samples) {
  size_t out = 0;
  for (size_t g = 0; g + cycle <= n; g += cycle) {
    double sum = 0;
    size_t k = 0;
    for (; k < cycle && !isnan(vals[g + k]); k++)
      sum += vals[g + k];
    if (k == cycle)
      samples[out++] = sum / (double)cycle;
  }
  return out;
}

/* Rank 0's control of a windowed point: the action it broadcasts (phase, samples, window, T0)
 * and what the window rules carry from chunk to chunk. */
typedef struct {
  double act[4];              /* phase, samples, window ns, the next chunk's T0 */
  double late_ns, ceiling_ns; /* a start later than this is late; the window's ceiling */
  size_t seen, kept_schedule; /* repetitions at this window, and those that started on time */
  double point_start;         /* when the point began (window_give_up's clock) */
} window_ctl;

/* What a judged chunk tells rank 0. */
typedef struct {
  size_t n, on_time;     /* repetitions, and those that kept the schedule (references too) */
  const double *samples; /* its samples */
  size_t nsamples;
  double secs; /* how long it took */
} chunk_told;

/* Rank 0: the next action after a chunk: warm-up goes on or ends with the first window, the
 * measurement stops (precise, or given up) or goes on with the window the rules give. */
static void decide(const measure_args *a, measured *m, window_ctl *ctl, const chunk_told *t) {
  double *act = ctl->act;
  if (act[0] == PH_WARM) {
    if (rep_warmup_feed(&m->rs, t->samples, t->nsamples, t->secs)) {
      act[0] = PH_MEASURE;
      rep_batch(&m->rs);
      m->rs.batch = 1; /* a collective is never batched: each repetition is its own event */
      act[1] = (double)rep_next_chunk(&m->rs);
      act[2] = window_initial_ns(m->rs.warm_median, ctl->late_ns);
      ctl->ceiling_ns = window_ceiling_ns(a->rep.budget_s, act[2]);
    } else {
      act[1] = (double)rep_warmup_chunk(&m->rs);
    }
  } else if (t->nsamples && rep_feed(&m->rs, t->samples, t->nsamples, t->secs) != REP_CONTINUE) {
    act[0] = PH_STOP;
  } else {
    /* judged over every repetition at this window, not chunk by chunk: an early chunk of ten
     * repetitions (20 us) that one descheduled rank made late doubled the window, again and
     * again, to hundreds of us for a 1 us allreduce, and a point ran to its budget */
    ctl->seen += t->n;
    ctl->kept_schedule += t->on_time;
    double floor = window_floor_ns(m->rs.warm_median, ctl->late_ns);
    double next = window_next_ns(act[2], ctl->seen, ctl->kept_schedule, floor, ctl->ceiling_ns);
    if (next != act[2])
      ctl->seen = ctl->kept_schedule = 0;
    act[2] = next;
    act[1] = (double)rep_next_chunk(&m->rs);
    /* a test's own floor of samples is kept; only the hard limit of window_give_up cuts it */
    size_t valid_n = m->rs.n >= a->rep.floor_count ? m->rs.n : 0;
    if (window_give_up(timer_wall_s() - ctl->point_start, a->rep.budget_s, valid_n)) {
      act[0] = PH_STOP;
      m->rs.gave_up |= REP_GAVE_WINDOW; /* the record says why so few samples */
    }
  }
}

/* Warm-up runs in barrier mode and sizes the window from the operation's time; barrier_mode is
 * WINDOWED_ON_CLOCK, _BARRIER or _OSU. */
static int measure_windowed(const measure_args *a, measured *m, int barrier_mode) {
  if (start_rep(a, m))
    return -1;
  scope_ctx *c = a->c;
  windowed *W = &m->w;
  memset(W, 0, sizeof *W);
  W->active = 1;
  W->barrier = barrier_mode;
  W->nranks = c->nranks;
  W->sync_error_ns = a->sync_error_ns;
  int timed = !c->untimed;
  MPI_Reduce(&timed, &W->timed, 1, MPI_INT, MPI_SUM, 0, c->comm);
  if (W->timed < 1)
    W->timed = 1;
  if (c->rank == 0) {
    W->cap = (size_t)fmax(20, fmin(WINDOW_KEEP, WINDOW_KEEP_VALUES / c->nranks));
    W->start = grow(NULL, W->cap * (size_t)c->nranks, sizeof(double));
    W->end = grow(NULL, W->cap * (size_t)c->nranks, sizeof(double));
  }
  window_ctl ctl = {
      {PH_WARM, (double)rep_warmup_chunk(&m->rs), 0, 0}, window_late_ns(a->sync_error_ns), 1e9, 0, 0, timer_wall_s()};
  double *act = ctl.act;
  double *s = NULL, *e = NULL, *as = NULL, *ae = NULL, *samples = NULL, *vals = NULL;
  size_t cycle = c->paired || c->cycle < 1 ? 1 : (size_t)c->cycle; /* repetitions a sample */
  W->cycle = (int)cycle;
  unsigned char *kept = NULL; /* which repetitions of the chunk the samples (and the phases) count */
  size_t cap = 0, k0 = 0;     /* k0: repetitions run so far, so pairs alternate across chunks */
  for (;;) {
    MPI_Bcast(act, 4, MPI_DOUBLE, 0, c->comm);
    if (act[0] == PH_STOP)
      break;
    size_t n = (size_t)act[1] * cycle; /* repetitions: `cycle` a sample */
    if (c->paired)
      n *= 2; /* a reference repetition beside each measured one */
    if (n > cap) {
      s = grow_touched(s, cap, n, sizeof(double)); /* written between repetitions */
      e = grow_touched(e, cap, n, sizeof(double));
      samples = grow(samples, n, sizeof(double));
      vals = grow(vals, n, sizeof(double));
      kept = grow(kept, n, 1);
      if (c->rank == 0) {
        as = grow(as, n * (size_t)c->nranks, sizeof(double));
        ae = grow(ae, n * (size_t)c->nranks, sizeof(double));
      }
      cap = n;
    }
    double wall0 = timer_wall_s();
    int barrier = act[0] == PH_WARM || barrier_mode;
    long f0 = measure_faults();
    if (barrier_mode == WINDOWED_OSU)
      run_reps_osu(a, k0, n, s, e);
    else if (barrier)
      run_reps_barrier(a, k0, n, s, e);
    else
      run_reps_window(a, k0, n, act[2], act[3], s, e);
    count_faults(m, act[0] == PH_MEASURE, f0);
    size_t first = k0;
    k0 += n;
    MPI_Gather(s, (int)n, MPI_DOUBLE, as, (int)n, MPI_DOUBLE, 0, c->comm);
    MPI_Gather(e, (int)n, MPI_DOUBLE, ae, (int)n, MPI_DOUBLE, 0, c->comm);
    double secs = timer_wall_s() - wall0;
    size_t refs = W->nref, valid = 0, nsamples = 0;
    if (c->rank == 0) {
      chunk ch = {as, ae, first, n, act[0] == PH_MEASURE, barrier, c->paired, ctl.late_ns};
      valid = judge_chunk(W, &ch, vals, kept);
      nsamples = cycle_samples(vals, n, cycle, samples); /* paired: cycle 1, references are NAN */
    }
    if (c->phases) { /* phases count the repetitions the samples count, and no other */
      MPI_Bcast(kept, (int)n, MPI_UNSIGNED_CHAR, 0, c->comm);
      phases_chunk_end(c->phases, c->comm, act[0] == PH_MEASURE, kept);
    }
    if (c->rank != 0)
      continue;
    refs = W->nref - refs; /* the window rules count every repetition that kept the schedule */
    chunk_told told = {n, valid + refs, samples, nsamples, secs};
    decide(a, m, &ctl, &told);
    W->window_ns = act[2];
    act[3] = scope_clock_global_ns(engine_clock, NULL) + window_lead_ns(act[2]);
  }
  free(s);
  free(e);
  free(as);
  free(ae);
  free(samples);
  free(vals);
  free(kept);
  return 0;
}

static int measure_window(const measure_args *a, measured *m) {
  return measure_windowed(a, m, WINDOWED_ON_CLOCK);
}

static int measure_barrier(const measure_args *a, measured *m) {
  return measure_windowed(a, m, WINDOWED_BARRIER);
}

static int measure_osu(const measure_args *a, measured *m) {
  return measure_windowed(a, m, WINDOWED_OSU);
}

const timing_method timing_loop = {"loop", measure_loop};
const timing_method timing_window = {"window", measure_window};
const timing_method timing_barrier = {"barrier", measure_barrier};
const timing_method timing_osu = {"osu", measure_osu};

void measured_free(measured *m) {
  rep_free(&m->rs);
  free(m->w.start);
  free(m->w.end);
  free(m->w.ref);
  m->w.start = m->w.end = m->w.ref = NULL;
}
