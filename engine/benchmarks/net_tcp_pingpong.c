/* TCP ping-pong between ranks 0 and 1 over plain sockets (SCOPE §6.5.1): latency = RTT/2,
 * TCP_NODELAY on.  TCP has no empty message, so size 0 is sent as a 1-byte token. */
#include <stdlib.h>

#include "sock.h"

static const scope_param params[] = {
    SCOPE_PARAM_SOCKBUF,
    SCOPE_PARAM_RECV,
};

static int setup(scope_ctx *c, void **st) {
  sock_link *l = calloc(1, sizeof *l);
  if (!l)
    return -1;
  *st = l;
  c->skip = sock_tcp_open(c, l, (int)scope_param_get(c, "sockbuf"));
  l->recv = (int)scope_param_get(c, "recv");
  size_t n = c->size ? c->size : 1;
  c->sbuf_bytes = c->rbuf_bytes = n;
  c->ops_per_iter = 2;
  c->bytes_per_op = (double)c->size;
  if (!c->skip)
    sock_note(c, l, c->size ? "TCP" : "TCP, 0 B sent as a 1-byte token,");
  return 0;
}

static void run(scope_ctx *c, void *st) {
  sock_link *l = st;
  size_t n = c->size ? c->size : 1;
  if (c->rank == 0) {
    write_all(l->fd, c->sbuf, n);
    read_all_mode(l->fd, c->rbuf, n, l->recv);
  } else if (c->rank == 1) {
    read_all_mode(l->fd, c->rbuf, n, l->recv);
    write_all(l->fd, c->rbuf, n);
  }
}

static size_t verify(scope_ctx *c, void *st, uint64_t seed, size_t *first) {
  (void)st;
  return c->rank < 2 ? scope_check(c->rbuf, c->size ? c->size : 1, seed, 0, first) : 0;
}

static void teardown(scope_ctx *c, void *st) {
  sock_link *l = st;
  (void)c;
  if (l->fd >= 0)
    close(l->fd);
  free(l);
}

const scope_test test_net_tcp_pingpong = {
    .name = "net.tcp.pingpong",
    .level = "net",
    .summary = "TCP socket ping-pong between ranks 0 and 1 (below MPI); latency = RTT/2",
    .measures = "one-way latency (RTT/2)",
    .min_ranks = 2,
    .sized = 1,
    .roles = {"latency:TCP sockets", "link:1"},
    SCOPE_PARAMS(params),
    .setup = setup,
    .run = run,
    .verify = verify,
    .teardown = teardown,
};
