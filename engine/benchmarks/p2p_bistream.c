/* Bidirectional streaming bandwidth: ranks 0 and 1 stream windows to each other at once.
 * After each window both have re-posted their receives and say so with a zero-byte
 * exchange.  Time per message slot = window time / window; bandwidth counts both
 * directions (2 x size per slot). */
#include "window.h"

static const scope_param params[] = {
    SCOPE_PARAM_MODE_ALL, SCOPE_PARAM_SEND_BLOCKING, SCOPE_PARAM_WINDOW, SCOPE_PARAM_RECEIVE, SCOPE_PARAM_STREAM_API,
};

typedef stream_state state;

static int setup(scope_ctx *c, void **st) {
  state *s = stream_setup(c, c->rank == 0 ? 1 : 0, c->rank < 2);
  if (!s)
    return -1;
  c->bytes_per_op = 2.0 * (double)c->size;
  *st = s;
  return 0;
}

static void start(scope_ctx *c, void *st) {
  state *s = st;
  if (c->rank < 2)
    rxw_post(&s->rx, c->rbuf, c->comm);
}

static void run(scope_ctx *c, void *st) {
  state *s = st;
  if (c->rank > 1)
    return;
  int peer = 1 - c->rank;
  stream_send(c, s, peer);
  rxw_cycle(&s->rx, c->rbuf, c->comm);
  MPI_Sendrecv(NULL, 0, MPI_BYTE, peer, 1, NULL, 0, MPI_BYTE, peer, 1, c->comm, MPI_STATUS_IGNORE);
}

static size_t verify(scope_ctx *c, void *st, uint64_t seed, size_t *first) {
  state *s = st;
  return c->rank < 2 ? rxw_verify(&s->rx, seed, first) : 0;
}

const scope_test test_p2p_bistream = {
    .name = "p2p.bistream",
    .level = "p2p",
    .summary = "bidirectional bandwidth: ranks 0 and 1 stream windows to each other at once",
    .measures = "time per message slot, both directions",
    .min_ranks = 2,
    .sized = 1,
    .roles = {"link:2", "peer:osu_bibw", "peer:osu_bibw_persistent"},
    SCOPE_PARAMS(params),
    .setup = setup,
    .start = start,
    .run = run,
    .verify = verify,
    .teardown = stream_teardown,
};
