/* MPI_Ibcast from rank 0 with an optional computation between start and wait. */
#include "coll_nb.h"

static void start_op(scope_ctx *c, MPI_Request *req) {
  MPI_Ibcast(c->rank == 0 ? c->sbuf : c->rbuf, (int)c->size, MPI_BYTE, 0, c->comm, req);
}

static int setup(scope_ctx *c, void **st) {
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
  return c->rank == 0 ? 0 : scope_check(c->rbuf, c->size, seed, 0, first);
}

const scope_test test_coll_ibcast = {
    .name = "coll.ibcast",
    .level = "coll",
    .summary = "MPI_Ibcast + wait from rank 0, optionally with computation between (overlap)",
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
