/* MPI_Reduce_scatter_block: the sum (over -p dtype) of every rank's p blocks; rank r keeps
 * block r. */
#include "coll_sum.h"

static const scope_param params[] = {SCOPE_PARAM_NB, SCOPE_PARAM_API, SCOPE_PARAM_DTYPE};

static void op(scope_ctx *c, void *st, int how, MPI_Request *req);

static int setup(scope_ctx *c, void **st) {
  int rc = coll_setup_state(c, st, op);
  if (rc)
    return rc;
  coll_sum_params(c, *st);
  c->sbuf_bytes = c->size * (size_t)c->nranks;
  c->rbuf_bytes = c->size;
  c->bytes_per_op = (double)c->size * c->nranks * (c->nranks - 1); /* a block between every pair */
  return 0;
}

static void op(scope_ctx *c, void *st, int how, MPI_Request *req) {
  coll_state *s = st;
  COLL_DO(how, req, Reduce_scatter_block, Ireduce_scatter_block, c->sbuf, c->rbuf, coll_count(c, s), s->dt.type,
          MPI_SUM, c->comm);
}

static size_t verify(scope_ctx *c, void *st, uint64_t seed, size_t *first) {
  coll_state *s = st;
  size_t n = c->size / s->dt.size;
  return coll_check_sum_range(s, c->rbuf, n, seed, (size_t)c->rank * n, c->nranks, first);
}

SCOPE_COLLECTIVE(coll_reduce_scatter_block, "coll.reduce_scatter_block", 1,
                 "MPI_Reduce_scatter_block, sum of 32-bit words: rank r keeps block r of the total", params, coll_free,
                 "peer:osu_reduce_scatter_block", "peer:imb_Reduce_scatter_block",
                 "peer:osu_reduce_scatter_block_persistent");
