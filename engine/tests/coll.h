/* Shared by the collective tests: the size is the bytes each rank contributes (one block);
 * rooted operations rotate the root with -p root=rotate (every rank takes a turn, as
 * SKaMPI and IMB's root shift do) or keep a fixed rank. */
#ifndef SCOPE_COLL_H
#define SCOPE_COLL_H
#include <stdlib.h>
#include <string.h>

#include "../core/pattern.h"
#include "../scope.h"

static const char *const coll_roots[] = {"0", "rotate", NULL};
#define SCOPE_PARAM_ROOT                                                                                               \
  { "root", SP_ENUM, "rotate", 0, 0, coll_roots, "root rank: 0, or rotate through all ranks" }

typedef struct {
  long iter;
  int root; /* root of the last call */
} coll_state;

static inline int coll_setup_state(void **st) {
  coll_state *s = calloc(1, sizeof *s);
  *st = s;
  return s ? 0 : -1;
}

static inline int coll_next_root(scope_ctx *c, coll_state *s, int rotate) {
  s->root = rotate ? (int)(s->iter % c->nranks) : 0;
  s->iter++;
  return s->root;
}

/* Reductions work on uint32 words (sums wrap, so the reference is exact); the reference is
 * what every rank's pattern adds up to. */
static inline size_t coll_check_sum(const scope_ctx *c, const void *got, size_t bytes, uint64_t seed, size_t *first) {
  size_t words = bytes / 4, bad = 0;
  const uint32_t *g = got;
  for (size_t i = 0; i < words; i++) {
    uint32_t want = 0;
    for (int r = 0; r < c->nranks; r++) {
      uint32_t v = 0;
      for (int b = 0; b < 4; b++)
        v |= (uint32_t)pattern_byte(seed, r, 4 * i + (size_t)b) << (8 * b);
      want += v;
    }
    if (g[i] != want) {
      if (!bad && first)
        *first = 4 * i;
      bad++;
    }
  }
  return bad;
}

static inline void coll_free(scope_ctx *c, void *st) {
  (void)c;
  free(st);
}

#endif
