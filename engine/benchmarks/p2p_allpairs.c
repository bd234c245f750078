/* Every pair of ranks (LinkTest's question: which link is slow?): N - 1 steps of N / 2
 * disjoint pairs (N steps when N is odd), each pair ping-ponging on its own (pairs timing,
 * pairs.c).  mode=parallel measures a step's pairs at once, loading the fabric as a job does;
 * mode=serial one pair at a time, a link alone.  The pairing is a seeded permutation that
 * changes with the launch, and every step's pairs are recorded (`pairs` records): the
 * front end reads them as a rank x rank and a host x host matrix and flags the slow ones.
 * steps=K measures K of the sweep's steps, spread evenly: on a large machine a sample whose
 * every step still holds every rank, so each host's link is seen K times.
 * Reported time = one-way time (RTT/2); the point's figure is the median over the pairs. */
#include "../scope.h"

static const char *const modes[] = {"parallel", "serial", NULL};

static const scope_param params[] = {
    {"mode", SP_ENUM, "parallel", 0, 0, modes,
     "parallel: a step's pairs at once (the fabric loaded); serial: one pair at a time (a link alone)"},
    {"steps", SP_INT, "0", 0, 1 << 30, NULL,
     "steps of the sweep measured: 0 every one (N - 1); K fewer: K spread evenly, each still pairing every rank"},
};

static int setup(scope_ctx *c, void **st) {
  *st = NULL;
  c->one_pair_at_a_time = scope_param_get(c, "mode") == 1;
  c->sample_steps = (int)scope_param_get(c, "steps");
  c->ops_per_iter = 2;
  return 0;
}

static void run(scope_ctx *c, void *st) {
  (void)st;
  if (c->peer >= 0)
    scope_round_trip(c, c->peer, c->pinger, c->rbuf, 6);
}

/* Both ranks of a pair end holding the pinger's pattern (the echo sends back what it got). */
static size_t verify(scope_ctx *c, void *st, uint64_t seed, size_t *first) {
  (void)st;
  if (c->peer < 0)
    return 0;
  return scope_check(c->rbuf, c->size, seed, c->pinger ? c->rank : c->peer, first);
}

static void release(scope_ctx *c, void *st) {
  (void)c;
  (void)st; /* nothing held: the engine owns the schedule and the buffers */
}

const scope_test test_p2p_allpairs = {
    .name = "p2p.allpairs",
    .level = "p2p",
    .summary = "every pair of ranks in steps of disjoint pairs: the rank x rank and host x host matrix",
    .measures = "one-way latency (RTT/2) of each pair; the point's figure is the median pair's",
    .min_ranks = 2,
    .sized = 1,
    .sizes = "8,1M",
    .timing = SCOPE_TIMING_PAIRS,
    SCOPE_PARAMS(params),
    .setup = setup,
    .run = run,
    .verify = verify,
    .teardown = release,
};
