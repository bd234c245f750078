/* One-sided put (Global Arrays over SCI, the fifth source document; MPI-3 RMA): rank 0 puts a
 * window of `window` messages into rank 1's memory, then completes them as `sync` says (see
 * rma.h).  Time per put = iteration time / window.  The target's memory is checked. */
#include "rma.h"

static const scope_param params[] = {RMA_PARAMS};

static void run(scope_ctx *c, void *st) {
  rma_state *s = st;
  rma_open(c, s);
  if (c->rank == 0)
    for (int i = 0; i < s->w; i++)
      MPI_Put(c->sbuf + (size_t)i * c->size, (int)c->size, MPI_BYTE, 1, rma_disp(s, c->size, i), (int)c->size, MPI_BYTE,
              s->win);
  rma_close(c, s);
}

static size_t verify(scope_ctx *c, void *st, uint64_t seed, size_t *first) {
  rma_state *s = st;
  if (c->rank == 0 && s->sync == SYNC_FLUSH_LOCAL)
    MPI_Win_flush(1, s->win); /* local completion said nothing of the target: finish it */
  MPI_Barrier(c->comm);
  if (c->rank != 1)
    return 0;
  rma_local_begin(s);
  size_t bad = scope_check(s->mem, (size_t)s->w * c->size, seed, 0, first);
  rma_local_end(s);
  return bad;
}

const scope_test test_rma_put = {
    .name = "rma.put",
    .level = "rma",
    .summary = "MPI one-sided put from rank 0 into rank 1's window, completed by lock, flush, PSCW or fence",
    .measures = "time per put, its completion included (per `sync`)",
    .min_ranks = 2,
    .sized = 1,
    .roles = {"model:hockney", "link:1", "peer:osu_put_latency", "peer:osu_put_bw"},
    SCOPE_PARAMS(params),
    .setup = rma_setup,
    .start = rma_start,
    .run = run,
    .verify = verify,
    .teardown = rma_teardown,
};
