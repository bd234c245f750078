/* UDP ping-pong between ranks 0 and 1: the datagram path, latency = RTT/2.  Each datagram
 * carries an 8-byte sequence number ahead of the payload (in its own iovec, so the payload
 * keeps its pattern).  A datagram not answered within `timeout_ms` counts as lost and is sent
 * again (at most 10 times); losses are reported with the point (extra.lost, extra.sent), never
 * hidden, and the retried iteration's longer time stays in the samples.  Both sides spin on
 * non-blocking receives, as net.tcp.* does with recv=poll. */
#include <stdlib.h>
#include <sys/uio.h>
#include <time.h>

#include "sock.h"

#define UDP_MAX_PAYLOAD (65507 - 8)
#define UDP_RETRIES 10

static const scope_param params[] = {
    {"timeout_ms", SP_INT, "200", 1, 60000, NULL, "an unanswered datagram is lost after this, then sent again"},
};

typedef struct {
  int fd;
  uint64_t seq, expect;
  double lost, sent;
  double timeout_ms;
} state;

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

static ssize_t send_dgram(int fd, uint64_t seq, const char *buf, size_t n) {
  struct iovec v[2] = {{&seq, sizeof seq}, {(void *)buf, n}};
  struct msghdr m = {.msg_iov = v, .msg_iovlen = 2};
  return sendmsg(fd, &m, 0);
}

/* Spins for a datagram until deadline_ms; returns its sequence number, or 0 on time-out. */
static uint64_t recv_dgram(int fd, char *buf, size_t n, double deadline_ms) {
  uint64_t seq = 0;
  struct iovec v[2] = {{&seq, sizeof seq}, {buf, n}};
  struct msghdr m = {.msg_iov = v, .msg_iovlen = 2};
  for (unsigned spin = 0;; spin++) {
    if (recvmsg(fd, &m, MSG_DONTWAIT) >= (ssize_t)sizeof seq)
      return seq;
    if ((spin & 1023) == 0 && now_ms() > deadline_ms)
      return 0;
  }
}

static int setup(scope_ctx *c, void **st) {
  state *s = calloc(1, sizeof *s);
  if (!s)
    return -1;
  s->fd = -1;
  s->expect = 1;
  s->timeout_ms = (double)scope_param_get(c, "timeout_ms");
  *st = s;
  c->ops_per_iter = 2;
  c->bytes_per_op = (double)c->size;
  if (c->size > UDP_MAX_PAYLOAD) {
    c->skip = "larger than one UDP datagram (65,499 bytes of payload after the sequence number)";
    return 0;
  }
  /* A TCP connection finds the path (and each side learns the other's address), then the
   * datagram sockets are bound and connected along it. */
  sock_link l;
  const char *why = sock_tcp_open(c, &l, 0);
  if (why) {
    c->skip = why;
    return 0;
  }
  struct sockaddr_in peer = {0};
  socklen_t pl = sizeof peer;
  uint16_t port = 0, ports[2] = {0, 0};
  if (c->rank < 2) {
    getpeername(l.fd, (struct sockaddr *)&peer, &pl);
    s->fd = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_ANY)};
    socklen_t al = sizeof a;
    bind(s->fd, (struct sockaddr *)&a, sizeof a);
    getsockname(s->fd, (struct sockaddr *)&a, &al);
    port = a.sin_port;
    int big = 4 << 20;
    setsockopt(s->fd, SOL_SOCKET, SO_RCVBUF, &big, sizeof big);
    setsockopt(s->fd, SOL_SOCKET, SO_SNDBUF, &big, sizeof big);
    sock_buffers(s->fd, 0, &l); /* report the datagram socket's buffers, not the probe's */
  }
  uint16_t mine[2] = {c->rank == 0 ? port : 0, c->rank == 1 ? port : 0};
  MPI_Allreduce(mine, ports, 2, MPI_UINT16_T, MPI_SUM, c->comm);
  int ok = 1, all;
  if (c->rank < 2) {
    peer.sin_port = ports[1 - c->rank];
    ok = connect(s->fd, (struct sockaddr *)&peer, sizeof peer) == 0;
    close(l.fd);
  }
  MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, c->comm);
  if (!all)
    c->skip = "cannot connect UDP sockets between ranks 0 and 1";
  else
    sock_note(c, &l, "UDP (TCP-probed path)");
  return 0;
}

static void run(scope_ctx *c, void *st) {
  state *s = st;
  double timeout = s->timeout_ms;
  if (c->rank == 0) {
    uint64_t k = ++s->seq;
    for (int attempt = 0; attempt <= UDP_RETRIES; attempt++) {
      send_dgram(s->fd, k, c->sbuf, c->size);
      s->sent++;
      double deadline = now_ms() + timeout;
      uint64_t got;
      while ((got = recv_dgram(s->fd, c->rbuf, c->size, deadline)) && got != k)
        ; /* a late answer to an earlier attempt: wait on */
      if (got == k)
        return;
      s->lost++;
    }
  } else if (c->rank == 1) {
    /* Echo everything; an iteration ends with the next new sequence number.  A duplicate is a
     * resend whose answer was lost: answer it again.  Rank 0 gives up after its retries, so
     * give up after as long. */
    double deadline = now_ms() + timeout * (UDP_RETRIES + 2);
    uint64_t got;
    while ((got = recv_dgram(s->fd, c->rbuf, c->size, deadline))) {
      send_dgram(s->fd, got, c->rbuf, c->size);
      s->sent++;
      if (got >= s->expect) {
        s->expect = got + 1;
        return;
      }
    }
  }
}

static size_t verify(scope_ctx *c, void *st, uint64_t seed, size_t *first) {
  state *s = st;
  double mine[2] = {s->lost, s->sent}, sum[2];
  MPI_Allreduce(mine, sum, 2, MPI_DOUBLE, MPI_SUM, c->comm);
  c->nextra = 2; /* after the buffer sizes sock_note recorded */
  c->extra[c->nextra].name = "lost";
  c->extra[c->nextra++].value = sum[0];
  c->extra[c->nextra].name = "sent";
  c->extra[c->nextra++].value = sum[1];
  return c->rank < 2 ? scope_check(c->rbuf, c->size, seed, 0, first) : 0;
}

static void teardown(scope_ctx *c, void *st) {
  state *s = st;
  (void)c;
  if (s->fd >= 0)
    close(s->fd);
  free(s);
}

const scope_test test_net_udp_pingpong = {
    .name = "net.udp.pingpong",
    .level = "net",
    .summary = "UDP datagram ping-pong between ranks 0 and 1 (below MPI), loss counted and reported",
    .measures = "one-way latency (RTT/2)",
    .min_ranks = 2,
    .sized = 1,
    .roles = {"link:1"},
    SCOPE_PARAMS(params),
    .setup = setup,
    .run = run,
    .verify = verify,
    .teardown = teardown,
};
