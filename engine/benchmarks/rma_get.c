/* One-sided get (Global Arrays over SCI: a get is timed as a round trip): rank 0 gets a window
 * of `window` operations from rank 1's memory, then completes them as `sync` says (see rma.h).
 * Time per get = iteration time / window.  What arrives at the origin is checked.
 * target=busy asks the document's polling-versus-interrupt question of today's MPIs: the target
 * computes for `slice` µs each iteration with no MPI call, then probes once (its next MPI call),
 * so a get that needs the target's help waits for the slice, and one served without it
 * (asynchronous progress, or memory the origin reads directly) does not.  Only the origin's
 * time counts. */
#include "../core/timer.h"
#include "rma.h"

static const char *const targets[] = {"idle", "busy", NULL};
static const scope_param params[] = {
    RMA_PARAMS,
    RMA_LAYOUT_PARAMS,
    {"target", SP_ENUM, "idle", 0, 0, targets, "idle: waits in MPI; busy: computes `slice` us, then one MPI_Iprobe"},
    {"slice", SP_INT, "20", 1, 1000000, NULL, "target=busy: microseconds of computation per iteration"},
};

static int setup(scope_ctx *c, void **st) {
  int rc = rma_setup(c, st, (rma_kind){.what = RMA_GET, .elem = 1, .target = 1});
  rma_state *s = *st;
  if (rc || c->skip || scope_param_get(c, "target") == 0)
    return rc;
  if (s->sync == SYNC_PSCW || s->sync == SYNC_FENCE) {
    c->skip = "target=busy needs a passive sync: in PSCW and fence the target takes part in every epoch";
    return 0;
  }
  double slice_us = (double)scope_param_get(c, "slice");
  s->busy_ticks = (uint64_t)(slice_us * 1e3 / timer_tick_ns());
  c->untimed = c->rank == 1; /* the target's slices are not the get's time */
  c->extra[0].name = "slice_us";
  c->extra[0].value = slice_us;
  c->nextra = 1;
  return 0;
}

/* The target's window takes the freshly patterned send buffer, so a get reads known data. */
static void fill(scope_ctx *c, void *st, uint64_t seed) {
  rma_state *s = st;
  if (c->rank != 1)
    return;
  rma_local_begin(c, s);
  memcpy(s->mem, c->sbuf, s->region);
  rma_local_end(c, s);
}

static void run(scope_ctx *c, void *st) {
  rma_state *s = st;
  if (s->direct) { /* the origin's short path, inline here: no call between run and the get */
    rma_flush_contig(s, c->sbuf, c->rbuf);
    return;
  }
  if (s->busy_ticks && c->rank == 1) {
    /* An application computing in slices between MPI calls: a get that needs the target's
     * help waits for the end of the slice, when the probe lets the MPI make progress. */
    uint64_t t0 = timer_now();
    while (timer_now() - t0 < s->busy_ticks)
      ;
    int flag;
    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, c->comm, &flag, MPI_STATUS_IGNORE);
    return;
  }
  rma_iteration(c, s);
}

static size_t verify(scope_ctx *c, void *st, uint64_t seed, size_t *first) {
  rma_state *s = st;
  return c->rank == 0 ? rma_check_pieces(s, c->rbuf, seed, 1, first) : 0;
}

SCOPE_RMA(rma_get, "rma.get",
          "MPI one-sided get by rank 0 from rank 1's window, completed by lock, flush, PSCW or fence",
          "time per get, its completion included (per `sync`)", 1, SCOPE_TIMING_LOOP, fill, run, verify,
          "model:hockney", "link:1", "peer:osu_get_latency", "peer:osu_get_bw", "latency:MPI one-sided get");
