/* MPI_Gatherv: uneven blocks (odd ranks send half) to a rotating root. */
#include "coll.h"

static const scope_param params[] = {SCOPE_PARAM_NB, SCOPE_PARAM_API, SCOPE_PARAM_ROOT, SCOPE_PARAM_BLOCKS};

static void op(scope_ctx *c, void *st, int how, MPI_Request *req);

static int setup(scope_ctx *c, void **st) {
  c->rbuf_bytes = c->size * (size_t)c->nranks;
  if (coll_vsetup(c, st, op))
    return -1;
  c->bytes_per_op = coll_rooted_vpayload(c, *st);
  return 0;
}

static void op(scope_ctx *c, void *st, int how, MPI_Request *req) {
  coll_vstate *s = st;
  int root = coll_root(c, st, how);
  COLL_DO(how, req, Gatherv, Igatherv, c->sbuf, s->counts[c->rank], MPI_BYTE, c->rbuf, s->counts, s->displs, MPI_BYTE,
          root, c->comm);
}

static size_t verify(scope_ctx *c, void *st, uint64_t seed, size_t *first) {
  coll_vstate *s = st;
  size_t bad = 0;
  for (int r = 0; c->rank == s->base.root && r < c->nranks; r++)
    bad += scope_check(c->rbuf + s->displs[r], (size_t)s->counts[r], seed, r, first);
  return bad;
}

SCOPE_COLLECTIVE(coll_gatherv, "coll.gatherv", 1,
                 "MPI_Gatherv of uneven blocks (odd ranks send half) to a rotating root", params, coll_vfree,
                 "peer:osu_gatherv", "peer:osu_gatherv_persistent");
