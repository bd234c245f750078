/* MPI_Scatter: a root (rotating by default) sends block r of its buffer to rank r. */
#include "coll.h"

static const scope_param params[] = {SCOPE_PARAM_NB, SCOPE_PARAM_API, SCOPE_PARAM_ROOT};

static void op(scope_ctx *c, void *st, int how, MPI_Request *req);

static int setup(scope_ctx *c, void **st) {
  c->sbuf_bytes = c->size * (size_t)c->nranks;
  c->bytes_per_op = (double)c->size * (c->nranks - 1);
  return coll_setup_state(c, st, op);
}

static void op(scope_ctx *c, void *st, int how, MPI_Request *req) {
  int root = coll_root(c, st, how);
  COLL_DO(how, req, Scatter, Iscatter, c->sbuf, (int)c->size, MPI_BYTE, c->rbuf, (int)c->size, MPI_BYTE, root, c->comm);
}

static size_t verify(scope_ctx *c, void *st, uint64_t seed, size_t *first) {
  coll_state *s = st;
  return scope_check_at(c->rbuf, c->size, seed, s->root, (size_t)c->rank * c->size, first);
}

SCOPE_COLLECTIVE(coll_scatter, "coll.scatter", 1, "MPI_Scatter of one block per rank from a rotating root", params,
                 coll_free, "peer:osu_scatter", "peer:osu_scatter_persistent", "peer:imb_Scatter");
