/* A window of pre-posted receives shared by the streaming tests.  The next window is posted
 * (into the other half of the receive buffer) before the sender is told to go on, so every
 * message finds its receive already posted: valid for ready mode, and the "receives posted
 * before the sends" discipline of SCOPE §6.5.3 for all modes. */
#ifndef SCOPE_WINDOW_H
#define SCOPE_WINDOW_H
#include <stdio.h>
#include <stdlib.h>

#include "../scope.h"

/* A window never holds more than this, so a 4 MiB point does not need gigabytes. */
#define WINDOW_MAX_BYTES (16u << 20)

typedef struct {
  int w, one; /* one: every message into the same place (receive=one) */
  size_t n;
  int src;
  MPI_Request *req; /* the pending window's receives */
  char *posted;     /* region the pending receives land in */
  char *last;       /* region of the last completed window */
  /* api=persistent: a set of MPI_Recv_init requests per region they are bound to (the two
   * halves of rbuf alternate), made again where --offcache moved the buffer */
  int persistent;
  MPI_Request *own, *set[2];
  char *bound[2];
} rx_window;

/* The window to use when each operation keeps `per` bytes of its own (0: none, no cap): at most
 * what WINDOW_MAX_BYTES holds, at least one, and a note when it was cut. */
static inline int window_capped(scope_ctx *c, long asked, size_t per) {
  long w = asked;
  if (per > 0 && (size_t)w * per > WINDOW_MAX_BYTES) {
    w = (long)(WINDOW_MAX_BYTES / per);
    if (w < 1)
      w = 1;
    snprintf(c->note, sizeof c->note, "window reduced from %ld to %ld to keep it within 16 MiB", asked, w);
  }
  return (int)w;
}

/* A streaming window of messages of the point's size, each kept until the window ends. */
static inline int window_effective(scope_ctx *c, long asked) {
  return window_capped(c, asked, c->size);
}

/* The receive slots of an MPI stream's window hold at most this: a rank's receive buffer (two
 * windows of slots) is then 4 MiB, and with the send buffer it stays in the last-level cache as
 * the peers' single buffer does.  With 16 MiB windows (32 MiB of slots, this machine's whole L3)
 * the 128 KiB-4 MiB points read 7,400-11,750 MB/s against 12,700-15,800, and took 3-4 times as
 * long to reach ±1 % (docs/method.md).  Leaving the cache is --offcache's job. */
#define SLOTS_MAX_BYTES (2u << 20)

static inline int window_slots(scope_ctx *c, long asked, int one) {
  if (one || (size_t)asked * c->size <= SLOTS_MAX_BYTES)
    return (int)asked;
  long w = c->size >= SLOTS_MAX_BYTES ? 1 : (long)(SLOTS_MAX_BYTES / c->size);
  if (w >= asked) /* already one message, cut by the budget's pilot */
    return (int)asked;
  snprintf(c->note, sizeof c->note, "window reduced from %ld to %ld: its receive slots stay within 2 MiB (in cache)",
           asked, w);
  return (int)w;
}

/* Bytes of receive buffer a window needs: two regions (pending and last), each a slot per
 * message, or one message long with receive=one. */
static inline size_t rxw_bytes(int w, size_t n, int one) {
  return 2 * (one ? 1 : (size_t)w) * n;
}

static inline int rxw_init(rx_window *x, int w, size_t n, int src, int one) {
  x->w = w;
  x->one = one;
  x->n = n;
  x->src = src;
  x->own = x->req = malloc(sizeof(MPI_Request) * (size_t)w);
  x->set[0] = malloc(sizeof(MPI_Request) * (size_t)w);
  x->set[1] = malloc(sizeof(MPI_Request) * (size_t)w);
  x->bound[0] = x->bound[1] = NULL;
  if (!x->req || !x->set[0] || !x->set[1])
    return -1;
  for (int i = 0; i < w; i++)
    x->req[i] = x->set[0][i] = x->set[1][i] = MPI_REQUEST_NULL;
  x->posted = x->last = NULL;
  return 0;
}

static inline char *rxw_slot(const rx_window *x, char *region, int i) {
  return region + (x->one ? 0 : (size_t)i * x->n);
}

/* The persistent set for `region`: the one bound to it, else the one not pending, bound anew. */
static inline MPI_Request *rxw_bound(rx_window *x, char *region, MPI_Comm comm) {
  int k = x->bound[0] == region ? 0 : x->bound[1] == region ? 1 : x->req == x->set[0] ? 1 : 0;
  if (x->bound[k] != region) {
    for (int i = 0; i < x->w; i++) {
      if (x->set[k][i] != MPI_REQUEST_NULL)
        MPI_Request_free(&x->set[k][i]);
      MPI_Recv_init(rxw_slot(x, region, i), (int)x->n, MPI_BYTE, x->src, 0, comm, &x->set[k][i]);
    }
    x->bound[k] = region;
  }
  return x->set[k];
}

static inline void rxw_post(rx_window *x, char *region, MPI_Comm comm) {
  if (x->persistent) {
    x->req = rxw_bound(x, region, comm);
    MPI_Startall(x->w, x->req);
  } else {
    for (int i = 0; i < x->w; i++)
      MPI_Irecv(rxw_slot(x, region, i), (int)x->n, MPI_BYTE, x->src, 0, comm, &x->req[i]);
  }
  x->posted = region;
}

/* Completes the pending window and posts the next one into the half of rbuf it did not use. */
static inline void rxw_cycle(rx_window *x, char *rbuf, MPI_Comm comm) {
  MPI_Waitall(x->w, x->req, MPI_STATUSES_IGNORE);
  x->last = x->posted;
  char *next = x->last == rbuf ? rbuf + rxw_bytes(x->w, x->n, x->one) / 2 : rbuf;
  rxw_post(x, next, comm);
}

static inline size_t rxw_verify(const rx_window *x, uint64_t seed, size_t *first) {
  size_t bad = 0;
  for (int i = 0; i < (x->one ? 1 : x->w) && x->last; i++)
    bad += scope_check(x->last + (size_t)i * x->n, x->n, seed, x->src, first);
  return bad;
}

static inline void rxw_free(rx_window *x) {
  if (x->req && x->posted)
    scope_cancel_all(x->req, x->w);
  for (int k = 0; k < 2 && x->set[k]; k++)
    for (int i = 0; i < x->w; i++)
      if (x->set[k][i] != MPI_REQUEST_NULL)
        MPI_Request_free(&x->set[k][i]);
  free(x->own);
  free(x->set[0]);
  free(x->set[1]);
  x->req = x->own = x->set[0] = x->set[1] = NULL;
}

/* Sends one window of w messages of n bytes from buf. */
static inline void send_window(int mode, int blocking, const char *buf, size_t n, int w, int dst, MPI_Comm comm,
                               MPI_Request *reqs) {
  if (blocking) {
    for (int i = 0; i < w; i++)
      scope_send(mode, buf, n, dst, 0, comm);
  } else {
    for (int i = 0; i < w; i++)
      scope_isend(mode, buf, n, dst, 0, comm, &reqs[i]);
    MPI_Waitall(w, reqs, MPI_STATUSES_IGNORE);
  }
}

/* What the MPI streaming tests (p2p.stream, p2p.bistream) share: a window of sends in a send
 * mode, and a window of pre-posted receives from `src`.  Ranks for which `sends` is set
 * attach a buffer for buffered mode. */
typedef struct {
  rx_window rx;
  MPI_Request *sreq;
  int w, mode, blocking, sends;
  int persistent;     /* api=persistent: MPI_Send_init / MPI_Recv_init once, MPI_Startall each window */
  const char *sbound; /* the send buffer the persistent sends are bound to */
} stream_state;

static const char *const stream_apis[] = {"standard", "persistent", NULL};
#define SCOPE_PARAM_STREAM_API                                                                                         \
  {                                                                                                                    \
    "api", SP_ENUM, "standard", 0, 0, stream_apis,                                                                     \
        "standard calls, or persistent requests (MPI_Send_init / MPI_Recv_init, MPI_Startall a window, as "            \
        "osu_bw_persistent)"                                                                                           \
  }

/* One window of sends to dst, in the state's mode and API. */
static inline void stream_send(scope_ctx *c, stream_state *s, int dst) {
  if (!s->persistent) {
    send_window(s->mode, s->blocking, c->sbuf, c->size, s->w, dst, c->comm, s->sreq);
    return;
  }
  if (s->sbound != c->sbuf) { /* bound again where --offcache moved the buffer */
    for (int i = 0; i < s->w; i++) {
      if (s->sbound)
        MPI_Request_free(&s->sreq[i]);
      MPI_Send_init(c->sbuf, (int)c->size, MPI_BYTE, dst, 0, c->comm, &s->sreq[i]);
    }
    s->sbound = c->sbuf;
  }
  MPI_Startall(s->w, s->sreq);
  MPI_Waitall(s->w, s->sreq, MPI_STATUSES_IGNORE);
}

/* Reads mode, blocking, window and receive; sizes the receive buffer and ops_per_iter (the
 * caller sets bytes_per_op).  NULL when out of memory. */
static inline stream_state *stream_setup(scope_ctx *c, int src, int sends) {
  stream_state *s = calloc(1, sizeof *s);
  if (!s)
    return NULL;
  int one = scope_param_get(c, "receive") == 1;
  s->w = window_slots(c, scope_param_get(c, "window"), one);
  s->mode = (int)scope_param_get(c, "mode");
  s->blocking = (int)scope_param_get(c, "blocking");
  s->sends = sends;
  s->persistent = scope_has_param(c, "api") && scope_param_get(c, "api") == 1;
  s->sreq = malloc(sizeof(MPI_Request) * (size_t)s->w);
  if (!s->sreq || rxw_init(&s->rx, s->w, c->size, src, one)) {
    free(s->sreq);
    free(s);
    return NULL;
  }
  s->rx.persistent = s->persistent;
  if (s->persistent && (s->mode != MODE_STANDARD || s->blocking))
    c->skip = "persistent requests stream in standard mode, non-blocking (as osu_bw_persistent)";
  c->rbuf_bytes = rxw_bytes(s->w, c->size, one);
  c->ops_per_iter = s->w;
  if (s->mode == MODE_BUFFERED && sends)
    scope_bsend_attach((size_t)s->w, c->size);
  return s;
}

static inline void stream_teardown(scope_ctx *c, void *st) {
  stream_state *s = st;
  (void)c;
  rxw_free(&s->rx);
  if (s->mode == MODE_BUFFERED && s->sends)
    scope_bsend_detach();
  if (s->persistent && s->sbound)
    for (int i = 0; i < s->w; i++)
      MPI_Request_free(&s->sreq[i]);
  free(s->sreq);
  free(s);
}

#endif
