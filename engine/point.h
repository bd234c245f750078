/* Running the points of a run: for each test, parameter combination, process count and size
 * (in a seeded random order unless --order listed), setup, buffers, a data check, the measurement by the test's timing
 * method, a second data check, the record, teardown. */
#ifndef SCOPE_POINT_H
#define SCOPE_POINT_H
#include <stdint.h>

#include "context.h"
#include "core/rep.h"
#include "select.h"

typedef struct {
  const run_context *rc;
  rep_settings rep; /* with the timer's cost */
  uint64_t seed;
  int barrier_timing; /* window-timed tests are timed after a barrier instead */
  int osu_timing;     /* ... as OSU 7 times its collectives (--timing osu; kernels: after a barrier) */
  int osu_loop;       /* --loop osu: loop-timed tests as OSU 7 times them (measure.h) */
  int barrier_forced; /* ... because the run is oversubscribed, not because --timing asked */
  const char *procs;
  int offcache, samples;
  double sync_span_s, sync_bound_ns;
  const char *clock;    /* the synchronisation method (cm_methods) */
  int clock_per_rank;   /* --clock-domain rank */
  long npoints;         /* in the whole run */
  int shuffled;         /* visit the points in a seeded random order */
  long launch;          /* this launch's number among replicates (varies the order) */
  launch_refs *earlier; /* per point index, its launches before this one (NULL: none known) */
} run_plan;

/* Whether a test's repetitions start at agreed times on the global clock in this run (window
 * and kernel timing, unless --timing barrier or oversubscription replaced them). */
int point_on_clock(const run_plan *rp, const scope_test *T);
/* Points of one test in this run (for the plan record). */
long point_count(const run_plan *rp, const scope_test *T, const test_values *tv);
/* Every point of the run, in listed or shuffled order; records skips of tests that cannot run. */
void point_run_all(const run_plan *rp, const scope_test **sel, const test_values *tv, int nsel);
/* Synchronise the global clock and write a `clock` record (world-collective). */
void point_sync_clock(const run_plan *rp);
/* A `clock` record of the maps as they stand ("end": after the last point). */
void point_clock_record(const run_plan *rp, const char *at);

#endif
