/* MPI_Scatterv: uneven blocks (odd ranks get half) from a rotating root. */
#include "coll.h"

static const scope_param params[] = {SCOPE_PARAM_NB, SCOPE_PARAM_API, SCOPE_PARAM_ROOT, SCOPE_PARAM_BLOCKS};

static void op(scope_ctx *c, void *st, int how, MPI_Request *req);

static int setup(scope_ctx *c, void **st) {
  c->sbuf_bytes = c->size * (size_t)c->nranks;
  if (coll_vsetup(c, st, op))
    return -1;
  c->bytes_per_op = coll_rooted_vpayload(c, *st);
  return 0;
}

static void op(scope_ctx *c, void *st, int how, MPI_Request *req) {
  coll_vstate *s = st;
  int root = coll_root(c, st, how);
  COLL_DO(how, req, Scatterv, Iscatterv, c->sbuf, s->counts, s->displs, MPI_BYTE, c->rbuf, s->counts[c->rank], MPI_BYTE,
          root, c->comm);
}

static size_t verify(scope_ctx *c, void *st, uint64_t seed, size_t *first) {
  coll_vstate *s = st;
  return scope_check_at(c->rbuf, (size_t)s->counts[c->rank], seed, s->base.root, (size_t)s->displs[c->rank], first);
}

SCOPE_COLLECTIVE(coll_scatterv, "coll.scatterv", 1,
                 "MPI_Scatterv of uneven blocks (odd ranks get half) from a rotating root", params, coll_vfree,
                 "peer:osu_scatterv", "peer:osu_scatterv_persistent");
