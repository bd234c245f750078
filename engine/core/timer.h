/* Timers (SCOPE §6.3.5, App. B): a calibrated invariant TSC, CLOCK_MONOTONIC_RAW and
 * MPI_Wtime.  Each is characterised at start-up (resolution, read overhead) and the
 * engine times with the best one.  Values are raw ticks; convert with tick_ns. */
#ifndef SCOPE_TIMER_H
#define SCOPE_TIMER_H
#include <stdint.h>

typedef enum { TIMER_TSC = 0, TIMER_CLOCK = 1, TIMER_MPI = 2, TIMER_FAKE = 3, TIMER_COUNT } timer_kind;

typedef struct {
  const char *name;
  int available;
  const char *why_unavailable; /* NULL when available */
  double tick_ns;              /* nanoseconds per tick */
  double resolution_ns;        /* smallest non-zero step seen between two reads */
  double overhead_ns;          /* median cost of one read */
  double reported_tick_ns;     /* what the API itself claims (clock_getres, MPI_Wtick) */
} timer_info;

/* Source of MPI_Wtime; the core stays MPI-free so it can be unit tested with plain cc. */
typedef double (*wtime_fn)(void);

void timer_set_wtime(wtime_fn fn, double wtick_s);
/* Characterise every timer; fills info[TIMER_COUNT - 1] (the fake timer is not listed). */
void timer_probe(timer_info info[TIMER_COUNT]);
/* The available timer with the smallest resolution + overhead. */
timer_kind timer_best(const timer_info info[TIMER_COUNT]);
timer_kind timer_by_name(const char *name);
const char *timer_name(timer_kind k); /* "tsc", "clock_monotonic_raw", "mpi_wtime" */
void timer_select(timer_kind k, double tick_ns);
timer_kind timer_selected(void);
double timer_tick_ns(void);

/* A deterministic stand-in for tests: each read advances by the next value of a sequence
 * supplied by the caller (in ticks of 1 ns). */
typedef uint64_t (*fake_step_fn)(void *arg);
void timer_use_fake(fake_step_fn step, void *arg);

uint64_t timer_read_kind(timer_kind k);

/* Wall time in seconds (CLOCK_MONOTONIC), for budgets and durations, never for samples. */
double timer_wall_s(void);

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif
#include <time.h>

extern timer_kind timer_current_;
extern wtime_fn timer_wtime_;
extern fake_step_fn timer_fake_step_;
extern void *timer_fake_arg_;
extern uint64_t timer_fake_now_;

/* One reader for every timer: inlined into the timed loop through timer_now(), and used by
 * the probe and calibration through timer_read_kind(). */
static inline uint64_t timer_read_inline(timer_kind k) {
  switch (k) {
#if defined(__x86_64__) || defined(__i386__)
  case TIMER_TSC: {
    unsigned aux;
    /* rdtscp waits for earlier instructions to retire, so the timed operation cannot
     * drift past the stamp (the "anti-warping" of SCOPE §6.3.5). */
    return __rdtscp(&aux);
  }
#endif
  case TIMER_CLOCK: {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
  }
  case TIMER_MPI:
    /* Picoseconds keep MPI_Wtime's double precision without rounding to whole ns. */
    return timer_wtime_ ? (uint64_t)(timer_wtime_() * 1e12) : 0;
  case TIMER_FAKE:
    timer_fake_now_ += timer_fake_step_(timer_fake_arg_);
    return timer_fake_now_;
  default:
    return 0;
  }
}

static inline uint64_t timer_now(void) {
  return timer_read_inline(timer_current_);
}

#endif
