/* MPI_Ialltoall with an optional computation between start and wait. */
#include "coll_nb.h"

static void start_op(scope_ctx *c, MPI_Request *req) {
  MPI_Ialltoall(c->sbuf, (int)c->size, MPI_BYTE, c->rbuf, (int)c->size, MPI_BYTE, c->comm, req);
}

static int setup(scope_ctx *c, void **st) {
  c->sbuf_bytes = c->rbuf_bytes = c->size * (size_t)c->nranks;
  c->bytes_per_op = (double)c->size * (c->nranks - 1);
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
  size_t bad = 0;
  for (int j = 0; j < c->nranks; j++)
    bad += scope_check_at(c->rbuf + (size_t)j * c->size, c->size, seed, j, (size_t)c->rank * c->size, first);
  return bad;
}

const scope_test test_coll_ialltoall = {
    .name = "coll.ialltoall",
    .level = "coll",
    .summary = "MPI_Ialltoall + wait, optionally with computation between (overlap)",
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
