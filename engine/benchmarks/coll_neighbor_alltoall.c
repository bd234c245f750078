/* MPI_Neighbor_alltoall: every rank sends a distinct block to each neighbour on a periodic grid
 * (neighbor.h); call=alltoallv and call=alltoallw make the same exchange with the general calls
 * (even counts; alltoallw: a byte type per neighbour), as osu_neighbor_alltoallv and _alltoallw. */
#include <stdio.h>
#include <stdlib.h>

#include "neighbor.h"

static const char *const calls[] = {"alltoall", "alltoallv", "alltoallw", NULL};

static const scope_param params[] = {
    SCOPE_PARAM_NB,
    SCOPE_PARAM_API,
    SCOPE_PARAM_NB_DIMS,
    SCOPE_PARAM_NB_RADIUS,
    {"call", SP_ENUM, "alltoall", 0, 0, calls, "MPI_Neighbor_alltoall, or ..._alltoallv / _alltoallw (even counts)"}};

static void op(scope_ctx *c, void *st, int how, MPI_Request *req);

static int setup(scope_ctx *c, void **st) {
  return nb_setup(c, st, op, 1);
}

static void op(scope_ctx *c, void *st, int how, MPI_Request *req) {
  nb_state *s = st;
  if (s->call == 2)
    COLL_DO(how, req, Neighbor_alltoallw, Ineighbor_alltoallw, c->sbuf, s->counts, s->wdispls, s->types, c->rbuf,
            s->counts, s->wdispls, s->types, s->graph);
  else if (s->call == 1)
    COLL_DO(how, req, Neighbor_alltoallv, Ineighbor_alltoallv, c->sbuf, s->counts, s->displs, MPI_BYTE, c->rbuf,
            s->counts, s->displs, MPI_BYTE, s->graph);
  else
    COLL_DO(how, req, Neighbor_alltoall, Ineighbor_alltoall, c->sbuf, (int)c->size, MPI_BYTE, c->rbuf, (int)c->size,
            MPI_BYTE, s->graph);
}

/* Slot m holds block j of neighbour m's buffer, j the edge MPI pairs with slot m. */
static size_t verify(scope_ctx *c, void *st, uint64_t seed, size_t *first) {
  nb_state *s = st;
  size_t bad = 0;
  int *scratch = malloc(sizeof(int) * (size_t)(s->n ? s->n : 1) * 2 + 64 * sizeof(int));
  if (!scratch)
    return c->size ? c->size : 1;
  for (int m = 0; m < s->n; m++) {
    int j = nb_block_from(s, c->rank, m, scratch);
    bad += j < 0 ? c->size
                 : scope_check_at(c->rbuf + (size_t)m * c->size, c->size, seed, s->nbr[m], (size_t)j * c->size, first);
  }
  free(scratch);
  return bad;
}

SCOPE_NEIGHBORHOOD(coll_neighbor_alltoall, "coll.neighbor_alltoall",
                   "MPI_Neighbor_alltoall on a periodic grid: a distinct block to each neighbour",
                   "peer:osu_neighbor_alltoall", "peer:osu_neighbor_alltoallv", "peer:osu_neighbor_alltoallw");
