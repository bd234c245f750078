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

static void fill(scope_ctx *c, void *st, uint64_t seed) {
  rma_state *s = st;
  s->next = rma_counter_start(seed);
  rma_fill_counter(c, s, seed);
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

SCOPE_RMA(rma_cas, "rma.cas",
          "MPI one-sided compare-and-swap on a 64-bit counter in rank 1's window (a lock's acquire)",
          "time per successful compare-and-swap, its completion included (per `sync`)", 0, SCOPE_TIMING_LOOP, fill, run,
          rma_check_counter, "peer:osu_cas_latency");
