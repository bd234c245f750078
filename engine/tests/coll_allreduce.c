/* MPI_Allreduce (sum of uint32 words): every rank ends with the global sum. */
#include "coll.h"

static const scope_param params[] = {SCOPE_PARAM_NB};

static void op(scope_ctx *c, void *st, MPI_Request *req);

static int setup(scope_ctx *c, void **st) {
  c->size &= ~(size_t)3; /* whole words */
  c->sbuf_bytes = c->rbuf_bytes = c->size;
  c->bytes_per_op = (double)c->size;
  return coll_setup_state(st, op);
}

static void op(scope_ctx *c, void *st, MPI_Request *req) {
  (void)st;
  if (req)
    MPI_Iallreduce(c->sbuf, c->rbuf, (int)(c->size / 4), MPI_UINT32_T, MPI_SUM, c->comm, req);
  else
    MPI_Allreduce(c->sbuf, c->rbuf, (int)(c->size / 4), MPI_UINT32_T, MPI_SUM, c->comm);
}

static size_t verify(scope_ctx *c, void *st, uint64_t seed, size_t *first) {
  (void)st;
  return coll_check_sum(c, c->rbuf, c->size, seed, first);
}

const scope_test test_coll_allreduce = {
    .name = "coll.allreduce",
    .level = "coll",
    .summary = "MPI_Allreduce, sum of 32-bit words: every rank gets the total",
    .measures = "global completion time (last exit - common start)",
    .min_ranks = 2,
    .sized = 1,
    .timing = SCOPE_TIMING_WINDOW,
    .params = params,
    .nparams = 1,
    .setup = setup,
    .start = coll_start,
    .run = coll_run,
    .verify = verify,
    .teardown = coll_free,
};
