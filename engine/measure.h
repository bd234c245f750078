/* Timing methods: how the repetitions of one point are timed.  Each method is one entry of a
 * table (as ReproMPI keeps its synchronisation methods), chosen by the test's timing kind and
 * --timing:
 *   loop     back-to-back iterations with chained timestamps (point-to-point)
 *   window   each repetition starts at an agreed time on the global clock (collectives)
 *   barrier  each repetition starts after a barrier (collectives, for comparison)
 *   osu      OSU 7's collectives: each rank's own call timed by MPI_Wtime, a barrier after each,
 *            a repetition's sample the mean over ranks (its mean is OMB's figure)
 * Per-rank timestamps stay local inside the timed loop and are reduced after it. */
#ifndef SCOPE_MEASURE_H
#define SCOPE_MEASURE_H
#include "buffers.h"
#include "core/rep.h"
#include "scope.h"

/* What window and barrier timing keep beyond the samples: per kept repetition and rank,
 * start and end relative to the repetition's common start, ns (rank 0 only, rank-major,
 * a row of `cap` per rank). */
enum { WINDOWED_ON_CLOCK, WINDOWED_BARRIER, WINDOWED_OSU };

typedef struct {
  int active, barrier; /* barrier: WINDOWED_*, 0 for a common start on the global clock */
  const char *why;     /* barrier timing: why it was used */
  long invalid, total;
  double window_ns, sync_error_ns;
  int nranks;
  int timed; /* ranks whose own time is the operation's (not c->untimed), rank 0 */
  int cycle; /* repetitions whose mean is one sample (scope_ctx.cycle; 1 when paired) */
  double *start, *end;
  size_t nrep, cap;
  double *ref; /* paired: the reference variant's valid samples, ns (rank 0) */
  size_t nref, refcap;
} windowed;

typedef struct {
  rep_state rs;
  windowed w;
  long faults; /* page faults (minor and major) this rank's thread took in its measured chunks;
                  after measure_point, rank 0 holds the largest over the ranks */
} measured;

typedef struct {
  const scope_test *test;
  scope_ctx *c;
  void *state;
  bufset *buffers;
  rep_settings rep;     /* with the timer's cost filled in */
  double sync_error_ns; /* window: the clock's predicted error, largest over the ranks */
  double warm_ns;       /* loop: > 0 when the data check already ran one iteration, this long, and
                           the budget holds no more warm-up than that (rep_warm_from) */
  int osu_loop;         /* loop: OSU 7's definition (--loop osu): two MPI_Wtime reads inside every
                           iteration, no batching; its figure is the samples' mean */
  const void *where;    /* pairs: the point's rec_where, for its per-step records */
  uint64_t pair_seed;   /* pairs: the schedule's seed (pairs_seed) */
} measure_args;

typedef struct {
  const char *name;
  /* 0, or -1 when memory for the samples ran short (on any rank, agreed collectively) */
  int (*measure)(const measure_args *a, measured *m);
} timing_method;

extern const timing_method timing_loop, timing_window, timing_barrier, timing_osu, timing_pairs;

/* pairs.c: the seed of a point's pairing in a launch, and step 0's partner set in c (the
 * pairing the data checks use; left as it was when out of memory). */
uint64_t pairs_seed(uint64_t run_seed, long launch, long index);
void pairs_first_partner(scope_ctx *c, uint64_t seed);

void measured_free(measured *m);

/* Writes through `bytes` at p before a timed loop writes them: a first write inside the loop is
 * a page fault every 4 KiB, microseconds each on a VM (issue 52: 8 ns an iteration of an 8 B
 * put).  SCOPE_TEST_UNTOUCHED (a test hook) leaves them untouched. */
void measure_touch(void *p, size_t bytes);
/* Page faults this thread has taken so far (0 where not counted, and under SimGrid): the timing
 * methods add their measured loops' to measured.faults, since a loop that faults times the kernel. */
long measure_faults(void);

#endif
