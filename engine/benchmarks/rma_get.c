/* One-sided get (Global Arrays over SCI: a get is timed as a round trip): rank 0 gets a
 * window of `window` messages from rank 1's memory, then completes them as `sync` says (see
 * rma.h).  Time per get = iteration time / window.  What arrives at the origin is checked. */
#include "rma.h"

static const scope_param params[] = {RMA_PARAMS};

/* The target's window takes the freshly patterned send buffer, so a get reads known data. */
static void fill(scope_ctx *c, void *st) {
  rma_state *s = st;
  if (c->rank != 1)
    return;
  rma_local_begin(s);
  memcpy(s->mem, c->sbuf, (size_t)s->w * c->size);
  rma_local_end(s);
}

static void run(scope_ctx *c, void *st) {
  rma_state *s = st;
  rma_open(c, s);
  if (c->rank == 0)
    for (int i = 0; i < s->w; i++)
      MPI_Get(c->rbuf + (size_t)i * c->size, (int)c->size, MPI_BYTE, 1, rma_disp(s, c->size, i), (int)c->size, MPI_BYTE,
              s->win);
  rma_close(c, s);
}

static size_t verify(scope_ctx *c, void *st, uint64_t seed, size_t *first) {
  rma_state *s = st;
  return c->rank == 0 ? scope_check(c->rbuf, (size_t)s->w * c->size, seed, 1, first) : 0;
}

const scope_test test_rma_get = {
    .name = "rma.get",
    .level = "rma",
    .summary = "MPI one-sided get by rank 0 from rank 1's window, completed by lock, flush, PSCW or fence",
    .measures = "time per get, its completion included (per `sync`)",
    .min_ranks = 2,
    .sized = 1,
    .roles = {"model:hockney", "link:1", "peer:osu_get_latency", "peer:osu_get_bw"},
    SCOPE_PARAMS(params),
    .setup = rma_setup,
    .start = rma_start,
    .fill = fill,
    .run = run,
    .verify = verify,
    .teardown = rma_teardown,
};
