/* MPI_Reduce_scatter: the sum (over -p dtype) of every rank's blocks; rank r keeps its count of
 * it.  Uneven counts by default (odd ranks keep half a block); blocks=even gives every rank a
 * whole block, as osu_reduce_scatter. */
#include "coll_sum.h"

static const scope_param params[] = {SCOPE_PARAM_NB, SCOPE_PARAM_API, SCOPE_PARAM_DTYPE, SCOPE_PARAM_BLOCKS};

static void op(scope_ctx *c, void *st, int how, MPI_Request *req);

static int setup(scope_ctx *c, void **st) {
  if (coll_vsetup(c, st, op))
    return -1;
  coll_vstate *s = *st;
  coll_sum_params(c, &s->base); /* whole elements */
  size_t e = s->base.dt.size;
  if (!s->even)
    c->size -= c->size % (2 * e); /* whole elements in half blocks too */
  coll_vlayout(c->size, c->nranks, s->counts, s->displs, s->even);
  for (int r = 0; r < c->nranks; r++) { /* counts in elements */
    s->counts[r] /= (int)e;
    s->displs[r] /= (int)e;
  }
  c->sbuf_bytes = c->size * (size_t)c->nranks;
  c->bytes_per_op = coll_vsum(c->size, c->nranks, s->even) * (c->nranks - 1); /* rank r's part from all others */
  return 0;
}

static void op(scope_ctx *c, void *st, int how, MPI_Request *req) {
  coll_vstate *s = st;
  COLL_DO(how, req, Reduce_scatter, Ireduce_scatter, c->sbuf, c->rbuf, s->counts, s->base.dt.type, MPI_SUM, c->comm);
}

static size_t verify(scope_ctx *c, void *st, uint64_t seed, size_t *first) {
  coll_vstate *s = st;
  return coll_check_sum_range(&s->base, c->rbuf, (size_t)s->counts[c->rank], seed, (size_t)s->displs[c->rank],
                              c->nranks, first);
}

SCOPE_COLLECTIVE(coll_reduce_scatter, "coll.reduce_scatter", 1,
                 "MPI_Reduce_scatter, uneven counts: odd ranks keep half a block of the sum", params, coll_vfree,
                 "peer:osu_reduce_scatter", "peer:osu_reduce_scatter_persistent");
