/* Plain sockets between ranks 0 and 1, for the network level (SCOPE §6.5.1): the raw
 * transport under MPI.  Rank 1 listens on an ephemeral port and publishes its IPv4
 * addresses over MPI; rank 0 connects to the first that answers (so across network
 * namespaces or hosts the real path is used, and 127.0.0.1 only on one node).  Buffer sizes
 * are set as asked and the sizes the kernel granted are reported. */
#ifndef SCOPE_SOCK_H
#define SCOPE_SOCK_H
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../scope.h"

#define SOCK_MAX_ADDRS 8

static const char *const sock_recv_modes[] = {"block", "poll", NULL};
#define SCOPE_PARAM_RECV                                                                                               \
  {                                                                                                                    \
    "recv", SP_ENUM, "poll", 0, 0, sock_recv_modes,                                                                    \
        "poll: spin on non-blocking recv (as MPI does); block: blocking recv"                                          \
  }

typedef struct {
  int fd;        /* the data socket on ranks 0 and 1, else -1 */
  uint32_t peer; /* rank 1's address rank 0 reached (network order) */
  int sndbuf, rcvbuf;
  int recv; /* how the receiver waits (recv=poll|block), read once per point */
} sock_link;

static inline int sock_addrs(uint32_t *out, int same_node) {
  struct ifaddrs *ifa, *i;
  int n = 0;
  if (getifaddrs(&ifa) == 0) {
    for (i = ifa; i && n < SOCK_MAX_ADDRS - 1; i = i->ifa_next)
      if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET && !(i->ifa_flags & IFF_LOOPBACK) && (i->ifa_flags & IFF_UP))
        out[n++] = ((struct sockaddr_in *)i->ifa_addr)->sin_addr.s_addr;
    freeifaddrs(ifa);
  }
  if (same_node)
    out[n++] = htonl(INADDR_LOOPBACK);
  return n;
}

static inline void sock_buffers(int fd, int bytes, sock_link *l) {
  if (bytes > 0) {
    setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &bytes, sizeof bytes);
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &bytes, sizeof bytes);
  }
  socklen_t len = sizeof l->sndbuf;
  getsockopt(fd, SOL_SOCKET, SO_SNDBUF, &l->sndbuf, &len);
  len = sizeof l->rcvbuf;
  getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &l->rcvbuf, &len);
}

static inline int connect_timeout(int fd, const struct sockaddr_in *a, int ms) {
  int fl = fcntl(fd, F_GETFL);
  fcntl(fd, F_SETFL, fl | O_NONBLOCK);
  int rc = connect(fd, (const struct sockaddr *)a, sizeof *a);
  if (rc && errno == EINPROGRESS) {
    struct pollfd p = {fd, POLLOUT, 0};
    int err = 0;
    socklen_t el = sizeof err;
    rc = poll(&p, 1, ms) == 1 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) == 0 && err == 0 ? 0 : -1;
  }
  fcntl(fd, F_SETFL, fl);
  return rc;
}

/* A TCP connection between ranks 0 and 1 (collective).  Returns NULL or why it failed. */
static inline const char *sock_tcp_open(scope_ctx *c, sock_link *l, int bufbytes) {
  l->fd = -1;
  int same = c->node0 == c->node1;
  struct {
    uint32_t addr[SOCK_MAX_ADDRS];
    int n;
    uint16_t port;
  } pub = {{0}, 0, 0};
  int lfd = -1;
  if (c->rank == 1) {
    lfd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_ANY)};
    socklen_t al = sizeof a;
    if (lfd >= 0 && bind(lfd, (struct sockaddr *)&a, sizeof a) == 0 && listen(lfd, 4) == 0 &&
        getsockname(lfd, (struct sockaddr *)&a, &al) == 0) {
      pub.port = a.sin_port;
      pub.n = sock_addrs(pub.addr, same);
    }
  }
  MPI_Bcast(&pub, sizeof pub, MPI_BYTE, 1, c->comm);
  int ok = pub.n > 0, all;
  if (c->rank == 0 && ok) {
    ok = 0;
    for (int i = 0; i < pub.n && !ok; i++) {
      int fd = socket(AF_INET, SOCK_STREAM, 0);
      struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = pub.port, .sin_addr.s_addr = pub.addr[i]};
      if (fd >= 0)
        sock_buffers(fd, bufbytes, l); /* before connect: the window scale is fixed at the handshake */
      if (fd >= 0 && connect_timeout(fd, &a, 2000) == 0) {
        l->fd = fd;
        l->peer = pub.addr[i];
        ok = 1;
      } else if (fd >= 0) {
        close(fd);
      }
    }
  }
  if (c->rank == 1 && ok) {
    struct pollfd p = {lfd, POLLIN, 0};
    ok = poll(&p, 1, 20000) == 1 && (l->fd = accept(lfd, NULL, NULL)) >= 0;
    if (ok)
      sock_buffers(l->fd, bufbytes, l);
  }
  if (lfd >= 0)
    close(lfd);
  if (l->fd >= 0) {
    int one = 1;
    setsockopt(l->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  }
  if (c->rank > 1)
    ok = 1;
  MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, c->comm);
  MPI_Bcast(&l->peer, 1, MPI_UINT32_T, 0, c->comm);
  if (!all) {
    if (l->fd >= 0)
      close(l->fd);
    l->fd = -1;
    return "no TCP connection between ranks 0 and 1 (no reachable IPv4 address)";
  }
  return NULL;
}

static inline void sock_note(scope_ctx *c, const sock_link *l, const char *what) {
  char a[INET_ADDRSTRLEN] = "?";
  inet_ntop(AF_INET, &l->peer, a, sizeof a);
  snprintf(c->note, sizeof c->note, "%s to %s; SO_SNDBUF %d, SO_RCVBUF %d bytes granted", what, a, l->sndbuf,
           l->rcvbuf);
  c->extra[c->nextra].name = "sndbuf_bytes";
  c->extra[c->nextra++].value = l->sndbuf;
  c->extra[c->nextra].name = "rcvbuf_bytes";
  c->extra[c->nextra++].value = l->rcvbuf;
}

static inline void write_all(int fd, const char *b, size_t n) {
  while (n) {
    ssize_t k = send(fd, b, n, 0);
    if (k <= 0) {
      if (k < 0 && errno == EINTR)
        continue;
      fprintf(stderr, "scope-engine: error: TCP send failed: %s\n", strerror(errno));
      MPI_Abort(MPI_COMM_WORLD, 5);
    }
    b += k;
    n -= (size_t)k;
  }
}

/* poll: spin on non-blocking receives, as MPI libraries do, so the time is the transport's
 * and not a scheduler wake-up; block: a plain blocking recv(). */
static inline void read_all_mode(int fd, char *b, size_t n, int poll_mode) {
  while (n) {
    ssize_t k = recv(fd, b, n, poll_mode ? MSG_DONTWAIT : 0);
    if (k <= 0) {
      if (k < 0 && (errno == EINTR || (poll_mode && (errno == EAGAIN || errno == EWOULDBLOCK))))
        continue;
      fprintf(stderr, "scope-engine: error: TCP receive failed: %s\n", k ? strerror(errno) : "peer closed");
      MPI_Abort(MPI_COMM_WORLD, 5);
    }
    b += k;
    n -= (size_t)k;
  }
}

#endif
