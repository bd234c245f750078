/* Streaming bandwidth over the shared-memory ring: rank 0 writes a window of messages back to
 * back, rank 1 reads them into distinct slots and acknowledges the window with an empty
 * message.  Time per message = window time / window. */
#include <stdlib.h>

#include "ring.h"
#include "window.h"

static const scope_param params[] = {
    SCOPE_PARAM_RING,
    SCOPE_PARAM_WINDOW,
};

typedef struct {
  ring_pair p;
  int w;
} state;

static int setup(scope_ctx *c, void **st) {
  state *s = calloc(1, sizeof *s);
  if (!s)
    return -1;
  c->skip = ring_pair_open(c, &s->p, (size_t)scope_param_get(c, "ring"));
  s->w = window_effective(c, scope_param_get(c, "window"));
  c->rbuf_bytes = (size_t)s->w * c->size;
  c->ops_per_iter = s->w;
  c->bytes_per_op = (double)c->size;
  *st = s;
  return 0;
}

static void run(scope_ctx *c, void *st) {
  state *s = st;
  char ack;
  if (c->rank == 0) {
    for (int i = 0; i < s->w; i++)
      ring_send(s->p.to1, s->p.cap, c->sbuf, c->size);
    ring_recv(s->p.to0, s->p.cap, &ack, 0);
  } else if (c->rank == 1) {
    for (int i = 0; i < s->w; i++)
      ring_recv(s->p.to1, s->p.cap, c->rbuf + (size_t)i * c->size, c->size);
    ring_send(s->p.to0, s->p.cap, &ack, 0);
  }
}

static size_t verify(scope_ctx *c, void *st, uint64_t seed, size_t *first) {
  state *s = st;
  size_t bad = 0;
  for (int i = 0; c->rank == 1 && i < s->w; i++)
    bad += scope_check(c->rbuf + (size_t)i * c->size, c->size, seed, 0, first);
  return bad;
}

static void teardown(scope_ctx *c, void *st) {
  state *s = st;
  (void)c;
  scope_shm_unmap(s->p.seg, s->p.seg_bytes);
  free(s);
}

const scope_test test_shm_stream = {
    .name = "shm.stream",
    .level = "shm",
    .summary = "streaming bandwidth over the shared-memory ring from rank 0 to rank 1 (same node)",
    .measures = "time per message in a stream",
    .min_ranks = 2,
    .sized = 1,
    .roles = {"bandwidth:shared-memory channel"},
    SCOPE_PARAMS(params),
    .setup = setup,
    .run = run,
    .verify = verify,
    .teardown = teardown,
};
