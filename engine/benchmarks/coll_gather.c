/* MPI_Gather: every rank's block to a root (rotating by default). */
#include "coll.h"

static const scope_param params[] = {SCOPE_PARAM_NB, SCOPE_PARAM_API, SCOPE_PARAM_ROOT};

static void op(scope_ctx *c, void *st, int how, MPI_Request *req);

static int setup(scope_ctx *c, void **st) {
  c->rbuf_bytes = c->size * (size_t)c->nranks;
  c->bytes_per_op = (double)c->size * (c->nranks - 1);
  return coll_setup_state(c, st, op);
}

static void op(scope_ctx *c, void *st, int how, MPI_Request *req) {
  int root = coll_root(c, st, how);
  COLL_DO(how, req, Gather, Igather, c->sbuf, (int)c->size, MPI_BYTE, c->rbuf, (int)c->size, MPI_BYTE, root, c->comm);
}

static size_t verify(scope_ctx *c, void *st, uint64_t seed, size_t *first) {
  coll_state *s = st;
  size_t bad = 0;
  for (int r = 0; c->rank == s->root && r < c->nranks; r++)
    bad += scope_check(c->rbuf + (size_t)r * c->size, c->size, seed, r, first);
  return bad;
}

SCOPE_COLLECTIVE(coll_gather, "coll.gather", 1, "MPI_Gather of one block per rank to a rotating root", params,
                 coll_free, "peer:osu_gather", "peer:osu_gather_persistent", "peer:imb_Gather");
