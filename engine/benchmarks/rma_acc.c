/* One-sided accumulate (MPI_Accumulate, MPI_SUM on doubles; the fifth source document's
 * accumulate, the ARMCI_Acc of Global Arrays): rank 0 adds a window of `window` operations
 * into rank 1's memory, completed as `sync` says (rma.h).  Time per accumulate = iteration
 * time / window.  The check verifies the arithmetic: the target's values are its own plus the
 * origin's, exactly (small integers). */
#include "rma.h"

static const scope_param params[] = {RMA_PARAMS, RMA_LAYOUT_PARAMS, RMA_PARAM_TYPE};

static int setup(scope_ctx *c, void **st) {
  return rma_setup(c, st, (rma_kind){.what = RMA_ACC, .elem = 8, .target = 1});
}

static size_t verify(scope_ctx *c, void *st, uint64_t seed, size_t *first) {
  rma_state *s = st;
  rma_settle(c, s);
  if (c->rank != 1)
    return 0;
  static const int both[] = {0, 1};
  rma_local_begin(c, s);
  size_t bad = rma_check_sum(s, s->mem, seed, both, 2, first);
  rma_local_end(c, s);
  return bad;
}

SCOPE_RMA(rma_acc, "rma.acc", "MPI one-sided accumulate (SUM of doubles) from rank 0 into rank 1's window",
          "time per accumulate, its completion included (per `sync`)", 1, SCOPE_TIMING_LOOP, rma_fill_acc,
          rma_iteration, verify, "model:hockney", "link:1", "peer:osu_acc_latency");
