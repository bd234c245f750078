/* MPI_Alltoall: block j of rank i's buffer goes to rank j (the transpose of a 3-D FFT). */
#include "coll.h"

static const scope_param params[] = {SCOPE_PARAM_NB, SCOPE_PARAM_API};

static void op(scope_ctx *c, void *st, int how, MPI_Request *req);

static int setup(scope_ctx *c, void **st) {
  c->sbuf_bytes = c->rbuf_bytes = c->size * (size_t)c->nranks;
  c->bytes_per_op = (double)c->size * c->nranks * (c->nranks - 1); /* a block between every pair */
  return coll_setup_state(c, st, op);
}

static void op(scope_ctx *c, void *st, int how, MPI_Request *req) {
  (void)st;
  COLL_DO(how, req, Alltoall, Ialltoall, c->sbuf, (int)c->size, MPI_BYTE, c->rbuf, (int)c->size, MPI_BYTE, c->comm);
}

static size_t verify(scope_ctx *c, void *st, uint64_t seed, size_t *first) {
  (void)st;
  size_t bad = 0;
  for (int j = 0; j < c->nranks; j++)
    bad += scope_check_at(c->rbuf + (size_t)j * c->size, c->size, seed, j, (size_t)c->rank * c->size, first);
  return bad;
}

SCOPE_COLLECTIVE(coll_alltoall, "coll.alltoall", 1, "MPI_Alltoall: every rank sends a distinct block to every rank",
                 params, coll_free, "peer:osu_alltoall", "peer:osu_alltoall_persistent", "peer:imb_Alltoall");
