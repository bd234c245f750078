/* MPI_Reduce_scatter with uneven counts (odd ranks keep half a block of the sum). */
#include "coll_sum.h"

static const scope_param params[] = {SCOPE_PARAM_NB, SCOPE_PARAM_API};

static void op(scope_ctx *c, void *st, int how, MPI_Request *req);

static int setup(scope_ctx *c, void **st) {
  c->size &= ~(size_t)7; /* whole words in half blocks too */
  c->sbuf_bytes = c->size * (size_t)c->nranks;
  c->bytes_per_op = coll_vsum(c->size, c->nranks) * (c->nranks - 1); /* rank r gets its part from all others */
  if (coll_vsetup(c, st, op))
    return -1;
  coll_vstate *s = *st;
  for (int r = 0; r < c->nranks; r++) { /* counts in words */
    s->counts[r] /= 4;
    s->displs[r] /= 4;
  }
  return 0;
}

static void op(scope_ctx *c, void *st, int how, MPI_Request *req) {
  coll_vstate *s = st;
  COLL_DO(how, req, Reduce_scatter, Ireduce_scatter, c->sbuf, c->rbuf, s->counts, MPI_UINT32_T, MPI_SUM, c->comm);
}

static size_t verify(scope_ctx *c, void *st, uint64_t seed, size_t *first) {
  coll_vstate *s = st;
  return coll_check_sum_range(&s->base, c->rbuf, (size_t)s->counts[c->rank], seed, (size_t)s->displs[c->rank],
                              c->nranks, first);
}

SCOPE_COLLECTIVE(coll_reduce_scatter, "coll.reduce_scatter", 1,
                 "MPI_Reduce_scatter, uneven counts: odd ranks keep half a block of the sum", params, coll_vfree);
