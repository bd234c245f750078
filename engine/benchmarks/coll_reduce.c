/* MPI_Reduce (MPI_SUM over -p dtype, 32-bit words by default) to a root (rotating by default). */
#include "coll_sum.h"

static const scope_param params[] = {SCOPE_PARAM_NB, SCOPE_PARAM_ROOT, SCOPE_PARAM_API, SCOPE_PARAM_DTYPE,
                                     SCOPE_PARAM_INPLACE};

static void op(scope_ctx *c, void *st, int how, MPI_Request *req);

static int setup(scope_ctx *c, void **st) {
  int rc = coll_setup_state(c, st, op);
  if (rc)
    return rc;
  coll_sum_params(c, *st);
  c->sbuf_bytes = c->rbuf_bytes = c->size;
  c->bytes_per_op = (double)c->size * (c->nranks - 1); /* every other rank to the root */
  return 0;
}

static void op(scope_ctx *c, void *st, int how, MPI_Request *req) {
  coll_state *s = st;
  int root = coll_root(c, st, how);
  const void *in = s->inplace && c->rank == root ? MPI_IN_PLACE : c->sbuf; /* in place at the root only */
  COLL_DO(how, req, Reduce, Ireduce, in, c->rbuf, coll_count(c, s), s->dt.type, MPI_SUM, root, c->comm);
}

static size_t verify(scope_ctx *c, void *st, uint64_t seed, size_t *first) {
  coll_state *s = st;
  return c->rank == s->root ? coll_check_sum(c, s, c->rbuf, seed, first) : 0;
}

SCOPE_COLLECTIVE(coll_reduce, "coll.reduce", 1, "MPI_Reduce, sum of 32-bit words, to a rotating root", params,
                 coll_free, "model:collective", "peer:osu_reduce", "peer:imb_Reduce", "peer:osu_reduce_persistent");
