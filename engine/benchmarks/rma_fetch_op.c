/* One-sided fetch-and-add (MPI_Fetch_and_op, MPI_SUM on a 64-bit integer): the Global Arrays
 * shared counter (NGA_Read_inc).  Rank 0 adds 1 to a counter in rank 1's window `window` times,
 * fetching each old value, completed as `sync` says (rma.h).  Operations of one origin on one
 * location are ordered (MPI's default accumulate ordering), so the check verifies the sequence:
 * the fetched values count up from the counter's start, and the counter ends `window` higher. */
#include "rma.h"

static const scope_param params[] = {RMA_PARAMS};

static int setup(scope_ctx *c, void **st) {
  return rma_setup(c, st, (rma_kind){.what = RMA_ACC, .elem = 8, .target = 1, .atomic = 1});
}

static void fill(scope_ctx *c, void *st, uint64_t seed) {
  rma_state *s = st;
  if (c->rank == 0)
    for (int i = 0; i < s->w; i++)
      ((int64_t *)c->sbuf)[i] = 1;
  rma_fill_counter(c, s, seed);
}

static void run(scope_ctx *c, void *st) {
  rma_state *s = st;
  rma_open(c, s);
  if (s->origin)
    for (int i = 0; i < s->w; i++)
      MPI_Fetch_and_op(c->sbuf + 8 * (size_t)i, c->rbuf + 8 * (size_t)i, MPI_INT64_T, 1, s->base, MPI_SUM, s->win);
  rma_close(c, s);
}

SCOPE_RMA(rma_fetch_op, "rma.fetch_op",
          "MPI one-sided fetch-and-add on a 64-bit counter in rank 1's window (a shared counter)",
          "time per fetch-and-add, its completion included (per `sync`)", 0, SCOPE_TIMING_LOOP, fill, run,
          rma_check_counter, "peer:osu_fop_latency");
