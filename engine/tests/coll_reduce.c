/* MPI_Reduce (sum of uint32 words) to a root (rotating by default). */
#include "coll.h"

enum { P_NB, P_ROOT };
static const scope_param params[] = {SCOPE_PARAM_NB, SCOPE_PARAM_ROOT};

static void op(scope_ctx *c, void *st, MPI_Request *req);

static int setup(scope_ctx *c, void **st) {
  c->size &= ~(size_t)3;
  c->sbuf_bytes = c->rbuf_bytes = c->size;
  c->bytes_per_op = (double)c->size;
  return coll_setup_state(st, op);
}

static void op(scope_ctx *c, void *st, MPI_Request *req) {
  int root = coll_next_root(c, st, (int)c->p[P_ROOT]);
  if (req)
    MPI_Ireduce(c->sbuf, c->rbuf, (int)(c->size / 4), MPI_UINT32_T, MPI_SUM, root, c->comm, req);
  else
    MPI_Reduce(c->sbuf, c->rbuf, (int)(c->size / 4), MPI_UINT32_T, MPI_SUM, root, c->comm);
}

static size_t verify(scope_ctx *c, void *st, uint64_t seed, size_t *first) {
  coll_state *s = st;
  return c->rank == s->root ? coll_check_sum(c, c->rbuf, c->size, seed, first) : 0;
}

const scope_test test_coll_reduce = {
    .name = "coll.reduce",
    .level = "coll",
    .summary = "MPI_Reduce, sum of 32-bit words, to a rotating root",
    .measures = "global completion time (last exit - common start)",
    .min_ranks = 2,
    .sized = 1,
    .timing = SCOPE_TIMING_WINDOW,
    .params = params,
    .nparams = 2,
    .setup = setup,
    .start = coll_start,
    .run = coll_run,
    .verify = verify,
    .teardown = coll_free,
};
