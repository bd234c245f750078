/* One-sided put (Global Arrays over SCI, the fifth source document; MPI-3 RMA): rank 0 puts a
 * window of `window` operations into rank 1's memory, then completes them as `sync` says (see
 * rma.h).  Time per put = iteration time / window.  The target's memory is checked. */
#include "rma.h"

static const scope_param params[] = {RMA_PARAMS, RMA_LAYOUT_PARAMS};

static int setup(scope_ctx *c, void **st) {
  return rma_setup(c, st, (rma_kind){.what = RMA_PUT, .elem = 1, .target = 1});
}

static size_t verify(scope_ctx *c, void *st, uint64_t seed, size_t *first) {
  rma_state *s = st;
  rma_settle(c, s);
  if (c->rank != 1)
    return 0;
  rma_local_begin(c, s);
  size_t bad = rma_check_pieces(s, s->mem, seed, 0, first);
  rma_local_end(c, s);
  return bad;
}

SCOPE_RMA(rma_put, "rma.put",
          "MPI one-sided put from rank 0 into rank 1's window, completed by lock, flush, PSCW or fence",
          "time per put, its completion included (per `sync`)", 1, SCOPE_TIMING_LOOP, NULL, rma_iteration, verify,
          "model:hockney", "link:1", "peer:osu_put_latency", "peer:osu_put_bw", "latency:MPI one-sided put");
