/* The global clock's synchronisation: the domain leaders' tree of edges, each fitted from
 * batches of exchanges (docs/method.md, "The global clock").
 *
 * Across domains the leaders are synchronised pair by pair by a method of cm_methods
 * (core/clockmodel.h): a binomial tree in ceil(log2 H) rounds of disjoint pairs (default), or
 * SKaMPI's linear one.  Each pair fits the child's clock against the parent's (offset and drift)
 * with an error bound; the maps compose along the tree and the bounds add.  The domains are found
 * in clock_domain.c and this rank's clock is read in clock_local.c. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock_state.h"

enum { BATCHES = 12, EXCHANGES = 64, TAG = 7171 };

/* One edge, parent side: BATCHES batches spread over span_s, the smallest round trip of each
 * batch kept (x: this clock's midpoint, o: the child's offset, h: half the round trip). */
static void edge_parent(scope_clock *c, MPI_Comm comm, int child, double span_s, double *x, double *o, double *h) {
  double gap_ns = span_s * 1e9 / BATCHES;
  for (int b = 0; b < BATCHES; b++) {
    double t_next = scope_clock_local_ns(c) + gap_ns, best = INFINITY;
    for (int e = 0; e < EXCHANGES; e++) {
      double t1 = scope_clock_local_ns(c), t2;
      MPI_Send(&t1, 1, MPI_DOUBLE, child, TAG, comm);
      MPI_Recv(&t2, 1, MPI_DOUBLE, child, TAG, comm, MPI_STATUS_IGNORE);
      double t3 = scope_clock_local_ns(c);
      if (t3 - t1 < best) {
        best = t3 - t1;
        x[b] = 0.5 * (t1 + t3);
        o[b] = t2 - x[b];
        h[b] = 0.5 * (t3 - t1);
      }
    }
    if (b + 1 < BATCHES)
      scl_wait_local(c, t_next);
  }
  double stop = NAN;
  MPI_Send(&stop, 1, MPI_DOUBLE, child, TAG, comm);
  c->exchanges += BATCHES * EXCHANGES;
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
static void edge_child(scope_clock *c, MPI_Comm comm, int parent) {
  for (;;) {
    double t1;
    MPI_Recv(&t1, 1, MPI_DOUBLE, parent, TAG, comm, MPI_STATUS_IGNORE);
    if (isnan(t1))
      break;
    double t2 = scope_clock_local_ns(c);
    MPI_Send(&t2, 1, MPI_DOUBLE, parent, TAG, comm);
  }
}

/* The leaders' synchronisation: every round's pairs measured at once (a leader waits only for
 * its own partner), then the maps composed from the reference down the tree. */
static void sync_leaders(scope_clock *c) {
  MPI_Comm world = c->comm;
  MPI_Comm lc = c->leaders;
  int i, n;
  MPI_Comm_rank(lc, &i);
  MPI_Comm_size(lc, &n);
  int rounds = c->method->rounds(n), side;
  cm_map *edges = calloc((size_t)(rounds > 0 ? rounds : 1), sizeof *edges);
  if (!c->history) /* the same edges every synchronisation: the method and the leaders are the run's */
    c->history = calloc((size_t)(rounds > 0 ? rounds : 1), sizeof *c->history);
  for (int r = 0; r < rounds; r++) {
    int p = c->method->partner(i, r, n, &side);
    if (p < 0)
      continue;
    if (side) {
      double x[BATCHES], off[BATCHES], h[BATCHES];
      edge_parent(c, lc, p, c->span_s, x, off, h);
      edge_fit(&c->history[r], x, off, h, &edges[r]);
    } else {
      edge_child(c, lc, p);
    }
  }
  double msg[5];
  int parent = cm_parent(c->method, i, n);
  c->parent = -1;
  c->depth = 0;
  if (i == 0) {
    c->map = cm_identity(scope_clock_local_ns(c));
  } else {
    MPI_Recv(msg, 5, MPI_DOUBLE, parent, TAG + 1, lc, MPI_STATUS_IGNORE);
    c->map = (cm_map){msg[0], msg[1], msg[2], msg[3], msg[4]};
    c->depth = cm_depth(c->method, i, n);
    MPI_Group lg, wg;
    MPI_Comm_group(lc, &lg);
    MPI_Comm_group(world, &wg);
    MPI_Group_translate_ranks(lg, 1, &parent, wg, &c->parent);
    MPI_Group_free(&lg);
    MPI_Group_free(&wg);
  }
  /* children in the order their own subtrees are widest, so the deepest paths start first */
  for (int r = rounds - 1; r >= 0; r--) {
    int p = c->method->partner(i, r, n, &side);
    if (p < 0 || !side)
      continue;
    cm_map m = cm_compose(&c->map, &edges[r]);
    double out[5] = {m.a, m.b, m.g0, m.e0, m.k};
    MPI_Send(out, 5, MPI_DOUBLE, p, TAG + 1, lc);
  }
  c->rounds = rounds;
  free(edges);
}

int scope_clock_sync(scope_clock *c) {
  if (!c)
    return SCOPE_CLOCK_EINVAL;
  double t0 = timer_wall_s();
  if (c->domain == MPI_COMM_NULL)
    scl_find_domains(c);
  c->exchanges = 0;
  if (c->leaders != MPI_COMM_NULL)
    sync_leaders(c);
  /* the domain's members take the leader's map: same counter, same tick, same map */
  double msg[6] = {c->map.a, c->map.b, c->map.g0, c->map.e0, c->map.k, c->depth};
  MPI_Bcast(msg, 6, MPI_DOUBLE, 0, c->domain);
  c->map = (cm_map){msg[0], msg[1], msg[2], msg[3], msg[4]};
  c->depth = (int)msg[5];
  if (c->leaders == MPI_COMM_NULL)
    c->parent = -1; /* a member reads its leader's counter: no edge of its own */
  MPI_Barrier(c->comm);
  c->end_s = timer_wall_s();
  c->cost_s = c->end_s - t0;
  c->syncs++;
  return SCOPE_CLOCK_OK;
}

/* Synchronise again by the drift model, not by habit: only when every condition holds, on the
 * largest value over the ranks (one allreduce, so every rank decides alike):
 *  - the bound will pass bound_ns within ahead_s;
 *  - drift is at least half of it: a synchronisation could bring it down to the floor, and a
 *    bound the floor alone puts above bound_ns is not helped by synchronising again;
 *  - the last synchronisation cost at most a twentieth of the time since, so synchronising
 *    again takes at most 5 % of the time (the first synchronisation is the rest). */
int scope_clock_keep(scope_clock *c, double bound_ns, double ahead_s) {
  if (!c)
    return -SCOPE_CLOCK_EINVAL; /* no communicator to agree over */
  /* every rank learns whether any rank's arguments were bad (the fourth value), so none waits */
  int bad = !(bound_ns > 0) || !isfinite(bound_ns) || !(ahead_s >= 0) || !isfinite(ahead_s);
  double now_s = timer_wall_s(), g = scope_clock_global_ns(c, NULL);
  double mine[4] = {bad ? 0 : scope_clock_bound_ns(c, g + ahead_s * 1e9), c->map.e0,
                    20 * c->cost_s - (now_s - c->end_s), bad},
         worst[4];
  if (MPI_Allreduce(mine, worst, 4, MPI_DOUBLE, MPI_MAX, c->comm) != MPI_SUCCESS)
    return -SCOPE_CLOCK_EMPI;
  if (worst[3] > 0)
    return -SCOPE_CLOCK_EINVAL;
  if (!(worst[0] > bound_ns && worst[0] >= 2 * worst[1] && worst[2] <= 0))
    return 0;
  int e = scope_clock_sync(c);
  return e ? -e : 1;
}
