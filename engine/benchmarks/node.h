/* What the single-node tests (node.stream, node.dgemm) share: three arrays of doubles a rank,
 * window timing over --procs (procs=1 one core alone, procs=all the whole node), one rank's
 * own memory first-touched by it. */
#ifndef SCOPE_NODE_H
#define SCOPE_NODE_H
#include <stdlib.h>

#include "../scope.h"

typedef struct {
  double *a, *b, *c;
  size_t n;     /* elements of each array */
  int kernel;   /* node.stream: which kernel */
  size_t order; /* node.dgemm: the matrices' order (n = order^2) */
} node_arrays;

/* Three arrays of n doubles, written here so their pages are this rank's (calloc would leave
 * them untouched); -1 when out of memory (node_free frees the state either way). */
static inline int node_alloc(node_arrays *s, size_t n) {
  s->n = n;
  s->a = malloc(n * sizeof(double));
  s->b = malloc(n * sizeof(double));
  s->c = malloc(n * sizeof(double));
  if (!s->a || !s->b || !s->c)
    return -1;
  for (size_t i = 0; i < n; i++)
    s->a[i] = s->b[i] = s->c[i] = 0.0;
  return 0;
}

static inline void node_free(scope_ctx *c, void *st) {
  node_arrays *s = st;
  (void)c;
  free(s->a);
  free(s->b);
  free(s->c);
  free(s);
}

/* STREAM's rule, applied per node: each of the three arrays, over all of a node's ranks, at least
 * 4x the last-level caches those ranks use (their sum: one L3 shared by 16 ranks counts once,
 * two sockets' L3s twice), shared out evenly and rounded up to whole MiB, so every rank of a
 * point moves the same bytes.  McCalpin's stream.c asks for 4x "the sum of the caches used". */
static inline size_t node_stream_rule_bytes(double llc_in_use, int ranks_on_node) {
  double mib = 1 << 20, each = 4 * llc_in_use / (ranks_on_node > 0 ? ranks_on_node : 1);
  return (size_t)(mib * (double)(size_t)((each + mib - 1) / mib));
}

#define SCOPE_NODE(ID, NAME, SUMMARY, MEASURES, MIN_SAMPLES)                                                           \
  const scope_test test_##ID = {.name = NAME,                                                                          \
                                .level = "node",                                                                       \
                                .summary = SUMMARY,                                                                    \
                                .measures = MEASURES,                                                                  \
                                .min_ranks = 1,                                                                        \
                                .sized = 0,                                                                            \
                                .timing = SCOPE_TIMING_WINDOW,                                                         \
                                SCOPE_PARAMS(params),                                                                  \
                                .setup = setup,                                                                        \
                                .fill = fill,                                                                          \
                                .run = run,                                                                            \
                                .verify = verify,                                                                      \
                                .teardown = node_free,                                                                 \
                                .memory = memory,                                                                      \
                                .min_samples = MIN_SAMPLES}

#endif
