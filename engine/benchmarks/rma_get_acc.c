/* One-sided get-accumulate (MPI_Get_accumulate, MPI_SUM on doubles): rank 0 adds into rank 1's
 * memory and gets back what was there before, a window of `window` operations completed as
 * `sync` says (rma.h).  The check verifies both sides: the origin received the target's old
 * values, the target holds old + origin's. */
#include "rma.h"

static const scope_param params[] = {RMA_PARAMS, RMA_LAYOUT_PARAMS, RMA_PARAM_TYPE};

static int setup(scope_ctx *c, void **st) {
  return rma_setup(c, st, (rma_kind){.what = RMA_GET_ACC, .elem = 8, .target = 1});
}

static void fill(scope_ctx *c, void *st, uint64_t seed) {
  rma_state *s = st;
  if (c->rank == 0)
    rma_fill_values(c->sbuf, s->region, s->k.elem, seed, 0);
  if (c->rank != 1)
    return;
  rma_local_begin(c, s);
  rma_fill_values(s->mem, s->region, s->k.elem, seed, 1);
  rma_local_end(c, s);
}

static void run(scope_ctx *c, void *st) {
  rma_iteration(c, st);
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

const scope_test test_rma_get_acc = {
    .name = "rma.get_acc",
    .level = "rma",
    .summary = "MPI one-sided get-accumulate (SUM of doubles): add into rank 1's window, fetch what was there",
    .measures = "time per get-accumulate, its completion included (per `sync`)",
    .min_ranks = 2,
    .sized = 1,
    .roles = {"model:hockney", "link:1", "peer:osu_get_acc_latency"},
    SCOPE_PARAMS(params),
    .setup = setup,
    .start = rma_start,
    .fill = fill,
    .run = run,
    .verify = verify,
    .teardown = rma_teardown,
};
