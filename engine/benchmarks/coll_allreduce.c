/* MPI_Allreduce (sum of uint32 words): every rank ends with the global sum. */
#include "coll.h"

static const scope_param params[] = {SCOPE_PARAM_NB};

static void op(scope_ctx *c, void *st, MPI_Request *req);

static int setup(scope_ctx *c, void **st) {
  c->size &= ~(size_t)3; /* whole words */
  c->sbuf_bytes = c->rbuf_bytes = c->size;
  c->bytes_per_op = 2.0 * (double)c->size * (c->nranks - 1); /* reduce, then spread the total */
  return coll_setup_state(c, st, op);
}

static void op(scope_ctx *c, void *st, MPI_Request *req) {
  (void)st;
  if (req)
    MPI_Iallreduce(c->sbuf, c->rbuf, (int)(c->size / 4), MPI_UINT32_T, MPI_SUM, c->comm, req);
  else
    MPI_Allreduce(c->sbuf, c->rbuf, (int)(c->size / 4), MPI_UINT32_T, MPI_SUM, c->comm);
}

static size_t verify(scope_ctx *c, void *st, uint64_t seed, size_t *first) {
  (void)st;
  return coll_check_sum(c, c->rbuf, c->size, seed, first);
}

SCOPE_COLLECTIVE(coll_allreduce, "coll.allreduce", 1, "MPI_Allreduce, sum of 32-bit words: every rank gets the total",
                 params, coll_free, "peer:osu_allreduce", "peer:imb_Allreduce");
