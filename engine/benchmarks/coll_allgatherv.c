/* MPI_Allgatherv: every rank gets every rank's uneven block. */
#include "coll.h"

static const scope_param params[] = {SCOPE_PARAM_NB, SCOPE_PARAM_API, SCOPE_PARAM_BLOCKS};

static void op(scope_ctx *c, void *st, int how, MPI_Request *req);

static int setup(scope_ctx *c, void **st) {
  c->rbuf_bytes = c->size * (size_t)c->nranks;
  if (coll_vsetup(c, st, op))
    return -1;
  coll_vstate *s = *st; /* every block to every other rank */
  c->bytes_per_op = coll_vsum(c->size, c->nranks, s->even) * (c->nranks - 1);
  return 0;
}

static void op(scope_ctx *c, void *st, int how, MPI_Request *req) {
  coll_vstate *s = st;
  COLL_DO(how, req, Allgatherv, Iallgatherv, c->sbuf, s->counts[c->rank], MPI_BYTE, c->rbuf, s->counts, s->displs,
          MPI_BYTE, c->comm);
}

static size_t verify(scope_ctx *c, void *st, uint64_t seed, size_t *first) {
  coll_vstate *s = st;
  size_t bad = 0;
  for (int r = 0; r < c->nranks; r++)
    bad += scope_check(c->rbuf + s->displs[r], (size_t)s->counts[r], seed, r, first);
  return bad;
}

SCOPE_COLLECTIVE(coll_allgatherv, "coll.allgatherv", 1, "MPI_Allgatherv of uneven blocks (odd ranks contribute half)",
                 params, coll_vfree, "peer:osu_allgatherv", "peer:osu_allgatherv_persistent");
