/* A clock object and this rank's own clock: injected offsets and drifts, reading, waiting, and
 * the conversions to and from global time.  The synchronisation (clock_sync.c) and the domains
 * (clock_domain.c) build on it; it calls neither, so the files form no circle (issue 56). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock_state.h"

static uint64_t splitmix64(uint64_t *x) {
  uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/* Under SimGrid every host's clock is the simulated clock plus an offset and a drift drawn
 * from SCOPE_SIM_CLOCKS="SEED:MAX_OFFSET_US:MAX_DRIFT_PPM" and the host's name (uniform within
 * +-MAX), so every rank of a host reads one clock and the record's truth is known (issue 55). */
static void simulated_host_clock(scope_clock *c) {
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
  c->inj_offset_ns = (2 * u1 - 1) * max_off_us * 1e3;
  c->inj_drift = (2 * u2 - 1) * max_ppm * 1e-6;
  c->injected = 1;
  c->inj_base_ns = 0; /* the simulated clock's zero, the same for every rank of the host */
}

/* SCOPE_TEST_CLOCK="rank:offset_us:drift_ppm[;...]" adds a known offset and drift to that
 * rank's clock, so the estimator's recovery can be checked (such a rank no longer reads the
 * shared counter, so it is a domain of its own). */
static void injected_clock(scope_clock *c) {
  const char *spec = getenv("SCOPE_TEST_CLOCK");
  if (!spec)
    return;
  char *copy = strdup(spec), *save = NULL;
  if (!copy)
    return;
  for (char *tok = strtok_r(copy, ";,", &save); tok; tok = strtok_r(NULL, ";,", &save)) {
    int r;
    double off_us, drift_ppm;
    if (sscanf(tok, "%d:%lf:%lf", &r, &off_us, &drift_ppm) == 3 && r == c->rank) {
      c->inj_offset_ns = off_us * 1e3;
      c->inj_drift = drift_ppm * 1e-6;
      c->injected = off_us != 0 || drift_ppm != 0;
    }
  }
  free(copy);
  c->inj_base_ns = (double)timer_read_inline(c->kind) * c->tick_ns;
}

int scl_open(MPI_Comm comm, int dup, timer_kind kind, double tick_ns, const scope_clock_options *o, scope_clock **out) {
  scope_clock_options none = {0};
  if (!o)
    o = &none;
  const cm_method *m = o->method ? cm_method_named(o->method) : &cm_methods[0];
  if (!out || !m || kind >= TIMER_COUNT || !(tick_ns > 0) || o->span_s < 0)
    return SCOPE_CLOCK_EINVAL;
  scope_clock *c = calloc(1, sizeof *c);
  if (!c)
    return SCOPE_CLOCK_ENOMEM;
  c->own_comm = dup;
  if (dup && MPI_Comm_dup(comm, &c->comm) != MPI_SUCCESS) {
    free(c);
    return SCOPE_CLOCK_EMPI;
  }
  if (!dup)
    c->comm = comm;
  MPI_Comm_rank(c->comm, &c->rank);
  MPI_Comm_size(c->comm, &c->size);
  c->kind = kind;
  c->tick_ns = tick_ns;
  c->method = m;
  c->per_rank = o->per_rank;
  c->span_s = o->span_s > 0 ? o->span_s : 0.05;
  c->map = cm_identity(0);
  c->parent = -1;
  c->domain = c->leaders = MPI_COMM_NULL;
  simulated_host_clock(c);
  injected_clock(c);
  *out = c;
  return SCOPE_CLOCK_OK;
}

double scl_local_ns(const scope_clock *c, uint64_t ticks) {
  double t = (double)ticks * c->tick_ns;
  return t + c->inj_offset_ns + c->inj_drift * (t - c->inj_base_ns);
}

double scope_clock_local_ns(const scope_clock *c) {
  return c ? scl_local_ns(c, timer_read_inline(c->kind)) : NAN;
}

void scl_wait_local(const scope_clock *c, double local_ns) {
#ifdef SCOPE_SIM
  /* the local clock runs 1 + drift as fast as the simulated one a sleep counts: a wait of 429 ms
   * at +20 ppm woke 8.6 us past its start, and a window-timed kernel lost every repetition */
  double left = (local_ns - scope_clock_local_ns(c)) / (1.0 + c->inj_drift);
  if (left > 0) {
    struct timespec t = {(time_t)(left / 1e9), (long)fmod(left, 1e9)};
    nanosleep(&t, NULL); /* smpicc makes this SMPI's simulated sleep */
  }
#else
  while (scope_clock_local_ns(c) < local_ns)
    ;
#endif
}

double scl_to_local_ns(const scope_clock *c, double g) {
  return cm_to_local(&c->map, g);
}

/* A NULL clock reads NaN (scope_clock.h): a number that no comparison passes. */
double scope_clock_to_global_ns(const scope_clock *c, double l) {
  return c ? cm_to_global(&c->map, l) : NAN;
}

double scope_clock_global_ns(const scope_clock *c, double *bound_ns) {
  double g = c ? cm_to_global(&c->map, scope_clock_local_ns(c)) : NAN;
  if (bound_ns)
    *bound_ns = c ? cm_bound(&c->map, g) : NAN;
  return g;
}

double scope_clock_bound_ns(const scope_clock *c, double g) {
  return c ? cm_bound(&c->map, g) : NAN;
}

double scope_clock_sync_seconds(const scope_clock *c) {
  return c ? c->cost_s : NAN;
}

const char *scl_timer_text(timer_kind k) {
  return k == TIMER_TSC     ? "invariant TSC (cpu flags constant_tsc, nonstop_tsc)"
         : k == TIMER_CLOCK ? "CLOCK_MONOTONIC_RAW"
                            : "MPI_Wtime";
}
