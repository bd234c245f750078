/* Pairs timing: every pair of ranks, in steps of disjoint pairs (core/pairing.h), each pair
 * timing its own round trips (SCOPE_TIMING_PAIRS).  All pairs of a step at once (the parallel
 * mode, as LinkTest runs: the fabric loaded as a job loads it) or one pair at a time, a barrier
 * between them (the serial mode: a link alone).
 *
 * Within a pair the lower rank (the pinger) decides and times: a few untimed round trips, a
 * pilot of doubling batches that sets how many round trips fit the pair's share of the budget
 * (its step's share, divided among the step's pairs in the serial mode), told to the partner,
 * then that many round trips (at least MIN_TRIPS), each timestamped locally.  Its samples stay on the pinger; after
 * the step the pairs' summaries (median, the median's 95 % interval, minimum) are gathered
 * to rank 0 and written as one `pairs` record, so a long sweep streams as it goes.
 *
 * The point's own samples are the pairs' medians: its median is the typical pair's one-way
 * time, its spread the spread across pairs (records.md).  Cost: steps x (the step's slice +
 * a barrier + a gather of PAIR_COLS doubles a rank), with steps = N - 1 (N even) or N. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/pairing.h"
#include "core/reservoir.h"
#include "core/stats.h"
#include "core/timer.h"
#include "measure.h"
#include "records.h"

#define UNTIMED_TRIPS 2 /* first contact (connection set-up, page faults) before the pilot */
#define MIN_TRIPS 10    /* a median interval needs at least 6; 10 for one from the middle of them */
#define MAX_TRIPS 100000
#define PAIR_TAG 0x5ca1
/* The point's own samples are the pairs' medians, or a uniform sample of this many of them
 * (core/reservoir.h): 16,384 ranks have 134 million pairs, which the store keeps in
 * its pairs rows; the point record summarises, and must not grow as N^2. */
#define POINT_SAMPLES_MAX 65536

uint64_t pairs_seed(uint64_t run_seed, long launch, long index) {
  /* per launch and point: replicate launches pair the ranks otherwise, so a slow pair is seen
   * in other company, and the record names every pair it measured */
  return run_seed ^ (0x9e3779b97f4a7c15ull * (uint64_t)(launch + 1)) ^ (0xd1b54a32d192ed03ull * (uint64_t)(index + 1));
}

static void set_partner(scope_ctx *c, const pairing *p, int step) {
  c->peer = pairing_partner(p, step, c->rank);
  c->pinger = c->peer >= 0 && c->rank < c->peer;
}

void pairs_first_partner(scope_ctx *c, uint64_t seed) {
  pairing p;
  if (pairing_init(&p, c->nranks, seed))
    return; /* out of memory: c->peer stays as it was; measure_pairs fails on every rank alike */
  set_partner(c, &p, 0);
  pairing_free(&p);
}

static void trips(const measure_args *a, long n) {
  for (long i = 0; i < n; i++) {
    buffers_next(a->buffers, a->c);
    a->test->run(a->c, a->state);
  }
}

/* One pair's measurement; on the pinger, fills row (PAIR_COLS numbers) and returns the
 * median round trip (ns), else returns NaN.  work: room for MAX_TRIPS doubles.  The page faults
 * either side takes in the timed round trips are added to *faults. */
static double measure_pair(const measure_args *a, double slice_s, double *work, double *row, long *faults) {
  scope_ctx *c = a->c;
  trips(a, UNTIMED_TRIPS);
  /* The pilot: batches of 1, 2, 4 ... round trips, each announced to the partner, until one
   * takes a tenth of the slice; a first round trip alone can be far from the steady one (a
   * partner still busy elsewhere, a cold path).  0 announces the timed count follows. */
  long n = 0, batch = 1;
  double spent = 0, one = 0;
  for (;;) {
    if (c->pinger) {
      long say = spent < 0.1 * slice_s && batch <= MAX_TRIPS ? batch : 0;
      MPI_Send(&say, 1, MPI_LONG, c->peer, PAIR_TAG, c->comm);
      if (!say)
        break;
      double t0 = timer_wall_s();
      trips(a, batch);
      double took = timer_wall_s() - t0;
      spent += took;
      one = took / (double)batch;
      batch *= 2;
    } else {
      MPI_Recv(&batch, 1, MPI_LONG, c->peer, PAIR_TAG, c->comm, MPI_STATUS_IGNORE);
      if (!batch)
        break;
      trips(a, batch);
    }
  }
  if (c->pinger) {
    n = one > 0 ? (long)fmin((slice_s - spent) / one, MAX_TRIPS) : MAX_TRIPS;
    n = n < MIN_TRIPS ? MIN_TRIPS : n;
    MPI_Send(&n, 1, MPI_LONG, c->peer, PAIR_TAG, c->comm);
  } else {
    MPI_Recv(&n, 1, MPI_LONG, c->peer, PAIR_TAG, c->comm, MPI_STATUS_IGNORE);
  }
  if (!c->pinger) {
    long f0 = measure_faults();
    trips(a, n);
    *faults += measure_faults() - f0;
    return NAN;
  }
  measure_touch(work, (size_t)n * sizeof *work);
  long f0 = measure_faults();
  double tick = timer_tick_ns();
  uint64_t prev = timer_now();
  for (long i = 0; i < n; i++) { /* chained timestamps: one read a round trip */
    buffers_next(a->buffers, c);
    a->test->run(c, a->state);
    uint64_t now = timer_now();
    work[i] = (double)(now - prev) * tick;
    prev = now;
  }
  *faults += measure_faults() - f0;
  stats_summary s;
  stats_summarise(work, (size_t)n, &s);
  double k = 1e-3 / c->ops_per_iter; /* ns a round trip -> us an operation */
  double v[PAIR_COLS] = {c->rank, c->peer, (double)n, s.median * k, s.ci_lo * k, s.ci_hi * k, s.min * k};
  for (int j = 0; j < PAIR_COLS; j++)
    row[j] = v[j];
  return s.median;
}

static int measure_pairs(const measure_args *a, measured *m) {
  scope_ctx *c = a->c;
  int n = c->nranks, steps = pairing_steps(n), per = pairing_pairs_per_step(n);
  int todo = c->sample_steps > 0 && c->sample_steps < steps ? c->sample_steps : steps;
  pairing p;
  int bad = rep_init(&m->rs, &a->rep) != 0 || pairing_init(&p, n, a->pair_seed) != 0, any = 0;
  double *work = bad ? NULL : malloc(MAX_TRIPS * sizeof *work);
  double *rows = c->rank == 0 && !bad ? malloc((size_t)n * PAIR_COLS * sizeof *rows) : NULL;
  long total = (long)todo * per, cap = total < POINT_SAMPLES_MAX ? total : POINT_SAMPLES_MAX;
  double *medians = c->rank == 0 && !bad ? malloc((size_t)(cap + 1) * sizeof *medians) : NULL;

  bad |= !work || (c->rank == 0 && (!rows || !medians));
  MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_LOR, c->comm);
  if (any) {
    free(work);
    free(rows);
    free(medians);
    pairing_free(&p);
    return -1;
  }
  double slice = a->rep.budget_s / (todo > 0 ? todo : 1) / (c->one_pair_at_a_time ? per : 1), t0 = timer_wall_s();
  reservoir kept = {medians, cap, 0, 0, a->pair_seed ^ 0x5851f42d4c957f2dull};
  for (int i = 0; i < todo; i++) {
    /* a sample spreads its steps over the sweep; each step still pairs every rank (one sits
     * out when n is odd), so every host's links are seen in each step measured */
    int step = (int)((long)i * steps / todo);
    double step_t0 = timer_wall_s();
    set_partner(c, &p, step);
    double row[PAIR_COLS];
    for (int j = 0; j < PAIR_COLS; j++)
      row[j] = -1; /* not a pinger: no pair of its own to report */
    if (c->one_pair_at_a_time) {
      int mine = pairing_slot(&p, step, c->rank);
      for (int k = 0; k < per; k++) {
        MPI_Barrier(c->comm);
        if (k == mine)
          measure_pair(a, slice, work, row, &m->faults);
      }
    } else {
      MPI_Barrier(c->comm);
      if (c->peer >= 0)
        measure_pair(a, slice, work, row, &m->faults);
    }
    MPI_Gather(row, PAIR_COLS, MPI_DOUBLE, rows, PAIR_COLS, MPI_DOUBLE, 0, c->comm);
    if (c->rank != 0)
      continue;
    int packed = 0; /* the pingers' rows, packed */
    for (int r = 0; r < n; r++)
      if (rows[r * PAIR_COLS] >= 0) {
        for (int j = 0; j < PAIR_COLS; j++)
          rows[packed * PAIR_COLS + j] = rows[r * PAIR_COLS + j];
        reservoir_offer(&kept, rows[packed * PAIR_COLS + 3] / (1e-3 / c->ops_per_iter)); /* ns a round trip */
        packed++;
      }
    pairs_step ps = {step, steps, c->one_pair_at_a_time, packed, rows, timer_wall_s() - step_t0, slice};
    rec_pairs(a->where, &ps);
  }
  if (c->rank == 0) {
    m->rs.warm_done = 1;
    m->rs.batch = 1;
    rep_feed(&m->rs, medians, (size_t)kept.kept, timer_wall_s() - t0);
    m->rs.stop = REP_MAX_COUNT; /* the sweep's pairs are all there are */
    m->rs.gave_up = 0;          /* they are pairs, not repetitions: no count was given up */
    if (kept.seen > kept.kept)
      snprintf(c->note, sizeof c->note, "the point's samples: a uniform sample of %ld of the %ld pairs' medians",
               kept.kept, kept.seen);
  }
  free(work);
  free(rows);
  free(medians);
  set_partner(c, &p, 0); /* the data check after measuring checks step 0's pairs, as before */
  pairing_free(&p);
  return 0;
}

const timing_method timing_pairs = {"pairs", measure_pairs};
