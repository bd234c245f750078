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

/* The accumulate's data: element m of the target's window starts at value(0, m); origin r adds
 * value(r, m) at the same place, so rank 0 can say what each region must hold. */
static void fill(scope_ctx *c, void *st, uint64_t seed) {
  rma_state *s = st;
  if (s->origin && s->k.what == RMA_ACC)
    for (size_t o = 0; o + 8 <= s->region; o += 8) {
      double v = rma_value(seed, c->rank, ((size_t)s->mine + o) / 8);
      memcpy(c->sbuf + o, &v, 8);
    }
  if (c->rank != 0 || s->k.what == RMA_PUT)
    return;
  rma_local_begin(c, s);
  if (s->k.what == RMA_GET)
    pattern_fill(s->mem, s->bytes, seed, 0);
  else
    rma_fill_values(s->mem, s->bytes, 8, seed, 0);
  rma_local_end(c, s);
}

static void run(scope_ctx *c, void *st) {
  rma_iteration(c, st);
}

/* Bad bytes of region `r` (origin rank r) of rank 0's window. */
static size_t check_region(const rma_state *s, int r, uint64_t seed, size_t *first) {
  size_t at = (size_t)(r - 1) * s->region, bad = 0, f = 0;
  for (size_t o = 0; o < s->region && s->span; o += s->span) {
    const char *p = s->mem + at + o;
    size_t n;
    if (s->k.what == RMA_PUT) {
      n = scope_check_at(p, s->blk, seed, r, o, &f);
    } else {
      n = 0;
      for (size_t e = 0; e < s->blk; e += 8) {
        size_t m = (at + o + e) / 8;
        double got, want = rma_value(seed, 0, m) + rma_value(seed, r, m);
        memcpy(&got, p + e, 8);
        if (got != want && !n++)
          f = e;
      }
      n *= 8;
    }
    if (n && !bad)
      *first = at + o + f;
    bad += n;
  }
  return bad;
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
  for (int r = 1; r < c->nranks; r++)
    bad += check_region(s, r, seed, bad ? &(size_t){0} : first);
  rma_local_end(c, s);
  return bad;
}

SCOPE_RMA(rma_hotspot, "rma.hotspot",
          "every rank but 0 puts, gets or accumulates into rank 0's window at once (contention)",
          "completion of the last origin (last exit - common start), per operation", 1, SCOPE_TIMING_WINDOW, fill,
          verify);
