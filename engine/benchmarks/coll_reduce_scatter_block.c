/* MPI_Reduce_scatter_block: the sum of every rank's p blocks; rank r keeps block r. */
#include "coll.h"

static const scope_param params[] = {SCOPE_PARAM_NB};

static void op(scope_ctx *c, void *st, MPI_Request *req);

static int setup(scope_ctx *c, void **st) {
  c->size &= ~(size_t)3;
  c->sbuf_bytes = c->size * (size_t)c->nranks;
  c->rbuf_bytes = c->size;
  c->bytes_per_op = (double)c->size * c->nranks * (c->nranks - 1); /* a block between every pair */
  return coll_setup_state(c, st, op);
}

static void op(scope_ctx *c, void *st, MPI_Request *req) {
  (void)st;
  if (req)
    MPI_Ireduce_scatter_block(c->sbuf, c->rbuf, (int)(c->size / 4), MPI_UINT32_T, MPI_SUM, c->comm, req);
  else
    MPI_Reduce_scatter_block(c->sbuf, c->rbuf, (int)(c->size / 4), MPI_UINT32_T, MPI_SUM, c->comm);
}

static size_t verify(scope_ctx *c, void *st, uint64_t seed, size_t *first) {
  (void)st;
  size_t w = c->size / 4;
  return coll_check_sum_range(c->rbuf, w, seed, (size_t)c->rank * w, c->nranks, first);
}

SCOPE_COLLECTIVE(coll_reduce_scatter_block, "coll.reduce_scatter_block", 1,
                 "MPI_Reduce_scatter_block, sum of 32-bit words: rank r keeps block r of the total", params, coll_free,
                 "peer:osu_reduce_scatter_block", "peer:imb_Reduce_scatter_block");
