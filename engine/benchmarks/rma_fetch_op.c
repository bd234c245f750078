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

static int64_t start_of(uint64_t seed) {
  return (int64_t)(seed % 1000003u) * 1000;
}

static void fill(scope_ctx *c, void *st, uint64_t seed) {
  rma_state *s = st;
  if (c->rank == 0)
    for (int i = 0; i < s->w; i++)
      ((int64_t *)c->sbuf)[i] = 1;
  if (c->rank != 1)
    return;
  rma_local_begin(c, s);
  int64_t v = start_of(seed);
  memcpy(s->mem, &v, 8);
  rma_local_end(c, s);
}

static void run(scope_ctx *c, void *st) {
  rma_state *s = st;
  rma_open(c, s);
  if (s->origin)
    for (int i = 0; i < s->w; i++)
      MPI_Fetch_and_op(c->sbuf + 8 * (size_t)i, c->rbuf + 8 * (size_t)i, MPI_INT64_T, 1, s->base, MPI_SUM, s->win);
  rma_close(c, s);
}

static size_t count_bad(const char *got, int64_t want, size_t at, size_t *first, size_t bad) {
  int64_t v;
  memcpy(&v, got, 8);
  if (v != want && !bad)
    *first = at;
  return v != want ? 8 : 0;
}

static size_t verify(scope_ctx *c, void *st, uint64_t seed, size_t *first) {
  rma_state *s = st;
  rma_settle(c, s);
  size_t bad = 0;
  if (c->rank == 0)
    for (int i = 0; i < s->w; i++)
      bad += count_bad(c->rbuf + 8 * (size_t)i, start_of(seed) + i, 8 * (size_t)i, first, bad);
  if (c->rank == 1) {
    rma_local_begin(c, s);
    bad = count_bad(s->mem, start_of(seed) + s->w, 0, first, 0);
    rma_local_end(c, s);
  }
  return bad;
}

const scope_test test_rma_fetch_op = {
    .name = "rma.fetch_op",
    .level = "rma",
    .summary = "MPI one-sided fetch-and-add on a 64-bit counter in rank 1's window (a shared counter)",
    .measures = "time per fetch-and-add, its completion included (per `sync`)",
    .min_ranks = 2,
    .sized = 0,
    .roles = {"peer:osu_fop_latency"},
    SCOPE_PARAMS(params),
    .setup = setup,
    .start = rma_start,
    .fill = fill,
    .run = run,
    .verify = verify,
    .teardown = rma_teardown,
};
