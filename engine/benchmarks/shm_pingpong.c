/* Ping-pong over a user-level shared-memory channel (ParaStation2's HAL layer): the cost of
 * moving a message between two processes of one node with no library and no system call,
 * the floor under MPI's own shared-memory path.  Latency = RTT/2. */
#include <stdlib.h>

#include "ring.h"

static const scope_param params[] = {
    SCOPE_PARAM_RING,
};

static int setup(scope_ctx *c, void **st) {
  ring_pair *p = calloc(1, sizeof *p);
  if (!p)
    return -1;
  c->skip = ring_pair_open(c, p, (size_t)scope_param_get(c, "ring"));
  c->ops_per_iter = 2;
  c->bytes_per_op = (double)c->size;
  *st = p;
  return 0;
}

static void run(scope_ctx *c, void *st) {
  ring_pair *p = st;
  if (c->rank == 0) {
    ring_send(p->to1, p->cap, c->sbuf, c->size);
    ring_recv(p->to0, p->cap, c->rbuf, c->size);
  } else if (c->rank == 1) {
    ring_recv(p->to1, p->cap, c->rbuf, c->size);
    ring_send(p->to0, p->cap, c->rbuf, c->size);
  }
}

static size_t verify(scope_ctx *c, void *st, uint64_t seed, size_t *first) {
  (void)st;
  return c->rank < 2 ? scope_check(c->rbuf, c->size, seed, 0, first) : 0;
}

static void teardown(scope_ctx *c, void *st) {
  ring_pair *p = st;
  (void)c;
  scope_shm_unmap(p->seg, p->seg_bytes);
  free(p);
}

const scope_test test_shm_pingpong = {
    .name = "shm.pingpong",
    .level = "shm",
    .summary = "ping-pong over a lock-free shared-memory ring between ranks 0 and 1 (same node)",
    .measures = "one-way latency (RTT/2)",
    .min_ranks = 2,
    .sized = 1,
    .roles = {"latency:shared-memory channel"},
    SCOPE_PARAMS(params),
    .setup = setup,
    .run = run,
    .verify = verify,
    .teardown = teardown,
};
