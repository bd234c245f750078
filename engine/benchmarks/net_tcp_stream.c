/* TCP streaming bandwidth: rank 0 writes a window of messages back to back, rank 1 reads
 * them into distinct slots and answers the window with a 1-byte acknowledgement.  Time per
 * message = window time / window. */
#include <stdlib.h>

#include "sock.h"
#include "window.h"

static const scope_param params[] = {
    SCOPE_PARAM_SOCKBUF,
    SCOPE_PARAM_WINDOW,
    SCOPE_PARAM_RECV,
};

typedef struct {
  sock_link l;
  int w;
} state;

static int setup(scope_ctx *c, void **st) {
  state *s = calloc(1, sizeof *s);
  if (!s)
    return -1;
  *st = s;
  s->w = window_effective(c, scope_param_get(c, "window"));
  c->skip = sock_tcp_open(c, &s->l, (int)scope_param_get(c, "sockbuf"));
  s->l.recv = (int)scope_param_get(c, "recv");
  size_t n = c->size ? c->size : 1; /* TCP has no empty message: 0 B goes as a 1-byte token */
  c->sbuf_bytes = n;
  c->rbuf_bytes = (size_t)s->w * n;
  c->ops_per_iter = s->w;
  c->bytes_per_op = (double)c->size;
  if (!c->skip && !c->note[0])
    sock_note(c, &s->l, c->size ? "TCP" : "TCP, 0 B sent as 1-byte tokens,");
  return 0;
}

static void run(scope_ctx *c, void *st) {
  state *s = st;
  char ack = 1;
  size_t n = c->size ? c->size : 1;
  if (c->rank == 0) {
    for (int i = 0; i < s->w; i++)
      write_all(s->l.fd, c->sbuf, n);
    read_all_mode(s->l.fd, &ack, 1, s->l.recv);
  } else if (c->rank == 1) {
    read_all_mode(s->l.fd, c->rbuf, (size_t)s->w * n, s->l.recv);
    write_all(s->l.fd, &ack, 1);
  }
}

static size_t verify(scope_ctx *c, void *st, uint64_t seed, size_t *first) {
  state *s = st;
  size_t bad = 0;
  size_t n = c->size ? c->size : 1;
  for (int i = 0; c->rank == 1 && i < s->w; i++)
    bad += scope_check(c->rbuf + (size_t)i * n, n, seed, 0, first);
  return bad;
}

static void teardown(scope_ctx *c, void *st) {
  state *s = st;
  (void)c;
  if (s->l.fd >= 0)
    close(s->l.fd);
  free(s);
}

const scope_test test_net_tcp_stream = {
    .name = "net.tcp.stream",
    .level = "net",
    .summary = "TCP socket streaming bandwidth from rank 0 to rank 1 (below MPI)",
    .measures = "time per message in a stream",
    .min_ranks = 2,
    .sized = 1,
    .roles = {"bandwidth:TCP sockets", "link:1"},
    SCOPE_PARAMS(params),
    .setup = setup,
    .run = run,
    .verify = verify,
    .teardown = teardown,
};
