/* The global clock's synchronisation (see gclock.h): the domain leaders' tree of edges, each
 * fitted from batches of exchanges; the domains themselves are found in gclock_domain.c, the
 * record written there too, and this rank's clock is read in gclock_local.c. */
#include "gclock.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/clockmodel.h"
#include "core/timer.h"
#include "gclock_internal.h"

#define S gclock_self

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
