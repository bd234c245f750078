/* MPI_Neighbor_allgather: every rank receives one block from each neighbour on a periodic grid
 * (neighbor.h); call=allgatherv makes the same exchange with MPI_Neighbor_allgatherv (even
 * counts, as osu_neighbor_allgatherv). */
#include <stdio.h>

#include "neighbor.h"

static const char *const calls[] = {"allgather", "allgatherv", NULL};

static const scope_param params[] = {
    SCOPE_PARAM_NB,
    SCOPE_PARAM_API,
    SCOPE_PARAM_NB_DIMS,
    SCOPE_PARAM_NB_RADIUS,
    {"call", SP_ENUM, "allgather", 0, 0, calls, "MPI_Neighbor_allgather, or ..._allgatherv with even counts"}};

static void op(scope_ctx *c, void *st, int how, MPI_Request *req);

static int setup(scope_ctx *c, void **st) {
  return nb_setup(c, st, op, 0);
}

static void op(scope_ctx *c, void *st, int how, MPI_Request *req) {
  nb_state *s = st;
  (void)c;
  if (s->call)
    COLL_DO(how, req, Neighbor_allgatherv, Ineighbor_allgatherv, c->sbuf, (int)c->size, MPI_BYTE, c->rbuf, s->counts,
            s->displs, MPI_BYTE, s->graph);
  else
    COLL_DO(how, req, Neighbor_allgather, Ineighbor_allgather, c->sbuf, (int)c->size, MPI_BYTE, c->rbuf, (int)c->size,
            MPI_BYTE, s->graph);
}

/* Slot m holds neighbour m's whole send buffer. */
static size_t verify(scope_ctx *c, void *st, uint64_t seed, size_t *first) {
  nb_state *s = st;
  size_t bad = 0;
  for (int m = 0; m < s->n; m++)
    bad += scope_check(c->rbuf + (size_t)m * c->size, c->size, seed, s->nbr[m], first);
  return bad;
}

SCOPE_NEIGHBORHOOD(coll_neighbor_allgather, "coll.neighbor_allgather",
                   "MPI_Neighbor_allgather on a periodic grid: a block from each neighbour",
                   "peer:osu_neighbor_allgather", "peer:osu_neighbor_allgatherv");
