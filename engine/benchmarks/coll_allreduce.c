/* MPI_Allreduce (MPI_SUM over -p dtype, 32-bit words by default): every rank gets the total. */
#include "coll_sum.h"

static const scope_param params[] = {SCOPE_PARAM_NB, SCOPE_PARAM_API, SCOPE_PARAM_DTYPE, SCOPE_PARAM_INPLACE};

static void op(scope_ctx *c, void *st, int how, MPI_Request *req);

static int setup(scope_ctx *c, void **st) {
  int rc = coll_setup_state(c, st, op);
  if (rc)
    return rc;
  coll_sum_params(c, *st);
  c->sbuf_bytes = c->rbuf_bytes = c->size;
  c->bytes_per_op = 2.0 * (double)c->size * (c->nranks - 1); /* reduce, then spread the total */
  return 0;
}

static void op(scope_ctx *c, void *st, int how, MPI_Request *req) {
  coll_state *s = st;
  COLL_DO(how, req, Allreduce, Iallreduce, s->inplace ? MPI_IN_PLACE : c->sbuf, c->rbuf, coll_count(c, s), s->dt.type,
          MPI_SUM, c->comm);
}

static size_t verify(scope_ctx *c, void *st, uint64_t seed, size_t *first) {
  return coll_check_sum(c, st, c->rbuf, seed, first);
}

SCOPE_COLLECTIVE(coll_allreduce, "coll.allreduce", 1, "MPI_Allreduce, sum of 32-bit words: every rank gets the total",
                 params, coll_free, "peer:osu_allreduce", "peer:imb_Allreduce", "peer:osu_allreduce_persistent");
