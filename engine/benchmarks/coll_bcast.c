/* MPI_Bcast from a root (rotating by default) to every rank. */
#include "coll.h"

static const scope_param params[] = {SCOPE_PARAM_NB, SCOPE_PARAM_API, SCOPE_PARAM_ROOT};

static void op(scope_ctx *c, void *st, int how, MPI_Request *req);

static int setup(scope_ctx *c, void **st) {
  c->bytes_per_op = (double)c->size * (c->nranks - 1); /* root to every other rank */
  return coll_setup_state(c, st, op);
}

static void op(scope_ctx *c, void *st, int how, MPI_Request *req) {
  int root = coll_root(c, st, how);
  COLL_DO(how, req, Bcast, Ibcast, c->rank == root ? c->sbuf : c->rbuf, (int)c->size, MPI_BYTE, root, c->comm);
}

static size_t verify(scope_ctx *c, void *st, uint64_t seed, size_t *first) {
  coll_state *s = st;
  return c->rank == s->root ? 0 : scope_check(c->rbuf, c->size, seed, s->root, first);
}

SCOPE_COLLECTIVE(coll_bcast, "coll.bcast", 1, "MPI_Bcast of one block from a rotating root", params, coll_free,
                 "model:collective", "peer:osu_bcast", "peer:osu_bcast_persistent", "peer:imb_Bcast");
