#include "timer.h"

#include "stats.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

timer_kind timer_current_ = TIMER_CLOCK;
wtime_fn timer_wtime_ = NULL;
fake_step_fn timer_fake_step_ = NULL;
void *timer_fake_arg_ = NULL;
uint64_t timer_fake_now_ = 0;

static double wtick_s_ = 0.0;
static double selected_tick_ns_ = 1.0;

static const char *const names[TIMER_COUNT] = {"tsc", "clock_monotonic_raw", "mpi_wtime", "fake"};

void timer_set_wtime(wtime_fn fn, double wtick_s) {
  timer_wtime_ = fn;
  wtick_s_ = wtick_s;
}

static uint64_t clock_ns(void) {
  return timer_read_inline(TIMER_CLOCK);
}

uint64_t timer_read_kind(timer_kind k) {
  return timer_read_inline(k);
}

/* Invariant TSC: it ticks at a constant rate through frequency and sleep states, which is
 * what makes it a wall clock.  Linux reports both properties as cpu flags. */
static int tsc_invariant(const char **why) {
#if defined(__x86_64__) || defined(__i386__)
  FILE *f = fopen("/proc/cpuinfo", "r");
  if (!f) {
    *why = "cannot read /proc/cpuinfo to check for an invariant TSC";
    return 0;
  }
  char line[8192];
  int constant = 0, nonstop = 0;
  while (fgets(line, sizeof line, f)) {
    if (strncmp(line, "flags", 5) != 0)
      continue;
    constant = strstr(line, " constant_tsc") != NULL;
    nonstop = strstr(line, " nonstop_tsc") != NULL;
    break;
  }
  fclose(f);
  if (!(constant && nonstop)) {
    *why = "the TSC is not invariant (cpu flags constant_tsc and nonstop_tsc missing)";
    return 0;
  }
  return 1;
#else
  *why = "no TSC on this architecture";
  return 0;
#endif
}

#ifdef SCOPE_SIM
enum { SIMULATED = 1 }; /* built with smpicc for SimGrid (engine/Makefile's sim target) */
#else
enum { SIMULATED = 0 };
#endif

/* Median cost of one read, from blocks of back-to-back reads, and the smallest non-zero
 * step: a resolution coarser than the read cost shows up as repeated equal values.  Under
 * SimGrid every read is a simulator call and the simulated clock has no cost of its own to
 * find: 64 blocks of 256 reads on every rank were 16.8 million calls at 1,024 ranks, most of
 * the 117 s a one-point run took (issue 55), so a simulated rank reads 4 blocks of 16. */
static void characterise(timer_kind k, double tick_ns, timer_info *out) {
  enum { BLOCKS = SIMULATED ? 4 : 64, READS = SIMULATED ? 16 : 256 };
  double per_read[BLOCKS];
  uint64_t min_step = UINT64_MAX;
  for (int b = 0; b < BLOCKS; b++) {
    uint64_t first = timer_read_kind(k), prev = first;
    for (int i = 0; i < READS; i++) {
      uint64_t t = timer_read_kind(k);
      if (t > prev && t - prev < min_step)
        min_step = t - prev;
      prev = t;
    }
    per_read[b] = (double)(prev - first) * tick_ns / READS;
  }
  stats_sort(per_read, BLOCKS);
  out->overhead_ns = per_read[BLOCKS / 2];
  out->resolution_ns = min_step == UINT64_MAX ? NAN : (double)min_step * tick_ns;
}

/* Ticks per ns against CLOCK_MONOTONIC_RAW over ~12 ms of spinning, best of three (4 ms holds a
 * 20 ns clock read to 5 ppm): the
 * TSC's nominal frequency is not exposed portably, and a short spin keeps start-up fast. */
static double calibrate_tsc(void) {
  double best = NAN;
  for (int rep = 0; rep < 3; rep++) {
    uint64_t c0 = clock_ns(), t0 = timer_read_kind(TIMER_TSC);
    uint64_t c1;
    do
      c1 = clock_ns();
    while (c1 - c0 < 4000000ull);
    uint64_t t1 = timer_read_kind(TIMER_TSC);
    double ns_per_tick = (double)(c1 - c0) / (double)(t1 - t0);
    if (isnan(best) || ns_per_tick < best)
      best = ns_per_tick;
  }
  return best;
}

void timer_probe(timer_info info[TIMER_COUNT]) {
  memset(info, 0, sizeof(timer_info) * TIMER_COUNT);
  for (int k = 0; k < TIMER_COUNT; k++)
    info[k].name = names[k];

  const char *why = NULL;
  if (SIMULATED) {
    /* Under SimGrid a host counter times the host, not the simulated platform; and smpicc
     * makes clock_gettime the simulated clock, on which the TSC's 12 ms calibration spin was
     * millions of simulator calls (10 s of a 4-rank run's start, issue 55).  Only MPI_Wtime
     * is probed. */
    why = "under SimGrid only MPI_Wtime reads the simulated clock";
    info[TIMER_TSC].why_unavailable = info[TIMER_CLOCK].why_unavailable = why;
  } else if (tsc_invariant(&why)) {
    info[TIMER_TSC].available = 1;
    info[TIMER_TSC].tick_ns = calibrate_tsc();
    info[TIMER_TSC].reported_tick_ns = info[TIMER_TSC].tick_ns;
  } else {
    info[TIMER_TSC].why_unavailable = why;
  }

  if (!SIMULATED) {
    struct timespec res;
    clock_getres(CLOCK_MONOTONIC_RAW, &res);
    info[TIMER_CLOCK].available = 1;
    info[TIMER_CLOCK].tick_ns = 1.0;
    info[TIMER_CLOCK].reported_tick_ns = res.tv_sec * 1e9 + res.tv_nsec;
  }

  if (timer_wtime_) {
    info[TIMER_MPI].available = 1;
    info[TIMER_MPI].tick_ns = 1e-3;
    info[TIMER_MPI].reported_tick_ns = wtick_s_ * 1e9;
  } else {
    info[TIMER_MPI].why_unavailable = "MPI is not initialised";
  }
  info[TIMER_FAKE].why_unavailable = "only for tests";

  for (int k = 0; k < TIMER_FAKE; k++)
    if (info[k].available)
      characterise((timer_kind)k, info[k].tick_ns, &info[k]);
}

timer_kind timer_best(const timer_info info[TIMER_COUNT]) {
  timer_kind best = TIMER_CLOCK;
  double best_cost = INFINITY;
  for (int k = 0; k < TIMER_FAKE; k++) {
    if (!info[k].available)
      continue;
    double res = isnan(info[k].resolution_ns) ? info[k].reported_tick_ns : info[k].resolution_ns;
    double cost = res + info[k].overhead_ns;
    if (cost < best_cost) {
      best_cost = cost;
      best = (timer_kind)k;
    }
  }
  return best;
}

timer_kind timer_by_name(const char *name) {
  for (int k = 0; k < TIMER_COUNT; k++)
    if (strcmp(name, names[k]) == 0)
      return (timer_kind)k;
  if (strcmp(name, "clock") == 0)
    return TIMER_CLOCK;
  if (strcmp(name, "mpi") == 0)
    return TIMER_MPI;
  return TIMER_COUNT;
}

const char *timer_name(timer_kind k) {
  return k < TIMER_COUNT ? names[k] : "none";
}

void timer_select(timer_kind k, double tick_ns) {
  timer_current_ = k;
  selected_tick_ns_ = tick_ns;
}

timer_kind timer_selected(void) {
  return timer_current_;
}
double timer_tick_ns(void) {
  return selected_tick_ns_;
}

void timer_use_fake(fake_step_fn step, void *arg) {
  timer_fake_step_ = step;
  timer_fake_arg_ = arg;
  timer_fake_now_ = 0;
  timer_select(TIMER_FAKE, 1.0);
}

double timer_wall_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
