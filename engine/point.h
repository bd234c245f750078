/* Running the points of one test: for each parameter combination, process count and size,
 * setup, buffers, a data check, the measurement by the test's timing method, a second data
 * check, the record, teardown. */
#ifndef SCOPE_POINT_H
#define SCOPE_POINT_H
#include <stdint.h>

#include "context.h"
#include "core/rep.h"
#include "select.h"

typedef struct {
  const run_context *rc;
  const unsigned long long *sizes;
  long nsizes;
  rep_settings rep; /* with the timer's cost */
  uint64_t seed;
  int barrier_timing; /* window-timed tests are timed after a barrier instead */
  const char *procs;
  int offcache, samples;
  double sync_span_s, sync_bound_ns;
  long npoints; /* in the whole run */
} run_plan;

/* Points of one test in this run (for the plan record). */
long point_count(const run_plan *rp, const scope_test *T, const test_values *tv);
void point_run_test(const run_plan *rp, const scope_test *T, const test_values *tv, long *index);
/* Synchronise the global clock and write a `clock` record (world-collective). */
void point_sync_clock(const run_plan *rp);

#endif
