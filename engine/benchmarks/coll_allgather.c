/* MPI_Allgather: every rank ends with every rank's block. */
#include "coll.h"

static const scope_param params[] = {SCOPE_PARAM_NB, SCOPE_PARAM_API};

static void op(scope_ctx *c, void *st, int how, MPI_Request *req);

static int setup(scope_ctx *c, void **st) {
  c->rbuf_bytes = c->size * (size_t)c->nranks;
  c->bytes_per_op = (double)c->size * c->nranks * (c->nranks - 1); /* a block between every pair */
  return coll_setup_state(c, st, op);
}

static void op(scope_ctx *c, void *st, int how, MPI_Request *req) {
  (void)st;
  COLL_DO(how, req, Allgather, Iallgather, c->sbuf, (int)c->size, MPI_BYTE, c->rbuf, (int)c->size, MPI_BYTE, c->comm);
}

static size_t verify(scope_ctx *c, void *st, uint64_t seed, size_t *first) {
  (void)st;
  size_t bad = 0;
  for (int r = 0; r < c->nranks; r++)
    bad += scope_check(c->rbuf + (size_t)r * c->size, c->size, seed, r, first);
  return bad;
}

SCOPE_COLLECTIVE(coll_allgather, "coll.allgather", 1, "MPI_Allgather of one block per rank", params, coll_free,
                 "peer:osu_allgather", "peer:osu_allgather_persistent", "peer:imb_Allgather");
