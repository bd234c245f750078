/* scope-engine: runs the selected tests over sizes and parameter combinations and writes
 * versioned JSON Lines records (docs/records.md) from rank 0, one flushed line per record.
 * main is the outline of a run; each step lives in its own module. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "buffers.h"
#include "canary.h"
#include "context.h"
#include "core/json.h"
#include "core/refs.h"
#include "core/sizes.h"
#include "core/timer.h"
#include "core/warm.h"
#include "cvars.h"
#include "engine_clock.h"
#include "mpit.h"
#include "options.h"
#include "plan.h"
#include "point.h"
#include "records.h"
#include "select.h"
#include "watchdog.h"

static const scope_test *sel[SEL_MAX_TESTS];
static test_values tv[SEL_MAX_TESTS];
static unsigned long long sizes[SIZES_MAX_COUNT];

/* Probe the timers on every rank and agree on one that every rank has (the clock library's
 * choice, clock/clock_init.c), --timer's when every rank has it. */
static int choose_timer(timer_info *ti, int rank) {
  int per_rank = strcmp(opt_text(OPT_CLOCK_DOMAIN), "rank") == 0; /* each its own, as on its own host */
  const char *asked = opt_given(OPT_TIMER) ? opt_text(OPT_TIMER) : NULL;
  timer_kind chosen = scl_choose_timer(MPI_COMM_WORLD, asked, per_rank, ti);
  if (asked && !SIMULATED_CLOCK && chosen != timer_by_name(asked) && rank == 0)
    fprintf(stderr, "scope-engine: warning: timer %s is unavailable here (%s); using the best one\n", asked,
            ti[timer_by_name(asked)].why_unavailable ? ti[timer_by_name(asked)].why_unavailable : "not on every rank");
  timer_select(chosen, ti[chosen].tick_ns);
  return (int)chosen;
}

/* Warnings about the run as a whole, and the timing it can honestly use: 1 when window timing
 * was asked for and replaced by barrier timing (*forced), or asked as barrier timing. */
static int warn_about_run(const run_context *rc, const timer_info *ti, int nsel, int *forced) {
  if (strcmp(opt_thread_levels[rc->thread_level], opt_text(OPT_THREAD_LEVEL)) != 0)
    rec_warning("thread_level", "the MPI provides a lower thread level than --thread-level asked for",
                "tests with threads skip their points; build against an MPI with MPI_THREAD_MULTIPLE");
  int barrier = strcmp(opt_text(OPT_TIMING), "window") != 0, any_window = 0; /* barrier or osu */
  for (int t = 0; t < nsel; t++)
    any_window |= SCOPE_WINDOWED(sel[t]);
  if (rc->oversubscribed) {
    rec_warning("oversubscribed",
                "more ranks than cores on a host: ranks share cores, so timings do not represent the hardware",
                "run at most one rank per core for measurements you mean to keep");
    const char *thr = getenv("MPIR_CVAR_CH4_PROGRESS_THROTTLE");
    if (strstr(rc->mpi_library, "MPICH") && (!thr || strcmp(thr, "1") != 0))
      rec_warning("busy_polling",
                  "oversubscribed without MPICH's progress throttle: busy-polling ranks steal each other's cores",
                  "set MPIR_CVAR_CH4_PROGRESS_THROTTLE=1 and MPIR_CVAR_CH4_PROGRESS_THROTTLE_NO_PROGRESS_COUNT=16 "
                  "(scope run does)");
    if (any_window && !barrier) {
      /* Ranks sharing cores are descheduled at random: agreed start times cannot be kept. */
      barrier = *forced = 1;
      rec_warning("timing", "oversubscribed: collectives are timed after a barrier, not in windows on a global clock",
                  "run at most one rank per core for window timing");
    }
  }
  if (!ti[TIMER_TSC].available)
    rec_warning("timer", ti[TIMER_TSC].why_unavailable,
                "results use a slower clock; batches are timed where an operation is short");
  return barrier;
}

static void write_plan(run_plan *rp, int nsel) {
  static plan_entry entries[SEL_MAX_TESTS];
  long total = 0;
  for (int t = 0; t < nsel; t++) {
    entries[t] = (plan_entry){sel[t]->name, point_count(rp, sel[t], &tv[t])};
    total += entries[t].points;
  }
  rp->npoints = total;
  rec_plan(entries, nsel, total, rp->rep.budget_s);
}

static refs_list earlier; /* --earlier-launches, parsed before MPI starts */

static rep_settings rep_from_options(void) {
  rep_settings r;
  rep_defaults(&r);
  r.precision = opt_num(OPT_PRECISION);
  r.budget_s = opt_num(OPT_BUDGET);
  r.min_count = (size_t)opt_num(OPT_MIN_COUNT);
  r.max_count = (size_t)opt_num(OPT_MAX_COUNT);
  r.warmup_max = (size_t)opt_num(OPT_WARMUP_MAX);
  r.min_time_s = opt_num(OPT_MIN_TIME);
  return r;
}

static FILE *open_output(int rank) {
  int fail = 0;
  FILE *out = stdout;
  if (rank == 0 && opt_given(OPT_OUTPUT) && !(out = fopen(opt_text(OPT_OUTPUT), "w"))) {
    fprintf(stderr, "scope-engine: error: cannot write '%s': %s (choose a writable --output)\n", opt_text(OPT_OUTPUT),
            strerror(errno));
    fail = 1;
  }
  MPI_Bcast(&fail, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return fail ? NULL : out;
}

/* OpenBLAS starts its thread pool when the library loads, before main, and the pool's threads
 * spin a while waiting for work: beside the ranks they take cores at the start of every launch
 * (0.07 s of a 0.19 s start here, timer calibration included).  node.dgemm and the kernels run
 * one BLAS thread a rank anyway, so the engine starts itself again with one, unless the user
 * chose a number.  Just before MPI_Init (what only lists or checks needs no MPI, nor this),
 * so the launcher sees one process throughout. */
static void one_blas_thread(char **argv) {
#ifdef SCOPE_HAVE_BLAS
  if (getenv("OPENBLAS_NUM_THREADS"))
    return;
  setenv("OPENBLAS_NUM_THREADS", "1", 1);
  execv("/proc/self/exe", argv); /* returns only when it fails: go on with the pool */
#else
  (void)argv;
#endif
}

/* The engine's version and the MPI library's: MPI_Get_library_version needs no MPI_Init (MPI
 * 3.0), and a started singleton is not free everywhere (Open MPI's leaves its shared-memory
 * segment in /dev/shm). */
static int print_version(int json) {
  char lib[MPI_MAX_LIBRARY_VERSION_STRING] = "";
  int len = 0;
  MPI_Get_library_version(lib, &len);
  lib[strcspn(lib, "\n")] = '\0';
  if (!json) {
    printf("scope-engine %s (record schema %d); MPI: %s\n", SCOPE_ENGINE_VERSION, SCOPE_SCHEMA_VERSION, lib);
    return 0;
  }
  json_w w;
  jw_init(&w);
  jw_obj_begin(&w);
  jw_kstr(&w, "type", "version");
  jw_kint(&w, "schema", SCOPE_SCHEMA_VERSION);
  jw_kstr(&w, "engine", SCOPE_ENGINE_VERSION);
  jw_kstr(&w, "mpi_library", lib);
  jw_obj_end(&w);
  jw_emit(&w, stdout);
  jw_free(&w);
  return 0;
}

/* The tests, sizes and parameters the run selects, read and checked before MPI starts, so a
 * typo costs no launch. */
typedef struct {
  int nsel;
  long nsizes;
  int pattern_max_rank; /* the highest rank the --pattern file names, -1 without one */
} selection;

static selection read_selection(void) {
  selection out = {0, 0, -1};
  char err[256];
  out.nsel = sel_tests(opt_text(OPT_TESTS), sel);
  out.nsizes = sizes_parse(opt_text(OPT_SIZES), sizes, SIZES_MAX_COUNT, err, sizeof err);
  if (out.nsizes < 0)
    opt_die("bad --sizes '%s': %s", opt_text(OPT_SIZES), err);
  const opt_value *pv = opt_get(OPT_PARAM);
  sel_params(pv->list, pv->nlist, sel, out.nsel, tv);
  const opt_value *ts = opt_get(OPT_TEST_SIZES);
  sel_test_sizes(ts->list, ts->nlist, sel, out.nsel, tv, sizes, out.nsizes);
  if (opt_given(OPT_PATTERN))
    out.pattern_max_rank = sel_pattern(opt_text(OPT_PATTERN));
  if (opt_given(OPT_IO_DIR))
    scope_io_dir = opt_text(OPT_IO_DIR);
  const opt_value *ev = opt_get(OPT_EARLIER_LAUNCHES);
  for (int i = 0; i < ev->nlist; i++)
    if (refs_parse(&earlier, ev->list[i], err, sizeof err))
      opt_die("bad --earlier-launches: %s", err);
  return out;
}

/* The run's plan from its options, beside rep_from_options: how points are timed, ordered,
 * sampled and kept on the clock. */
static run_plan plan_from_options(run_context *rc) {
  run_plan rp = {.rc = rc, .rep = rep_from_options(), .seed = rc->seed};
  rp.procs = opt_text(OPT_PROCS);
  rp.osu_loop = strcmp(opt_text(OPT_LOOP), "osu") == 0;
  rp.osu_timing = strcmp(opt_text(OPT_TIMING), "osu") == 0;
  rp.offcache = opt_given(OPT_OFFCACHE);
  rp.samples = !opt_given(OPT_NO_SAMPLES);
  rp.sync_span_s = opt_num(OPT_SYNC_SPAN);
  rp.sync_bound_ns = opt_num(OPT_SYNC_BOUND);
  rp.clock = opt_text(OPT_CLOCK);
  rp.clock_per_rank = strcmp(opt_text(OPT_CLOCK_DOMAIN), "rank") == 0;
  rp.shuffled = strcmp(opt_text(OPT_ORDER), "shuffled") == 0;
  rp.launch = (long)opt_num(OPT_LAUNCH);
  /* A sample is off by at most one resolution step plus the read cost it carries; for a
   * fine-grained counter the smallest observed step *is* the read-to-read time, so the two
   * are the same cost and must not be added. */
  const timer_info *chosen = &rc->timers[rc->timer];
  rp.rep.timer_cost_ns = fmax(chosen->overhead_ns, isnan(chosen->resolution_ns) ? 0 : chosen->resolution_ns);
  return rp;
}

/* The global clock synchronised when a selected test times on it: 1 then, else 0. */
static int clock_ready(run_plan *rp, int nsel) {
  int need_clock = 0;
  for (int t = 0; t < nsel; t++)
    need_clock |=
        point_on_clock(rp, sel[t]) || sel[t]->timing == SCOPE_TIMING_KERNEL; /* idle time is read on the global clock */
  if (!need_clock)
    return 0;
  point_sync_clock(rp);
  /* Every rank busy before the first point on the clock, until its core runs steadily (at most
   * --warm): on this VM, 2 ranks measured straight after a 1 ms synchronisation left a
   * window-timed point at its budget in 9 of 16 launches, 2 of 8 after 0.05 s busy, 0 of 8
   * after 0.2 s.  A fixed 0.2 s was 200 ms of a one-point allreduce's 650 (issue 52); once the
   * windows were judged over 20 repetitions, a sweep after no spin still had windows of
   * 150-570 us in 4 of 8 launches, after 0.05 s none (core/warm.h). */
#ifndef SCOPE_SIM /* a simulated core has no speed to reach: the spin would only cost the host */
  warm_spin(opt_num(OPT_WARM), timer_wall_s);
#endif
  MPI_Barrier(MPI_COMM_WORLD);
  return 1;
}

/* MPI started at the thread level --thread-level asks; the level it provided, as an index of
 * opt_thread_levels. */
static int start_mpi(int *argc, char ***argv) {
  static const int levels[] = {MPI_THREAD_SINGLE, MPI_THREAD_FUNNELED, MPI_THREAD_SERIALIZED, MPI_THREAD_MULTIPLE};
  int asked = 0, provided, level = 0;
  while (strcmp(opt_thread_levels[asked], opt_text(OPT_THREAD_LEVEL)) != 0)
    asked++;
  MPI_Init_thread(argc, argv, levels[asked], &provided);
  while (level < 3 && levels[level] != provided)
    level++;
  return level;
}

/* The run's end record, everything freed, MPI finalised; the exit status: 3 when the machine
 * failed, 1 when a point's error was recorded, else 0. */
static int finish(run_context *rc, run_plan *rp, double t0) {
  rec_end(timer_wall_s() - t0);
  int errors = rec_counted()->errors, faulted = scope_faulted;
  rec_close();
  context_free(rc);
  buffers_release();
  free(rp->earlier);
  refs_free(&earlier);
  mpit_close();
  scope_clock_finalize(&engine_clock);
  MPI_Finalize();
  return faulted ? 3 : errors ? 1 : 0;
}

int main(int argc, char **argv) {
  opt_parse(argc, argv);
  if (opt_given(OPT_HELP)) {
    opt_usage();
    return 0;
  }
  if (opt_given(OPT_VERSION))
    return print_version(opt_given(OPT_JSON));
  if (opt_given(OPT_LIST_TESTS)) {
    rec_test_list(opt_given(OPT_JSON));
    return 0;
  }
  if (opt_given(OPT_CVARS))
    return cvars_list(opt_text(OPT_CVARS), stdout);
  int timers_only = opt_given(OPT_TIMERS);
  selection chosen_tests = {0, 0, -1};
  if (!timers_only) {
    chosen_tests = read_selection();
    if (opt_given(OPT_PLAN))
      return plan_print((int)opt_num(OPT_PLAN), sel, tv, chosen_tests.nsel, chosen_tests.pattern_max_rank);
  }
  int nsel = chosen_tests.nsel, pattern_max_rank = chosen_tests.pattern_max_rank;
  long nsizes = chosen_tests.nsizes;

  one_blas_thread(argv);
  int thread_level = start_mpi(&argc, &argv);
  run_context rc = {.argc = argc, .argv = argv, .sel = sel, .nsel = nsel, .sizes = sizes, .nsizes = nsizes};
  rc.thread_level = thread_level;
  MPI_Comm_rank(MPI_COMM_WORLD, &rc.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &rc.nranks);
#ifndef SCOPE_SIM /* the ranks are threads of smpirun's one process, which dies with its parent */
  watchdog_start(rc.rank, opt_given(OPT_IO_DIR) ? opt_text(OPT_IO_DIR) : NULL);
#endif
  FILE *out = open_output(rc.rank);
  if (!out) {
    MPI_Finalize();
    return 2;
  }
  rec_open(out, rc.rank);
  if (pattern_max_rank >= rc.nranks) {
    if (rc.rank == 0)
      fprintf(stderr, "scope-engine: error: pattern file '%s' names rank %d but the run has %d ranks\n",
              opt_text(OPT_PATTERN), pattern_max_rank, rc.nranks);
    MPI_Finalize();
    return 2;
  }
  timer_info ti[TIMER_COUNT];
  rc.timers = ti;
  rc.timer = choose_timer(ti, rc.rank);
  if (context_gather(&rc)) {
    fprintf(stderr, "scope-engine: error: out of memory gathering the context\n");
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
  MPI_Barrier(MPI_COMM_WORLD); /* every rank past MPI_Init: its node segment is mapped */
  watchdog_unlink_mpi_segments();
  if (timers_only) {
    rec_timers(ti, rc.timer, rc.mpi_library);
    rec_close();
    MPI_Finalize();
    return 0;
  }

  mpit_open();
  rc.seed = opt_given(OPT_SEED) ? (unsigned long long)opt_num(OPT_SEED)
                                : ((unsigned long long)time(NULL) << 20) ^ (unsigned long long)getpid();
  MPI_Bcast(&rc.seed, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
  double t0 = timer_wall_s();
  run_plan rp = plan_from_options(&rc);
  rc.rep = &rp.rep;
  rec_context(&rc);
  rp.barrier_timing = warn_about_run(&rc, ti, nsel, &rp.barrier_forced);
  engine_clock_open(rp.clock, rp.clock_per_rank, rp.sync_span_s);
  int need_clock = clock_ready(&rp, nsel);
  /* The plan lets the front end show progress and estimate the time left. */
  write_plan(&rp, nsel);
  char err[160];
  if (earlier.n && !(rp.earlier = refs_by_point(&earlier, rp.npoints, err, sizeof err))) {
    if (rc.rank == 0) /* the front end derives the indices from this plan: a bug, not input */
      fprintf(stderr, "scope-engine: error: --earlier-launches %s\n", err);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  canary_state canary = {0};
#ifndef SCOPE_SIM
  int probe = !opt_given(OPT_NO_CANARY);
#else
  int probe = 0; /* the probes measure the host's memory and cores, not the simulated machine */
#endif
  if (probe)
    canary_probe(&canary, &rc, "start");
  rec_settle(0); /* the front end stores the context before the first point is measured */
  point_run_all(&rp, sel, tv, nsel);
  if (need_clock)
    point_clock_record(&rp, "end"); /* how the clock held to the end: the bound against the truth */
  if (probe)
    canary_probe(&canary, &rc, "end");
  return finish(&rc, &rp, t0);
}
