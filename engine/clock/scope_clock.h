/* SCOPE's clock as a library (issue 57): the timers SCOPE characterises and its global clock,
 * with a bound on every reading's error, for a program's own events.
 *
 *   scope_clock *c;
 *   scope_clock_init(MPI_COMM_WORLD, NULL, &c);          collective: timer chosen, clocks synchronised
 *   double bound, t = scope_clock_global_ns(c, &bound);  this rank's time on rank 0's clock, +- bound
 *   scope_clock_keep(c, 1000, 1.0);                      collective: synchronise again when needed
 *   scope_clock_finalize(&c);                            collective
 *
 * Global time is rank 0's clock (of the communicator given), in ns from an arbitrary zero.  The
 * bound holds with the confidence docs/method.md states ("The global clock": half the best round
 * trip plus 3.5 standard errors of the fitted line) and grows with the time since the last
 * synchronisation at the drift's uncertainty.  A clock object belongs to one thread of one rank;
 * objects share no state, so each thread may have its own (on its own communicator).
 * docs/clock-library.md has the examples and what a reading costs.
 *
 * Arguments: a call given an argument out of its domain returns SCOPE_CLOCK_EINVAL and changes
 * nothing; a collective call (init, sync, keep, finalize) first agrees on that over the
 * communicator, so one rank's bad argument fails it on every rank instead of leaving the others
 * waiting.  A NULL clock is such an argument: the reading functions, which return a number,
 * return NaN for it (and set *bound_ns to NaN), scope_clock_timer returns NULL.  A clock pointer
 * used after scope_clock_finalize is undefined (finalize sets the caller's pointer to NULL). */
#ifndef SCOPE_CLOCK_H
#define SCOPE_CLOCK_H
#include <mpi.h>

#define SCOPE_CLOCK_VERSION_MAJOR 1
#define SCOPE_CLOCK_VERSION_MINOR 1
#define SCOPE_CLOCK_VERSION_PATCH 0
#define SCOPE_CLOCK_VERSION "1.1.0"

#if defined(__GNUC__)
#define SCOPE_CLOCK_API __attribute__((visibility("default"))) /* the library hides the rest */
#else
#define SCOPE_CLOCK_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef struct scope_clock scope_clock;

/* Every field's zero is its default, so `scope_clock_options o = {0};` (or NULL) is the engine's
 * own choice. */
typedef struct {
  const char *timer;  /* "tsc", "clock_monotonic_raw" or "mpi_wtime"; NULL: the best measured here */
  const char *method; /* "tree" (binomial, ceil(log2 hosts) rounds) or "linear" (SKaMPI's); NULL: tree */
  int per_rank;       /* 1: every rank a clock domain of its own, as if each had a host of its own */
  double span_s;      /* seconds one synchronisation spans (its batches spread over it); 0: 0.05; at most 60 */
  double warm_s;      /* cap on the spin before the first synchronisation; 0: 0.2; < 0: no spin; at most 60 */
} scope_clock_options;

enum {
  SCOPE_CLOCK_OK = 0,
  SCOPE_CLOCK_EINVAL = 1, /* an argument out of its domain (a NULL, an unknown timer or method) */
  SCOPE_CLOCK_ENOMEM = 2, /* out of memory */
  SCOPE_CLOCK_EIO = 3,    /* an events file could not be opened or written */
  SCOPE_CLOCK_ESTATE = 4, /* called in the wrong state (events not open, or open twice) */
  SCOPE_CLOCK_EEXIST = 5, /* another clock of this process writes that events file (one prefix, one rank) */
  SCOPE_CLOCK_EMPI = 6    /* an MPI call failed (the communicator is not usable) */
};

/* Collective over comm: chooses the timer (as SCOPE's engine does), finds the clock domains
 * (ranks on one kernel reading one counter), spins until the core runs steadily, synchronises.
 * The communicator is duplicated; MPI must be initialised and not finalised; MPI_COMM_NULL is
 * EINVAL (on that rank alone: it shares no communicator with the others). */
SCOPE_CLOCK_API int scope_clock_init(MPI_Comm comm, const scope_clock_options *opts, scope_clock **out);
/* Collective: synchronise again (the bound returns to its floor, the drift is refitted). */
SCOPE_CLOCK_API int scope_clock_sync(scope_clock *c);
/* Collective: synchronise again only where the drift model says some rank's bound would pass
 * bound_ns within ahead_s seconds and a synchronisation would bring it down (SCOPE's own rule).
 * Returns 1 when it synchronised, 0 when not needed, or an error code negated. */
SCOPE_CLOCK_API int scope_clock_keep(scope_clock *c, double bound_ns, double ahead_s);

/* This rank's local timer, in ns (the chosen timer, calibrated; no synchronisation). */
SCOPE_CLOCK_API double scope_clock_local_ns(const scope_clock *c);
/* This rank's time on the global clock, in ns; *bound_ns (when not NULL) its error bound. */
SCOPE_CLOCK_API double scope_clock_global_ns(const scope_clock *c, double *bound_ns);
/* A local reading taken earlier, on the global clock; the bound at a global time. */
SCOPE_CLOCK_API double scope_clock_to_global_ns(const scope_clock *c, double local_ns);
SCOPE_CLOCK_API double scope_clock_bound_ns(const scope_clock *c, double global_ns);
/* The timer's name, and the last synchronisation's wall time in seconds. */
SCOPE_CLOCK_API const char *scope_clock_timer(const scope_clock *c);
SCOPE_CLOCK_API double scope_clock_sync_seconds(const scope_clock *c);

/* Events: each rank writes PREFIX.RANK.jsonl (JSON Lines, SCOPE's records; `scope import PREFIX`
 * reads them as a run): a header with this rank's clock, then one line an event with its
 * global time and bound.  Writes are buffered; the file is complete once closed (by
 * scope_clock_events_close or scope_clock_finalize).  A file another clock of this process has
 * open is EEXIST.  An event's name is 1 to 64 bytes of UTF-8 with no control character (what
 * `scope import` reads); any other is EINVAL. */
SCOPE_CLOCK_API int scope_clock_events_open(scope_clock *c, const char *prefix);
SCOPE_CLOCK_API int scope_clock_event(scope_clock *c, const char *name);
SCOPE_CLOCK_API int scope_clock_events_close(scope_clock *c);

/* Collective: closes the events, frees the clock and its communicators; *c becomes NULL. */
SCOPE_CLOCK_API int scope_clock_finalize(scope_clock **c);

SCOPE_CLOCK_API const char *scope_clock_version(void);
SCOPE_CLOCK_API const char *scope_clock_strerror(int code);

#ifdef __cplusplus
}
#endif
#endif
