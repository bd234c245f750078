/* Unidirectional streaming bandwidth (SCOPE §6.5.3): rank 0 sends a window of back-to-back
 * messages to rank 1, whose receives are pre-posted; rank 1 acknowledges each window with a
 * zero-byte message.  Time per message = window time / window, bandwidth = size / that. */
#include "window.h"

static const scope_param params[] = {
    SCOPE_PARAM_MODE_ALL, SCOPE_PARAM_SEND_BLOCKING, SCOPE_PARAM_WINDOW, SCOPE_PARAM_RECEIVE, SCOPE_PARAM_STREAM_API,
};

typedef stream_state state;

static int setup(scope_ctx *c, void **st) {
  state *s = stream_setup(c, 0, c->rank == 0);
  if (!s)
    return -1;
  c->bytes_per_op = (double)c->size;
  *st = s;
  return 0;
}

static void start(scope_ctx *c, void *st) {
  state *s = st;
  if (c->rank == 1)
    rxw_post(&s->rx, c->rbuf, c->comm);
}

static void run(scope_ctx *c, void *st) {
  state *s = st;
  if (c->rank == 0) {
    stream_send(c, s, 1);
    MPI_Recv(NULL, 0, MPI_BYTE, 1, 1, c->comm, MPI_STATUS_IGNORE);
  } else if (c->rank == 1) {
    rxw_cycle(&s->rx, c->rbuf, c->comm);
    MPI_Send(NULL, 0, MPI_BYTE, 0, 1, c->comm);
  }
}

static size_t verify(scope_ctx *c, void *st, uint64_t seed, size_t *first) {
  state *s = st;
  return c->rank == 1 ? rxw_verify(&s->rx, seed, first) : 0;
}

const scope_test test_p2p_stream = {
    .name = "p2p.stream",
    .level = "p2p",
    .summary = "unidirectional bandwidth: windows of back-to-back sends from rank 0 to rank 1",
    .measures = "time per message in a stream",
    .min_ranks = 2,
    .sized = 1,
    .roles = {"bandwidth:MPI", "link:1", "peer:osu_bw", "peer:osu_bw_persistent"},
    SCOPE_PARAMS(params),
    .setup = setup,
    .start = start,
    .run = run,
    .verify = verify,
    .teardown = stream_teardown,
};
