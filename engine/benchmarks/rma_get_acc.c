/* One-sided get-accumulate (MPI_Get_accumulate, MPI_SUM on doubles): rank 0 adds into rank 1's
 * memory and gets back what was there before, a window of `window` operations completed as
 * `sync` says (rma.h).  The check verifies both sides: the origin received the target's old
 * values, the target holds old + origin's. */
#include "rma.h"

static const scope_param params[] = {RMA_PARAMS, RMA_LAYOUT_PARAMS, RMA_PARAM_TYPE};

static int setup(scope_ctx *c, void **st) {
  return rma_setup(c, st, (rma_kind){.what = RMA_GET_ACC, .elem = 8, .target = 1});
}

static size_t verify(scope_ctx *c, void *st, uint64_t seed, size_t *first) {
  rma_state *s = st;
  static const int old[] = {1}, both[] = {0, 1};
  rma_settle(c, s);
  if (c->rank == 0)
    return rma_check_sum(s, c->rbuf, seed, old, 1, first);
  if (c->rank != 1)
    return 0;
  rma_local_begin(c, s);
  size_t bad = rma_check_sum(s, s->mem, seed, both, 2, first);
  rma_local_end(c, s);
  return bad;
}

SCOPE_RMA(rma_get_acc, "rma.get_acc",
          "MPI one-sided get-accumulate (SUM of doubles): add into rank 1's window, fetch what was there",
          "time per get-accumulate, its completion included (per `sync`)", 1, SCOPE_TIMING_LOOP, rma_fill_acc,
          rma_iteration, verify, "model:hockney", "link:1", "peer:osu_get_acc_latency");
