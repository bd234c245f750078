/* MPI_Scan (inclusive prefix sum of 32-bit words): rank r gets the sum over ranks 0 .. r. */
#include "coll.h"

static const scope_param params[] = {SCOPE_PARAM_NB};

static void op(scope_ctx *c, void *st, MPI_Request *req);

static int setup(scope_ctx *c, void **st) {
  c->size &= ~(size_t)3;
  c->sbuf_bytes = c->rbuf_bytes = c->size;
  c->bytes_per_op = (double)c->size * (c->nranks - 1); /* each prefix passed on once */
  return coll_setup_state(c, st, op);
}

static void op(scope_ctx *c, void *st, MPI_Request *req) {
  (void)st;
  if (req)
    MPI_Iscan(c->sbuf, c->rbuf, (int)(c->size / 4), MPI_UINT32_T, MPI_SUM, c->comm, req);
  else
    MPI_Scan(c->sbuf, c->rbuf, (int)(c->size / 4), MPI_UINT32_T, MPI_SUM, c->comm);
}

static size_t verify(scope_ctx *c, void *st, uint64_t seed, size_t *first) {
  (void)st;
  return coll_check_sum_range(c->rbuf, c->size / 4, seed, 0, c->rank + 1, first);
}

SCOPE_COLLECTIVE(coll_scan, "coll.scan", 1, "MPI_Scan, inclusive prefix sum of 32-bit words", params, coll_free);
