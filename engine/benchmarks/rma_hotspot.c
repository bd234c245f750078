/* Contention at one target (the Global Arrays counter and lock pattern, `004_...`): every rank
 * but 0 puts, gets or accumulates into its own region of rank 0's window at once, each a
 * window of `window` operations completed as `sync` says (rma.h).  Window-timed as the
 * collectives are, so all origins start together and every rank's time is kept: the reported
 * time is the last origin's completion, and `show --ranks` gives each origin's distribution. */
#include "rma.h"

static const char *const ops[] = {"put", "get", "acc", NULL};
static const scope_param params[] = {
    {"op", SP_ENUM, "put", 0, 0, ops, "what every origin does to rank 0: put, get or acc (SUM of doubles)"},
    RMA_PARAMS,
};

static int setup(scope_ctx *c, void **st) {
  static const int what[] = {RMA_PUT, RMA_GET, RMA_ACC};
  long op = scope_param_get(c, "op");
  int rc = rma_setup(c, st, (rma_kind){.what = what[op], .elem = op == 2 ? 8 : 1, .target = 0});
  c->untimed = c->rank == 0; /* the target serves, idle in MPI between repetitions */
  return rc;
}

/* Every origin's data lies in its own region of rank 0's window, indexed from the region's
 * start: a put's bytes follow the origin's pattern; an accumulate's element m starts at
 * value(0, m) and origin r adds value(r, m); a get reads the target's pattern over the window. */
static void fill(scope_ctx *c, void *st, uint64_t seed) {
  rma_state *s = st;
  if (s->origin && s->k.what == RMA_ACC)
    rma_fill_values(c->sbuf, s->region, 8, seed, c->rank);
  if (c->rank != 0 || s->k.what == RMA_PUT)
    return;
  rma_local_begin(c, s);
  if (s->k.what == RMA_GET)
    pattern_fill(s->mem, s->bytes, seed, 0);
  else
    for (int r = 1; r < c->nranks; r++)
      rma_fill_values(s->mem + (size_t)(r - 1) * s->region, s->region, 8, seed, 0);
  rma_local_end(c, s);
}

static size_t verify(scope_ctx *c, void *st, uint64_t seed, size_t *first) {
  rma_state *s = st;
  rma_settle(c, s);
  if (s->k.what == RMA_GET)
    return s->origin ? scope_check_at(c->rbuf, s->region, seed, 0, (size_t)s->mine, first) : 0;
  if (c->rank != 0)
    return 0;
  size_t bad = 0;
  rma_local_begin(c, s);
  for (int r = 1; r < c->nranks; r++) {
    size_t at = (size_t)(r - 1) * s->region, f = 0;
    const int srcs[] = {0, r};
    size_t n = s->k.what == RMA_PUT ? rma_check_pieces(s, s->mem + at, seed, r, &f)
                                    : rma_check_sum(s, s->mem + at, seed, srcs, 2, &f);
    if (n && !bad)
      *first = at + f;
    bad += n;
  }
  rma_local_end(c, s);
  return bad;
}

SCOPE_RMA(rma_hotspot, "rma.hotspot",
          "every rank but 0 puts, gets or accumulates into rank 0's window at once (contention)",
          "completion of the last origin (last exit - common start), per operation", 1, SCOPE_TIMING_WINDOW, fill,
          rma_iteration, verify);
