/* Multiple bandwidth and message rate (OSU's osu_mbw_mr): the first half of the ranks each
 * stream a window of messages to their partner in the second half (rank i to i + N/2), all
 * pairs at once; each receiver acknowledges its window with a zero-byte message.  Window-timed,
 * so it is swept over --procs: the message rate as pairs are added.  The reported time is one
 * message's share of a repetition over all pairs, so its inverse is the aggregate message rate
 * (messages/s = 10^6 / time in us) and bandwidth = size / that time is the aggregate bandwidth.
 * With an odd rank count the last rank only takes part in the timing.  OSU's definition:
 * -p window=64 -p receive=one. */
#include "window.h"

static const scope_param params[] = {
    SCOPE_PARAM_MODE_ALL,
    SCOPE_PARAM_SEND_BLOCKING,
    SCOPE_PARAM_WINDOW,
    SCOPE_PARAM_RECEIVE,
};

typedef struct {
  stream_state *s;
  int pairs, partner; /* partner: -1 for the rank left over */
} state;

static int sender(const scope_ctx *c, const state *s) {
  return c->rank < s->pairs;
}

static int setup(scope_ctx *c, void **st) {
  state *m = calloc(1, sizeof *m);
  *st = m;
  if (!m)
    return -1;
  m->pairs = c->nranks / 2;
  m->partner = c->rank < m->pairs ? c->rank + m->pairs : c->rank < 2 * m->pairs ? c->rank - m->pairs : -1;
  int sends = m->partner >= 0 && sender(c, m);
  if (!(m->s = stream_setup(c, sends || m->partner < 0 ? 0 : m->partner, sends)))
    return -1;
  c->ops_per_iter = (double)m->s->w * m->pairs; /* every pair's window, at once */
  c->bytes_per_op = (double)c->size;
  c->extra[0].name = "pairs";
  c->extra[0].value = m->pairs;
  c->nextra = 1;
  return 0;
}

static void start(scope_ctx *c, void *st) {
  state *m = st;
  if (m->partner >= 0 && !sender(c, m))
    rxw_post(&m->s->rx, c->rbuf, c->comm);
}

static void run(scope_ctx *c, void *st) {
  state *m = st;
  if (m->partner < 0)
    return;
  if (sender(c, m)) {
    send_window(m->s->mode, m->s->blocking, c->sbuf, c->size, m->s->w, m->partner, c->comm, m->s->sreq);
    MPI_Recv(NULL, 0, MPI_BYTE, m->partner, 1, c->comm, MPI_STATUS_IGNORE);
  } else {
    rxw_cycle(&m->s->rx, c->rbuf, c->comm);
    MPI_Send(NULL, 0, MPI_BYTE, m->partner, 1, c->comm);
  }
}

static size_t verify(scope_ctx *c, void *st, uint64_t seed, size_t *first) {
  state *m = st;
  return m->partner >= 0 && !sender(c, m) ? rxw_verify(&m->s->rx, seed, first) : 0;
}

static void teardown(scope_ctx *c, void *st) {
  state *m = st;
  if (m->s)
    stream_teardown(c, m->s);
  free(m);
}

const scope_test test_p2p_mbw_mr = {
    .name = "p2p.mbw_mr",
    .level = "p2p",
    .summary = "N/2 pairs stream windows at once (rank i to i + N/2): aggregate bandwidth and message rate",
    .measures = "time per message over all pairs (its inverse: the aggregate message rate)",
    .min_ranks = 2,
    .sized = 1,
    .timing = SCOPE_TIMING_WINDOW,
    .roles = {"peer:osu_mbw_mr"},
    SCOPE_PARAMS(params),
    .setup = setup,
    .start = start,
    .run = run,
    .verify = verify,
    .teardown = teardown,
};
