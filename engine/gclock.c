/* The global clock (see gclock.h): state, conversions and the synchronisation of the domain
 * leaders; the domains themselves are found in gclock_domain.c, the record written there too. */
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

enum { BATCHES = 12, EXCHANGES = 64, TAG = 7171 };

/* One edge, parent side: BATCHES batches spread over span_s, the smallest round trip of each
 * batch kept (x: this clock's midpoint, o: the child's offset, h: half the round trip). */
static void edge_parent(MPI_Comm comm, int child, double span_s, double *x, double *o, double *h) {
  double gap_ns = span_s * 1e9 / BATCHES;
  for (int b = 0; b < BATCHES; b++) {
    double t_next = gclock_now_local() + gap_ns, best = INFINITY;
    for (int e = 0; e < EXCHANGES; e++) {
      double t1 = gclock_now_local(), t2;
      MPI_Send(&t1, 1, MPI_DOUBLE, child, TAG, comm);
      MPI_Recv(&t2, 1, MPI_DOUBLE, child, TAG, comm, MPI_STATUS_IGNORE);
      double t3 = gclock_now_local();
      if (t3 - t1 < best) {
        best = t3 - t1;
        x[b] = 0.5 * (t1 + t3);
        o[b] = t2 - x[b];
        h[b] = 0.5 * (t3 - t1);
      }
    }
    if (b + 1 < BATCHES)
      gclock_wait_local(t_next);
  }
  double stop = NAN;
  MPI_Send(&stop, 1, MPI_DOUBLE, child, TAG, comm);
  S.exchanges += BATCHES * EXCHANGES;
}

/* The edge's fit: this synchronisation's batches give the offset; from the second
 * synchronisation on, the drift comes from the two fits' centres (cm_refit), whose bound
 * holds whatever the batches did within one span. */
static void edge_fit(edge_history *e, const double *x, const double *o, const double *h, cm_map *edge) {
  cm_map now;
  cm_fit(x, o, h, BATCHES, &now);
  *edge = e->have ? cm_refit(&e->fit, &now) : now;
  e->fit = now;
  e->have = 1;
}

/* One edge, child side: answer every ping with this clock's time until the parent stops. */
static void edge_child(MPI_Comm comm, int parent) {
  for (;;) {
    double t1;
    MPI_Recv(&t1, 1, MPI_DOUBLE, parent, TAG, comm, MPI_STATUS_IGNORE);
    if (isnan(t1))
      break;
    double t2 = gclock_now_local();
    MPI_Send(&t2, 1, MPI_DOUBLE, parent, TAG, comm);
  }
}

/* The leaders' synchronisation: every round's pairs measured at once (a leader waits only for
 * its own partner), then the maps composed from the reference down the tree. */
static void sync_leaders(MPI_Comm world, const gclock_opts *o) {
  MPI_Comm lc = S.leaders;
  int i, n;
  MPI_Comm_rank(lc, &i);
  MPI_Comm_size(lc, &n);
  int rounds = S.method->rounds(n), side;
  cm_map *edges = calloc((size_t)(rounds > 0 ? rounds : 1), sizeof *edges);
  if (!S.history) /* the same edges every synchronisation: the method and the leaders are the run's */
    S.history = calloc((size_t)(rounds > 0 ? rounds : 1), sizeof *S.history);
  for (int r = 0; r < rounds; r++) {
    int p = S.method->partner(i, r, n, &side);
    if (p < 0)
      continue;
    if (side) {
      double x[BATCHES], off[BATCHES], h[BATCHES];
      edge_parent(lc, p, o->span_s, x, off, h);
      edge_fit(&S.history[r], x, off, h, &edges[r]);
    } else {
      edge_child(lc, p);
    }
  }
  double msg[5];
  int parent = cm_parent(S.method, i, n);
  S.parent = -1;
  S.depth = 0;
  if (i == 0) {
    S.map = cm_identity(gclock_now_local());
  } else {
    MPI_Recv(msg, 5, MPI_DOUBLE, parent, TAG + 1, lc, MPI_STATUS_IGNORE);
    S.map = (cm_map){msg[0], msg[1], msg[2], msg[3], msg[4]};
    S.depth = cm_depth(S.method, i, n);
    MPI_Group lg, wg;
    MPI_Comm_group(lc, &lg);
    MPI_Comm_group(world, &wg);
    MPI_Group_translate_ranks(lg, 1, &parent, wg, &S.parent);
    MPI_Group_free(&lg);
    MPI_Group_free(&wg);
  }
  /* children in the order their own subtrees are widest, so the deepest paths start first */
  for (int r = rounds - 1; r >= 0; r--) {
    int p = S.method->partner(i, r, n, &side);
    if (p < 0 || !side)
      continue;
    cm_map c = cm_compose(&S.map, &edges[r]);
    double out[5] = {c.a, c.b, c.g0, c.e0, c.k};
    MPI_Send(out, 5, MPI_DOUBLE, p, TAG + 1, lc);
  }
  S.rounds = rounds;
  free(edges);
}

void gclock_sync(MPI_Comm comm, const gclock_opts *o) {
  double t0 = timer_wall_s();
  if (S.domain == MPI_COMM_NULL)
    gclock_find_domains(comm, o);
  S.method = cm_method_named(o->method);
  if (!S.method)
    S.method = &cm_methods[0]; /* the option table admits only the methods' names */
  S.exchanges = 0;
  if (S.leaders != MPI_COMM_NULL)
    sync_leaders(comm, o);
  /* the domain's members take the leader's map: same counter, same tick, same map */
  double msg[6] = {S.map.a, S.map.b, S.map.g0, S.map.e0, S.map.k, S.depth};
  MPI_Bcast(msg, 6, MPI_DOUBLE, 0, S.domain);
  S.map = (cm_map){msg[0], msg[1], msg[2], msg[3], msg[4]};
  S.depth = (int)msg[5];
  if (S.leaders == MPI_COMM_NULL)
    S.parent = -1; /* a member reads its leader's counter: no edge of its own */
  MPI_Barrier(comm);
  S.end_s = timer_wall_s();
  S.cost_s = S.end_s - t0;
  S.syncs++;
}
