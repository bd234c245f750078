/* MPI_Iallreduce (sum of uint32 words) with an optional computation between start and wait. */
#include "coll_nb.h"

static void start_op(scope_ctx *c, MPI_Request *req) {
  MPI_Iallreduce(c->sbuf, c->rbuf, (int)(c->size / 4), MPI_UINT32_T, MPI_SUM, c->comm, req);
}

static int setup(scope_ctx *c, void **st) {
  c->size &= ~(size_t)3;
  c->sbuf_bytes = c->rbuf_bytes = c->size;
  c->bytes_per_op = (double)c->size;
  return nb_setup(st);
}

static void start(scope_ctx *c, void *st) {
  nb_calibrate(c, st, start_op);
}
static void run(scope_ctx *c, void *st) {
  nb_run(c, st, start_op);
}

static size_t verify(scope_ctx *c, void *st, uint64_t seed, size_t *first) {
  (void)st;
  return coll_check_sum(c, c->rbuf, c->size, seed, first);
}

const scope_test test_coll_iallreduce = {
    .name = "coll.iallreduce",
    .level = "coll",
    .summary = "MPI_Iallreduce + wait, optionally with computation between (overlap)",
    .measures = "global completion time (last exit - common start)",
    .min_ranks = 2,
    .sized = 1,
    .timing = SCOPE_TIMING_WINDOW,
    .params = nb_params,
    .nparams = 1,
    .setup = setup,
    .start = start,
    .run = run,
    .verify = verify,
    .teardown = coll_free,
};
