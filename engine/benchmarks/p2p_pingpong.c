/* Ping-pong between ranks 0 and 1 (SCOPE §6.5.3, ParaStation2 §5.1): latency = RTT/2.
 * Rank 1 echoes what it received, so rank 0's check covers both directions.
 *
 * api=persistent uses MPI persistent requests (MPI_Send_init / MPI_Recv_init, then MPI_Start
 * and MPI_Wait each iteration), as osu_latency_persistent: rank 0 sends then receives, rank 1
 * receives then echoes.  The requests are bound to the buffers: made once, and again only when
 * the buffers change (--offcache cycles them).
 *
 * Ready mode needs the matching receive posted before the send starts.  Rank 1 keeps one
 * receive pre-posted, reposting it (into the other half of its buffer, so a pending receive
 * never overlaps the echo being sent) before it replies; rank 0 posts its receive before it
 * pings.  The reply therefore proves the next receive is posted, and no extra message is
 * added to the timed path.
 *
 * threads and sender_threads (osu_latency_mt's -t M:N): pingpong_mt.h.
 *
 * api=partitioned uses MPI-4 partitioned requests both ways (MPI_Psend_init / MPI_Precv_init of
 * -p partitions parts): rank 0 starts its send and marks each part ready (MPI_Pready) as it
 * becomes so, rank 1 echoes with every part ready at once.  -p compute=US has rank 0 compute
 * (spin on the clock, no MPI calls) for US microseconds before its message is complete: with
 * api=partitioned a part becomes ready after each 1/partitions of it, so a part can travel
 * while the rest is computed (the early-bird effect, if the MPI sends parts early); with the
 * other APIs the whole computation comes first.  The reported time (RTT/2) includes half the
 * computation in every API, so api=standard against api=partitioned at one compute is the
 * early-bird benefit. */
#include <stdio.h>
#include <stdlib.h>

#include "../core/timer.h"
#include "../scope.h"
#include "pingpong_mt.h"

static const char *const api_choices[] = {"standard", "persistent", "partitioned", NULL};
enum { API_STANDARD, API_PERSISTENT, API_PARTITIONED };

static const scope_param params[] = {
    SCOPE_PARAM_MODE_ALL,
    {"blocking", SP_BOOL, "yes", 0, 1, scope_bool_choices, "blocking calls (yes) or non-blocking + wait (no)"},
    {"api", SP_ENUM, "standard", 0, 0, api_choices,
     "standard calls, or persistent requests (MPI_Send_init + MPI_Start, as osu_latency_persistent)"},
    {"threads", SP_INT, "1", 1, MT_MAX, NULL,
     "rank 1's threads serving pings (osu_latency_mt's -t; above 1 needs --thread-level multiple)"},
    {"sender_threads", SP_INT, "1", 1, MT_MAX, NULL, "rank 0's threads pinging at once (osu_latency_mt's -t M:)"},
    {"partitions", SP_INT, "8", 1, 4096, NULL, "api=partitioned: parts a message is sent in"},
    SCOPE_PARAM_REPLY,
    {"compute", SP_INT, "0", 0, 1000000, NULL,
     "microseconds rank 0 computes before its message is complete (api=partitioned: spread over the parts)"},
};

typedef struct {
  MPI_Request pre;                /* rank 1, ready mode: the pre-posted receive */
  char *pre_buf;                  /* where it lands */
  char *got;                      /* rank 1: the buffer of the last ping received */
  int mode, blocking, persistent; /* persistent: api=persistent or partitioned (bound requests) */
  int partitioned, parts;
  int own;                       /* reply=own: rank 1 replies from its send buffer */
  uint64_t compute_ticks;        /* rank 0's computation before a ping */
  MPI_Request ps, pr;            /* persistent: the send and the receive */
  const char *bound_s, *bound_r; /* the buffers they are bound to */
  int servers, senders;          /* threads=, sender_threads= (1, 1: no threads) */
  mt_team team;
} state;

static int setup(scope_ctx *c, void **st) {
  state *s = calloc(1, sizeof *s);
  if (!s)
    return -1;
  s->pre = s->ps = s->pr = MPI_REQUEST_NULL;
  s->mode = (int)scope_param_get(c, "mode");
  s->blocking = (int)scope_param_get(c, "blocking");
  s->persistent = scope_param_get(c, "api") != API_STANDARD;
  s->partitioned = scope_param_get(c, "api") == API_PARTITIONED;
  s->own = scope_param_get(c, "reply") == REPLY_OWN;
  s->parts = s->partitioned ? (int)scope_param_get(c, "partitions") : 1;
  s->compute_ticks = (uint64_t)((double)scope_param_get(c, "compute") * 1e3 / timer_tick_ns());
  *st = s;
  if (!s->partitioned && scope_param_get(c, "partitions") != 8)
    c->skip = "-p partitions applies to api=partitioned (its other values would repeat this point)";
#ifdef SCOPE_SIM
  if (s->partitioned)
    c->skip = "SimGrid's SMPI has no MPI-4 partitioned communication (api=partitioned)";
#endif
  if (s->partitioned) {
    c->size -= c->size % (size_t)s->parts; /* whole parts */
    if (c->size == 0)
      c->skip = "fewer bytes than partitions";
    if (s->mode != MODE_STANDARD || !s->blocking)
      c->skip = "partitioned requests have their own send mode: measured with the defaults";
  }
  c->ops_per_iter = 2;
  c->bytes_per_op = (double)c->size;
  if (scope_param_get(c, "mode") == MODE_READY)
    c->rbuf_bytes = 2 * c->size;
  if (scope_param_get(c, "mode") == MODE_BUFFERED && c->rank < 2)
    scope_bsend_attach(1, c->size); /* teardown detaches it, skip or not */
  if (s->persistent && !s->partitioned && s->mode != MODE_STANDARD)
    c->skip = "persistent requests are measured in standard mode (as osu_latency_persistent)";
  s->servers = (int)scope_param_get(c, "threads");
  s->senders = (int)scope_param_get(c, "sender_threads");
  if (s->servers > 1 || s->senders > 1) {
    int level;
    MPI_Query_thread(&level);
    if (level != MPI_THREAD_MULTIPLE)
      c->skip = "threads need MPI_THREAD_MULTIPLE: run with --thread-level multiple";
    else if (s->mode != MODE_STANDARD || !s->blocking || s->persistent)
      c->skip = "threads ping in standard mode with blocking calls (as osu_latency_mt)";
    c->untimed = c->rank == 1; /* its main thread only keeps pace with the pings served */
  }
  return 0;
}

static int threaded(const state *s) {
  return s->servers > 1 || s->senders > 1;
}

/* Persistent requests bound to this iteration's buffers (made again if they moved). */
static void bind(scope_ctx *c, state *s) {
  if (s->bound_s == c->sbuf && s->bound_r == c->rbuf && s->ps != MPI_REQUEST_NULL)
    return;
  if (s->ps != MPI_REQUEST_NULL)
    MPI_Request_free(&s->ps);
  if (s->pr != MPI_REQUEST_NULL)
    MPI_Request_free(&s->pr);
  int peer = c->rank == 0 ? 1 : 0;
  /* rank 1 echoes what it received: its send is bound to its receive buffer */
  char *out = c->rank == 0 || s->own ? c->sbuf : c->rbuf;
#ifndef SCOPE_SIM /* a skip under simulation (setup), so never reached there */
  if (s->partitioned) {
    MPI_Count part = (MPI_Count)(c->size / (size_t)s->parts);
    MPI_Psend_init(out, s->parts, part, MPI_BYTE, peer, 0, c->comm, MPI_INFO_NULL, &s->ps);
    MPI_Precv_init(c->rbuf, s->parts, part, MPI_BYTE, peer, 0, c->comm, MPI_INFO_NULL, &s->pr);
  } else
#endif
  {
    MPI_Send_init(out, (int)c->size, MPI_BYTE, peer, 0, c->comm, &s->ps);
    MPI_Recv_init(c->rbuf, (int)c->size, MPI_BYTE, peer, 0, c->comm, &s->pr);
  }
  s->bound_s = c->sbuf;
  s->bound_r = c->rbuf;
}

static void compute(uint64_t ticks) {
  uint64_t t0 = timer_now();
  while (timer_now() - t0 < ticks)
    ;
}

/* A started partitioned send, its parts made ready: rank 0 after each share of its computation. */
static void ready_parts(scope_ctx *c, state *s) {
#ifndef SCOPE_SIM
  if (c->rank != 0) {
    MPI_Pready_range(0, s->parts - 1, s->ps);
    return;
  }
  for (int i = 0; i < s->parts; i++) {
    compute(s->compute_ticks / (uint64_t)s->parts);
    MPI_Pready(i, s->ps);
  }
#endif
}

static void run_persistent(scope_ctx *c, state *s) {
  bind(c, s);
  if (c->rank == 0) {
    if (!s->partitioned)
      compute(s->compute_ticks);
    MPI_Start(&s->ps);
    if (s->partitioned)
      ready_parts(c, s);
    MPI_Wait(&s->ps, MPI_STATUS_IGNORE);
    MPI_Start(&s->pr);
    MPI_Wait(&s->pr, MPI_STATUS_IGNORE);
  } else {
    MPI_Start(&s->pr);
    MPI_Wait(&s->pr, MPI_STATUS_IGNORE);
    s->got = c->rbuf;
    MPI_Start(&s->ps);
    if (s->partitioned)
      ready_parts(c, s);
    MPI_Wait(&s->ps, MPI_STATUS_IGNORE);
  }
}

static void start(scope_ctx *c, void *st) {
  state *s = st;
  s->team.reply = s->own ? c->sbuf : NULL;
  if (threaded(s) && mt_start(c, &s->team, s->senders, s->servers)) {
    fprintf(stderr, "scope-engine: error: cannot start threads for p2p.pingpong\n");
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
  if (scope_param_get(c, "mode") == MODE_READY && c->rank == 1) {
    s->pre_buf = c->rbuf;
    MPI_Irecv(s->pre_buf, (int)c->size, MPI_BYTE, 0, 0, c->comm, &s->pre);
  }
}

static void send_(scope_ctx *c, const state *s, const void *buf, int dst) {
  int mode = s->mode;
  if (s->blocking) {
    scope_send(mode, buf, c->size, dst, 0, c->comm);
  } else {
    MPI_Request r;
    scope_isend(mode, buf, c->size, dst, 0, c->comm, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
  }
}

static void run(scope_ctx *c, void *st) {
  state *s = st;
  int mode = s->mode;
  if (threaded(s)) {
    mt_run(c, &s->team);
    return;
  }
  if (s->persistent) {
    if (c->rank < 2)
      run_persistent(c, s);
    return;
  }
  if (c->rank == 0) {
    compute(s->compute_ticks);
    if (mode == MODE_READY || !s->blocking) {
      MPI_Request r;
      MPI_Irecv(c->rbuf, (int)c->size, MPI_BYTE, 1, 0, c->comm, &r);
      send_(c, s, c->sbuf, 1);
      MPI_Wait(&r, MPI_STATUS_IGNORE);
    } else {
      send_(c, s, c->sbuf, 1);
      MPI_Recv(c->rbuf, (int)c->size, MPI_BYTE, 1, 0, c->comm, MPI_STATUS_IGNORE);
    }
  } else if (c->rank == 1) {
    if (mode == MODE_READY) {
      MPI_Wait(&s->pre, MPI_STATUS_IGNORE);
      s->got = s->pre_buf;
      s->pre_buf = s->got == c->rbuf ? c->rbuf + c->size : c->rbuf;
      MPI_Irecv(s->pre_buf, (int)c->size, MPI_BYTE, 0, 0, c->comm, &s->pre);
    } else if (!s->blocking) {
      MPI_Request r;
      MPI_Irecv(c->rbuf, (int)c->size, MPI_BYTE, 0, 0, c->comm, &r);
      MPI_Wait(&r, MPI_STATUS_IGNORE);
      s->got = c->rbuf;
    } else {
      MPI_Recv(c->rbuf, (int)c->size, MPI_BYTE, 0, 0, c->comm, MPI_STATUS_IGNORE);
      s->got = c->rbuf;
    }
    send_(c, s, s->own ? c->sbuf : s->got, 0);
  }
}

static size_t verify(scope_ctx *c, void *st, uint64_t seed, size_t *first) {
  state *s = st;
  if (c->rank == 0)
    return scope_check(c->rbuf, c->size, seed, s->own, first); /* the echo of rank 0's, or rank 1's own */
  if (c->rank == 1 && !threaded(s))                            /* threads: each serving thread's buffer is its own */
    return scope_check(s->got, c->size, seed, 0, first);
  return 0;
}

static void teardown(scope_ctx *c, void *st) {
  state *s = st;
  if (s->team.c && c->rank < 2) /* started */
    mt_stop(c, &s->team, s->servers);
  if (s->pre != MPI_REQUEST_NULL)
    scope_cancel_all(&s->pre, 1);
  if (s->ps != MPI_REQUEST_NULL)
    MPI_Request_free(&s->ps);
  if (s->pr != MPI_REQUEST_NULL)
    MPI_Request_free(&s->pr);
  if (scope_param_get(c, "mode") == MODE_BUFFERED && c->rank < 2)
    scope_bsend_detach();
  free(s);
}

const scope_test test_p2p_pingpong = {
    .name = "p2p.pingpong",
    .level = "p2p",
    .summary = "MPI ping-pong between ranks 0 and 1; latency = RTT/2",
    .measures = "one-way latency (RTT/2)",
    .min_ranks = 2,
    .sized = 1,
    .roles = {"latency:MPI", "model:hockney", "link:1", "peer:osu_latency", "peer:imb_PingPong",
              "peer:osu_latency_persistent", "peer:osu_latency_mt"},
    SCOPE_PARAMS(params),
    .setup = setup,
    .start = start,
    .run = run,
    .verify = verify,
    .teardown = teardown,
};
