/* Ping-ping (IMB PingPing): ranks 0 and 1 send to each other at the same time, so each
 * message meets the other in flight.  Time = one iteration (one message each way,
 * concurrently); bandwidth = size / time, as IMB reports it. */
#include <stdlib.h>

#include "../scope.h"

static const scope_param params[] = {
    SCOPE_PARAM_MODE_NO_READY,
    {"blocking", SP_BOOL, "yes", 0, 1, scope_bool_choices,
     "blocking receive (yes) or non-blocking receive + waitall (no); the send is always non-blocking"},
};

typedef struct {
  int mode, blocking;
} state;

static int setup(scope_ctx *c, void **st) {
  state *s = malloc(sizeof *s);
  if (!(*st = s))
    return -1;
  s->mode = (int)scope_param_get(c, "mode");
  s->blocking = (int)scope_param_get(c, "blocking");
  c->ops_per_iter = 1;
  c->bytes_per_op = (double)c->size;
  if (scope_param_get(c, "mode") == MODE_BUFFERED && c->rank < 2)
    scope_bsend_attach(1, c->size);
  return 0;
}

static void run(scope_ctx *c, void *st) {
  const state *s = st;
  if (c->rank > 1)
    return;
  int peer = 1 - c->rank, mode = s->mode;
  MPI_Request r[2];
  if (s->blocking) {
    scope_isend(mode, c->sbuf, c->size, peer, 0, c->comm, &r[0]);
    MPI_Recv(c->rbuf, (int)c->size, MPI_BYTE, peer, 0, c->comm, MPI_STATUS_IGNORE);
    MPI_Wait(&r[0], MPI_STATUS_IGNORE);
  } else {
    MPI_Irecv(c->rbuf, (int)c->size, MPI_BYTE, peer, 0, c->comm, &r[1]);
    scope_isend(mode, c->sbuf, c->size, peer, 0, c->comm, &r[0]);
    MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
  }
}

static size_t verify(scope_ctx *c, void *st, uint64_t seed, size_t *first) {
  (void)st;
  return c->rank > 1 ? 0 : scope_check(c->rbuf, c->size, seed, 1 - c->rank, first);
}

static void teardown(scope_ctx *c, void *st) {
  if (scope_param_get(c, "mode") == MODE_BUFFERED && c->rank < 2)
    scope_bsend_detach();
  free(st);
}

const scope_test test_p2p_pingping = {
    .name = "p2p.pingping",
    .level = "p2p",
    .summary = "ranks 0 and 1 send to each other simultaneously (IMB PingPing)",
    .measures = "time of one simultaneous exchange",
    .min_ranks = 2,
    .sized = 1,
    .roles = {"peer:imb_PingPing"},
    SCOPE_PARAMS(params),
    .setup = setup,
    .run = run,
    .verify = verify,
    .teardown = teardown,
};
