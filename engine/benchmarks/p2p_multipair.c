/* Multi-pair ping-pong: ranks (0,1), (2,3), ... ping-pong concurrently, so pairs compete for
 * the network, the memory bus or a switch.  Reported time = one-way (RTT/2) of the slowest
 * pair; bandwidth = all pairs' bytes per one-way time, the aggregate.  With an odd count the
 * last rank only takes part in the timing. */
#include "coll.h"

static int setup(scope_ctx *c, void **st) {
  c->ops_per_iter = 2;
  c->bytes_per_op = (double)c->size * (c->nranks / 2);
  return coll_setup_state(c, st, NULL);
}

static void run(scope_ctx *c, void *st) {
  (void)st;
  int peer = c->rank ^ 1;
  if (peer >= c->nranks)
    return;
  if (c->rank % 2 == 0) {
    MPI_Send(c->sbuf, (int)c->size, MPI_BYTE, peer, 4, c->comm);
    MPI_Recv(c->rbuf, (int)c->size, MPI_BYTE, peer, 4, c->comm, MPI_STATUS_IGNORE);
  } else {
    MPI_Recv(c->rbuf, (int)c->size, MPI_BYTE, peer, 4, c->comm, MPI_STATUS_IGNORE);
    MPI_Send(c->rbuf, (int)c->size, MPI_BYTE, peer, 4, c->comm);
  }
}

/* The odd rank echoed what the even rank sent: both hold the even rank's pattern. */
static size_t verify(scope_ctx *c, void *st, uint64_t seed, size_t *first) {
  (void)st;
  int peer = c->rank ^ 1;
  return peer < c->nranks ? scope_check(c->rbuf, c->size, seed, c->rank & ~1, first) : 0;
}

const scope_test test_p2p_multipair = {
    .name = "p2p.multipair",
    .level = "p2p",
    .summary = "concurrent ping-pongs between pairs (0,1), (2,3), ...: latency and aggregate bandwidth",
    .measures = "one-way latency (RTT/2) of the slowest pair",
    .min_ranks = 2,
    .sized = 1,
    .timing = SCOPE_TIMING_WINDOW,
    .roles = {"link:1"},
    .setup = setup,
    .run = run,
    .verify = verify,
    .teardown = coll_free,
};
