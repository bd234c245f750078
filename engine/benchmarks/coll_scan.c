/* MPI_Scan (inclusive prefix sum of 32-bit words): rank r gets the sum over ranks 0 .. r. */
#include "coll_sum.h"

static const scope_param params[] = {SCOPE_PARAM_NB, SCOPE_PARAM_API, SCOPE_PARAM_DTYPE};

static void op(scope_ctx *c, void *st, int how, MPI_Request *req);

static int setup(scope_ctx *c, void **st) {
  int rc = coll_setup_state(c, st, op);
  if (rc)
    return rc;
  coll_sum_params(c, *st);
  c->sbuf_bytes = c->rbuf_bytes = c->size;
  c->bytes_per_op = (double)c->size * (c->nranks - 1); /* each prefix passed on once */
  return 0;
}

static void op(scope_ctx *c, void *st, int how, MPI_Request *req) {
  coll_state *s = st;
  COLL_DO(how, req, Scan, Iscan, c->sbuf, c->rbuf, coll_count(c, s), s->dt.type, MPI_SUM, c->comm);
}

static size_t verify(scope_ctx *c, void *st, uint64_t seed, size_t *first) {
  coll_state *s = st;
  return coll_check_sum_range(s, c->rbuf, c->size / s->dt.size, seed, 0, c->rank + 1, first);
}

SCOPE_COLLECTIVE(coll_scan, "coll.scan", 1, "MPI_Scan, inclusive prefix sum of 32-bit words", params, coll_free);
