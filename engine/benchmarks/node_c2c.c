/* The floor under every layer: a cache-line ping-pong between two pinned cores.  Rank 0
 * stores a sequence number into its line; rank 1 spins until it sees it and answers in its
 * own line.  One iteration is a round trip of two cache-line transfers; the reported time
 * is one way. */
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "ring.h"

static const scope_param params[] = {
    {"cpu0", SP_INT, "0", 0, 4095, NULL, "cpu rank 0 is pinned to"},
    {"cpu1", SP_INT, "1", 0, 4095, NULL, "cpu rank 1 is pinned to"},
};

typedef struct {
  _Alignas(64) _Atomic uint64_t a;
  _Alignas(64) _Atomic uint64_t b;
} lines;

typedef struct {
  lines *l;
  uint64_t seq, seen;
  cpu_set_t old;
  int pinned;
} state;

static int setup(scope_ctx *c, void **st) {
  state *s = calloc(1, sizeof *s);
  if (!s)
    return -1;
  *st = s;
  c->ops_per_iter = 2;
  c->bytes_per_op = 64;
  if (c->nranks < 2 || c->node0 != c->node1) {
    c->skip = "ranks 0 and 1 are on different nodes: no cache line to share";
    return 0;
  }
  if (scope_param_get(c, "cpu0") == scope_param_get(c, "cpu1")) {
    c->skip = "cpu0 and cpu1 must differ: one core cannot ping-pong with itself";
    return 0;
  }
  int fail = 0, any;
  if (c->rank < 2) {
    fail = scope_pin((int)scope_param_get(c, c->rank == 0 ? "cpu0" : "cpu1"), &s->old, sizeof s->old) != 0;
    s->pinned = !fail;
  }
  MPI_Allreduce(&fail, &any, 1, MPI_INT, MPI_LOR, c->comm);
  if (any) {
    c->skip = "cannot pin to the requested cpus (not allowed or absent); choose others with -p cpu0=,cpu1=";
    return 0;
  }
  s->l = scope_shm_map(c, sizeof(lines));
  if (!s->l) {
    c->skip = "cannot create a shared-memory segment";
    return 0;
  }
  if (c->rank == 0) {
    atomic_store(&s->l->a, 0);
    atomic_store(&s->l->b, 0);
  }
  MPI_Barrier(c->comm);
  c->extra[0].name = "cpu0";
  c->extra[0].value = (double)scope_param_get(c, "cpu0");
  c->extra[1].name = "cpu1";
  c->extra[1].value = (double)scope_param_get(c, "cpu1");
  c->nextra = 2;
  return 0;
}

static void run(scope_ctx *c, void *st) {
  state *s = st;
  if (c->rank == 0) {
    uint64_t k = ++s->seq;
    atomic_store_explicit(&s->l->a, k, memory_order_release);
    while ((s->seen = atomic_load_explicit(&s->l->b, memory_order_acquire)) != k)
      cpu_relax();
  } else if (c->rank == 1) {
    uint64_t k = ++s->seq;
    while ((s->seen = atomic_load_explicit(&s->l->a, memory_order_acquire)) != k)
      cpu_relax();
    atomic_store_explicit(&s->l->b, k, memory_order_release);
  }
}

/* The data of this test is the sequence number: each side must have seen the other's. */
static size_t verify(scope_ctx *c, void *st, uint64_t seed, size_t *first) {
  state *s = st;
  (void)seed;
  *first = 0;
  return c->rank < 2 && s->seen != s->seq;
}

static void teardown(scope_ctx *c, void *st) {
  state *s = st;
  (void)c;
  if (s->l && (void *)s->l != (void *)1)
    scope_shm_unmap(s->l, sizeof(lines));
  if (s->pinned)
    scope_unpin(&s->old, sizeof s->old);
  free(s);
}

const scope_test test_node_c2c = {
    .name = "node.c2c",
    .level = "node",
    .summary = "cache-line ping-pong between two pinned cores: the hardware floor under every layer",
    .measures = "one-way cache-line transfer (RTT/2)",
    .min_ranks = 2,
    .sized = 0,
    .roles = {"latency:cache line"},
    SCOPE_PARAMS(params),
    .setup = setup,
    .run = run,
    .verify = verify,
    .teardown = teardown,
};
