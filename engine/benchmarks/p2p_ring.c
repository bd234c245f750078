/* Ring (MPIBench): every rank sends to its right neighbour and receives from its left, all
 * at once.  Timed in windows on the global clock, so each rank's own time and the spread
 * between ranks are kept, not just the slowest. */
#include "coll.h"

static int setup(scope_ctx *c, void **st) {
  c->bytes_per_op = (double)c->size * c->nranks; /* bytes in flight around the whole ring */
  return coll_setup_state(c, st, NULL);
}

static void run(scope_ctx *c, void *st) {
  (void)st;
  MPI_Request r[2];
  int right = (c->rank + 1) % c->nranks, left = (c->rank + c->nranks - 1) % c->nranks;
  MPI_Irecv(c->rbuf, (int)c->size, MPI_BYTE, left, 3, c->comm, &r[0]);
  MPI_Isend(c->sbuf, (int)c->size, MPI_BYTE, right, 3, c->comm, &r[1]);
  MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
}

static size_t verify(scope_ctx *c, void *st, uint64_t seed, size_t *first) {
  (void)st;
  return scope_check(c->rbuf, c->size, seed, (c->rank + c->nranks - 1) % c->nranks, first);
}

const scope_test test_p2p_ring = {
    .name = "p2p.ring",
    .level = "p2p",
    .summary = "ring: every rank sends right and receives from the left at once (MPIBench)",
    .measures = "global completion time (last exit - common start)",
    .min_ranks = 2,
    .sized = 1,
    .timing = SCOPE_TIMING_WINDOW,
    .roles = {"link:1"},
    .setup = setup,
    .run = run,
    .verify = verify,
    .teardown = coll_free,
};
