/* The global clock's state and this rank's own clock (see gclock.h): injected offsets and
 * drifts, reading, waiting, and the conversions to and from global time.  The synchronisation
 * (gclock.c) and the domains and record (gclock_domain.c) build on it; it calls neither, so the
 * three files form no circle (issue 56). */
#include "gclock.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/clockmodel.h"
#include "core/timer.h"
#include "gclock_internal.h"

gclock_state gclock_self;
#define S gclock_self

static uint64_t splitmix64(uint64_t *x) {
  uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/* Under SimGrid every host's clock is the simulated clock plus an offset and a drift drawn
 * from SCOPE_SIM_CLOCKS="SEED:MAX_OFFSET_US:MAX_DRIFT_PPM" and the host's name (uniform within
 * +-MAX), so every rank of a host reads one clock and the record's truth is known (issue 55). */
static void simulated_host_clock(void) {
  const char *spec = getenv("SCOPE_SIM_CLOCKS");
  unsigned long long seed;
  double max_off_us, max_ppm;
  if (!SIMULATED_CLOCK || !spec || sscanf(spec, "%llu:%lf:%lf", &seed, &max_off_us, &max_ppm) != 3)
    return;
  char host[MPI_MAX_PROCESSOR_NAME];
  int len = 0;
  MPI_Get_processor_name(host, &len);
  uint64_t x = seed;
  for (int i = 0; i < len; i++) /* FNV-1a of the name, folded into the seed */
    x = (x ^ (unsigned char)host[i]) * 1099511628211ull;
  double u1 = (double)(splitmix64(&x) >> 11) * 0x1.0p-53, u2 = (double)(splitmix64(&x) >> 11) * 0x1.0p-53;
  S.inj_offset_ns = (2 * u1 - 1) * max_off_us * 1e3;
  S.inj_drift = (2 * u2 - 1) * max_ppm * 1e-6;
  S.injected = 1;
  S.inj_base_ns = 0; /* the simulated clock's zero, the same for every rank of the host */
}

void gclock_init(int rank) {
  memset(&S, 0, sizeof S);
  S.rank = rank;
  S.map = cm_identity(0);
  S.parent = -1;
  S.domain = S.leaders = MPI_COMM_NULL;
  simulated_host_clock();
  const char *spec = getenv("SCOPE_TEST_CLOCK");
  if (!spec)
    return;
  char *copy = strdup(spec), *save = NULL;
  for (char *tok = strtok_r(copy, ";,", &save); tok; tok = strtok_r(NULL, ";,", &save)) {
    int r;
    double off_us, drift_ppm;
    if (sscanf(tok, "%d:%lf:%lf", &r, &off_us, &drift_ppm) == 3 && r == rank) {
      S.inj_offset_ns = off_us * 1e3;
      S.inj_drift = drift_ppm * 1e-6;
      S.injected = off_us != 0 || drift_ppm != 0;
    }
  }
  free(copy);
  S.inj_base_ns = (double)timer_now() * timer_tick_ns();
}

double gclock_local_ns(uint64_t ticks) {
  double t = (double)ticks * timer_tick_ns();
  return t + S.inj_offset_ns + S.inj_drift * (t - S.inj_base_ns);
}

double gclock_now_local(void) {
  return gclock_local_ns(timer_now());
}

void gclock_wait_local(double local_ns) {
#ifdef SCOPE_SIM
  double left = local_ns - gclock_now_local();
  if (left > 0) {
    struct timespec t = {(time_t)(left / 1e9), (long)fmod(left, 1e9)};
    nanosleep(&t, NULL); /* smpicc makes this SMPI's simulated sleep */
  }
#else
  while (gclock_now_local() < local_ns)
    ;
#endif
}

double gclock_to_local(double g) {
  return cm_to_local(&S.map, g);
}

double gclock_to_global(double l) {
  return cm_to_global(&S.map, l);
}

double gclock_now_global(void) {
  return gclock_to_global(gclock_now_local());
}

double gclock_predicted_error_ns(double g) {
  return cm_bound(&S.map, g);
}

double gclock_floor_ns(void) {
  return S.map.e0;
}

double gclock_last_cost_s(void) {
  return S.cost_s;
}

double gclock_last_end_s(void) {
  return S.end_s;
}
