/* Multi-pair ping-pong: pairs ping-pong concurrently, so they compete for the network, the
 * memory bus or a switch.  pairs=neighbours pairs (0,1), (2,3), ...; pairs=halves pairs rank i
 * with i + N/2, as osu_multi_lat does (the first half sends).  Reported time = one-way
 * (RTT/2) of the slowest pair; bandwidth = all pairs' bytes per one-way time, the aggregate.
 * A rank without a partner (an odd count) only takes part in the timing.
 *
 * OMB's figure (scope run --osu osu_multi_lat: pairs=halves, --timing osu) is the mean over the
 * sending ranks of their own round trips, each after a barrier, halved: with pairs=halves the
 * echoing ranks are untimed, so OMB's mean over ranks counts the senders only. */
#include "coll.h"

static const char *const pairings[] = {"neighbours", "halves", NULL};
enum { PAIRS_NEIGHBOURS, PAIRS_HALVES };

static const scope_param params[] = {
    {"pairs", SP_ENUM, "neighbours", 0, 0, pairings,
     "neighbours: (0,1), (2,3), ...; halves: rank i with i + N/2, as osu_multi_lat"},
    SCOPE_PARAM_REPLY,
};

typedef struct {
  coll_state base;
  int peer;   /* -1: no partner */
  int sender; /* starts each round trip */
  int own;    /* reply=own */
} state;

static int setup(scope_ctx *c, void **st) {
  state *s = calloc(1, sizeof *s);
  *st = s;
  if (!s)
    return -1;
  int half = c->nranks / 2;
  s->own = scope_param_get(c, "reply") == REPLY_OWN;
  if (scope_param_get(c, "pairs") == PAIRS_HALVES) {
    s->sender = c->rank < half;
    s->peer = c->rank < half ? c->rank + half : c->rank < 2 * half ? c->rank - half : -1;
    c->untimed = !s->sender; /* the echo's own time is not a round trip */
  } else {
    s->sender = c->rank % 2 == 0;
    s->peer = (c->rank ^ 1) < c->nranks ? c->rank ^ 1 : -1;
  }
  c->ops_per_iter = 2;
  c->bytes_per_op = (double)c->size * half;
  return 0;
}

static void run(scope_ctx *c, void *st) {
  state *s = st;
  if (s->peer >= 0)
    scope_round_trip(c, s->peer, s->sender, s->own ? c->sbuf : c->rbuf, 4);
}

/* The echoing rank sent back what the sender sent (both hold the sender's pattern), or its own
 * buffer (reply=own: the sender holds the echoing rank's). */
static size_t verify(scope_ctx *c, void *st, uint64_t seed, size_t *first) {
  state *s = st;
  if (s->peer < 0)
    return 0;
  int from = s->sender ? (s->own ? s->peer : c->rank) : s->peer;
  return scope_check(c->rbuf, c->size, seed, from, first);
}

static void release(scope_ctx *c, void *st) {
  (void)c;
  free(st);
}

const scope_test test_p2p_multipair = {
    .name = "p2p.multipair",
    .level = "p2p",
    .summary = "concurrent ping-pongs between pairs of ranks: latency and aggregate bandwidth",
    .measures = "one-way latency (RTT/2) of the slowest pair",
    .min_ranks = 2,
    .sized = 1,
    .timing = SCOPE_TIMING_WINDOW,
    .roles = {"link:1", "peer:osu_multi_lat"},
    SCOPE_PARAMS(params),
    .setup = setup,
    .run = run,
    .verify = verify,
    .teardown = release,
};
