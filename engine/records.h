/* The record stream (docs/records.md): one JSON object per line, written by rank 0 and
 * flushed per record, so a crash loses nothing measured.  One writer per record type, fed
 * from plain structs; human text goes to stderr only. */
#ifndef SCOPE_RECORDS_H
#define SCOPE_RECORDS_H
#include <stdio.h>

#include "buffers.h"
#include "context.h"
#include "core/json.h"
#include "measure.h"
#include "scope.h"

/* Where records go; only rank 0 writes. */
void rec_open(FILE *out, int rank);
void rec_close(void);
/* The writer, for modules that build a record themselves (the clock's). */
json_w *rec_writer(void);
/* Writes the record built in the writer (rank 0) and resets it on every rank. */
void rec_emit(void);
/* Rank 0, writing into a pipe: pauses while the reader takes what was written since the last
 * pause, if that is at least `at_least` bytes (records.c says why). */
void rec_settle(size_t at_least);

/* Counts of what was written, on every rank. */
typedef struct {
  int points, errors, skips;
} rec_counts;
const rec_counts *rec_counted(void);

void rec_test_list(int as_json);
void rec_timers(const timer_info *ti, int best, const char *mpi_library);
void rec_context(const run_context *rc);
void rec_warning(const char *kind, const char *message, const char *hint);

typedef struct {
  const char *test;
  long points;
} plan_entry;
void rec_plan(const plan_entry *tests, int ntests, long total, double budget_s);
void rec_end(double seconds);

/* Where a point sits in the run: its test, context (NULL before parameters apply), index. */
typedef struct {
  const scope_test *test;
  const scope_ctx *c;
  long index, npoints;
} rec_where;
void rec_skip(const rec_where *at, const char *reason);
void rec_error(const rec_where *at, const char *message);

typedef struct {
  rec_where at;
  const bufset *buffers;
  const measured *m;
  double seconds;
  int validated; /* data checks passed: 1 before measuring, 2 before and after */
  int samples;   /* raw samples in the record */
} point_result;
void rec_point(const point_result *p);

/* One step of a pairs-timed test (pairs.c): a row per pair measured, PAIR_COLS numbers each:
 * ranks a < b, round trips timed, then the one-way time's median, its 95 % interval and
 * minimum, us.  Streamed as the step ends, so a sweep of 16,384 ranks shows as it goes. */
enum { PAIR_COLS = 7 };
typedef struct {
  int step, steps, one_at_a_time, npairs;
  const double *rows;
  double seconds, slice_s; /* the step on rank 0's wall clock (barrier and gather included), and
                              the share of the budget each pair was given */
} pairs_step;
void rec_pairs(const rec_where *at, const pairs_step *ps);
/* records_window.c: the window part of a point record, and a paired test's reference (k: ns per
 * iteration to us per operation). */
void rec_write_window(json_w *w, const windowed *W);
void rec_write_reference(json_w *w, const windowed *W, double k, int samples);

#endif
