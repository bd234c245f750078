/* MPI_Reduce (sum of uint32 words) to a root (rotating by default). */
#include "coll.h"

static const scope_param params[] = {SCOPE_PARAM_NB, SCOPE_PARAM_ROOT};

static void op(scope_ctx *c, void *st, MPI_Request *req);

static int setup(scope_ctx *c, void **st) {
  c->size &= ~(size_t)3;
  c->sbuf_bytes = c->rbuf_bytes = c->size;
  c->bytes_per_op = (double)c->size * (c->nranks - 1); /* every other rank to the root */
  return coll_setup_state(c, st, op);
}

static void op(scope_ctx *c, void *st, MPI_Request *req) {
  int root = coll_next_root(c, st);
  if (req)
    MPI_Ireduce(c->sbuf, c->rbuf, (int)(c->size / 4), MPI_UINT32_T, MPI_SUM, root, c->comm, req);
  else
    MPI_Reduce(c->sbuf, c->rbuf, (int)(c->size / 4), MPI_UINT32_T, MPI_SUM, root, c->comm);
}

static size_t verify(scope_ctx *c, void *st, uint64_t seed, size_t *first) {
  coll_state *s = st;
  return c->rank == s->root ? coll_check_sum(c, c->rbuf, c->size, seed, first) : 0;
}

SCOPE_COLLECTIVE(coll_reduce, "coll.reduce", 1, "MPI_Reduce, sum of 32-bit words, to a rotating root", params,
                 coll_free, "model:collective", "peer:osu_reduce", "peer:imb_Reduce");
