/* One-sided compare-and-swap (MPI_Compare_and_swap on a 64-bit integer): the Global Arrays lock
 * pattern.  Rank 0 advances a counter in rank 1's window by swapping v for v + 1, `window` times,
 * each expecting the value the previous swap left, completed as `sync` says (rma.h).  Every
 * swap succeeds while the origin's expectation holds, so a timed swap is a successful one; the
 * check verifies the sequence: each fetched value equals the expected one, and the counter ends
 * `window` higher. */
#include "rma.h"

static const scope_param params[] = {RMA_PARAMS};

static int setup(scope_ctx *c, void **st) {
  int rc = rma_setup(c, st, (rma_kind){.what = RMA_ACC, .elem = 8, .target = 1, .atomic = 1});
  rma_state *s = *st;
  if (rc || c->skip)
    return rc;
  s->compare = malloc(sizeof(int64_t) * (size_t)s->w);
  return s->compare ? 0 : -1;
}

static int64_t start_of(uint64_t seed) {
  return (int64_t)(seed % 999983u) * 1000 + 7;
}

static void fill(scope_ctx *c, void *st, uint64_t seed) {
  rma_state *s = st;
  s->next = start_of(seed);
  if (c->rank != 1)
    return;
  rma_local_begin(c, s);
  memcpy(s->mem, &s->next, 8);
  rma_local_end(c, s);
}

static void run(scope_ctx *c, void *st) {
  rma_state *s = st;
  rma_open(c, s);
  if (s->origin) {
    int64_t *want = s->compare, *swap = (int64_t *)c->sbuf;
    for (int i = 0; i < s->w; i++) {
      want[i] = s->next + i;
      swap[i] = s->next + i + 1;
      MPI_Compare_and_swap(swap + i, want + i, c->rbuf + 8 * (size_t)i, MPI_INT64_T, 1, s->base, s->win);
    }
    s->next += s->w;
  }
  rma_close(c, s);
}

static size_t verify(scope_ctx *c, void *st, uint64_t seed, size_t *first) {
  rma_state *s = st;
  rma_settle(c, s);
  size_t bad = 0;
  int64_t v, start = start_of(seed);
  if (c->rank == 0)
    for (int i = 0; i < s->w; i++) {
      memcpy(&v, c->rbuf + 8 * (size_t)i, 8);
      if (v != start + i) {
        if (!bad)
          *first = 8 * (size_t)i;
        bad += 8;
      }
    }
  if (c->rank == 1) {
    rma_local_begin(c, s);
    memcpy(&v, s->mem, 8);
    rma_local_end(c, s);
    if (v != start + s->w) {
      *first = 0;
      bad = 8;
    }
  }
  return bad;
}

const scope_test test_rma_cas = {
    .name = "rma.cas",
    .level = "rma",
    .summary = "MPI one-sided compare-and-swap on a 64-bit counter in rank 1's window (a lock's acquire)",
    .measures = "time per successful compare-and-swap, its completion included (per `sync`)",
    .min_ranks = 2,
    .sized = 0,
    .roles = {"peer:osu_cas_latency"},
    SCOPE_PARAMS(params),
    .setup = setup,
    .start = rma_start,
    .fill = fill,
    .run = run,
    .verify = verify,
    .teardown = rma_teardown,
};
