/* Parallel sorting by regular sampling (PSRS; Shi & Schaeffer 1992; SCOPE App. F): every rank
 * sorts its n / p keys, takes p regular samples, rank 0 sorts the p^2 samples and broadcasts
 * p - 1 pivots, every rank cuts its keys at the pivots and sends piece k to rank k (Alltoallv),
 * then merges the p sorted pieces it received.  The all-to-all is an operation in context,
 * reported beside coll.alltoall's loop figure for an even piece.  Checked: every rank's
 * keys sorted, ranks in order, and the output a permutation of the input (count, sum and a
 * sum of mixed keys, modulo 2^64). */
#include <stdint.h>
#include <stdio.h>

#include "kernel.h"

static const scope_param params[] = {
    {"n", SP_INT, "1048576", 1, 1L << 31, NULL, "64-bit keys in all"},
};

typedef struct {
  size_t n, mine, cap, out_n;
  int p;
  uint64_t *in, *work, *recv, *out;
  uint64_t *samples, *all, *pivots;
  int *scount, *sdispl, *rcount, *rdispl;
  size_t *head; /* merge: next unread key of each piece */
  int *heap;
  int op_gather, op_bcast, op_a2a;
} psrs_state;

static uint64_t mix(uint64_t x) { /* splitmix64's finaliser */
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

static void teardown(scope_ctx *c, void *st) {
  psrs_state *s = st;
  (void)c;
  free(s->in), free(s->work), free(s->recv), free(s->out), free(s->samples), free(s->all), free(s->pivots);
  free(s->scount), free(s->sdispl), free(s->rcount), free(s->rdispl), free(s->head), free(s->heap);
  free(s);
}

static const char *refuse(scope_ctx *c) {
  long p = c->nranks;
  return scope_param_get(c, "n") < p * p
             ? "PSRS needs at least procs^2 keys (p regular samples from each rank's p or more)"
             : NULL;
}

static int setup(scope_ctx *c, void **st) {
  psrs_state *s = calloc(1, sizeof *s);
  *st = s;
  if (!s)
    return -1;
  int p = s->p = c->nranks;
  s->n = (size_t)scope_param_get(c, "n");
  s->mine = kernel_part(s->n, p, c->rank);
  s->cap = 2 * s->mine + 16; /* PSRS bounds a rank's share below 2 n / p for distinct keys */
  size_t pp = (size_t)p;
  s->in = malloc(s->mine * 8), s->work = malloc(s->mine * 8);
  s->recv = malloc(s->cap * 8), s->out = malloc(s->cap * 8);
  s->samples = malloc(pp * 8), s->all = malloc(pp * pp * 8), s->pivots = malloc(pp * 8);
  s->scount = malloc(pp * sizeof(int)), s->sdispl = malloc(pp * sizeof(int));
  s->rcount = malloc(pp * sizeof(int)), s->rdispl = malloc(pp * sizeof(int));
  s->head = malloc(pp * sizeof(size_t)), s->heap = malloc(pp * sizeof(int));
  if (!s->in || !s->work || !s->recv || !s->out || !s->samples || !s->all || !s->pivots || !s->scount || !s->sdispl ||
      !s->rcount || !s->rdispl || !s->head || !s->heap)
    return -1;
  s->op_gather = scope_op(c, "gather", "coll.gather", (double)(pp * 8));
  s->op_bcast = scope_op(c, "bcast", "coll.bcast", (double)((pp - 1) * 8));
  s->op_a2a = scope_op(c, "alltoallv", "coll.alltoall", (double)(s->n / (pp * pp) * 8));
  c->sbuf_bytes = c->rbuf_bytes = 64;
  c->bytes_per_op = 0;
  c->extra[0].name = "keys";
  c->extra[0].value = (double)s->n;
  c->nextra = 1;
  snprintf(c->note, sizeof c->note, "%zu 64-bit keys over %d rank(s)", s->n, p);
  return 0;
}

static void fill(scope_ctx *c, void *st, uint64_t seed) {
  psrs_state *s = st;
  size_t g0 = kernel_part_start(s->n, s->p, c->rank);
  for (size_t i = 0; i < s->mine; i++)
    s->in[i] = mix(seed ^ mix(g0 + i));
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return (x > y) - (x < y);
}

/* First index in sorted a[0..n) whose key exceeds v. */
static size_t upper(const uint64_t *a, size_t n, uint64_t v) {
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (a[mid] <= v)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

/* A p-way merge of the received pieces through a binary heap of piece numbers. */
static int less(const psrs_state *s, int a, int b) {
  return s->recv[s->head[a]] < s->recv[s->head[b]];
}
static void sift(psrs_state *s, int *h, int n, int i) {
  for (;;) {
    int l = 2 * i + 1, r = l + 1, m = i;
    if (l < n && less(s, h[l], h[m]))
      m = l;
    if (r < n && less(s, h[r], h[m]))
      m = r;
    if (m == i)
      return;
    int t = h[i];
    h[i] = h[m], h[m] = t;
    i = m;
  }
}
static void merge(psrs_state *s) {
  int n = 0, *h = s->heap;
  for (int k = 0; k < s->p; k++) {
    s->head[k] = (size_t)s->rdispl[k];
    if (s->rcount[k])
      h[n++] = k;
  }
  for (int i = n / 2 - 1; i >= 0; i--)
    sift(s, h, n, i);
  size_t o = 0;
  while (n) {
    int k = h[0];
    s->out[o++] = s->recv[s->head[k]++];
    if (s->head[k] == (size_t)s->rdispl[k] + (size_t)s->rcount[k])
      h[0] = h[--n];
    sift(s, h, n, 0);
  }
  s->out_n = o;
}

static void run(scope_ctx *c, void *st) {
  psrs_state *s = st;
  int p = s->p, root = c->rank == 0;
  memcpy(s->work, s->in, s->mine * 8);
  scope_phase(c, SCOPE_PH_COMP);
  qsort(s->work, s->mine, 8, cmp_u64);
  for (int k = 0; k < p; k++)
    s->samples[k] = s->work[(size_t)k * s->mine / (size_t)p];
  kernel_comm_from(c, s->op_gather, root ? SCOPE_DEP_ALL : 0);
  MPI_Gather(s->samples, p, MPI_UINT64_T, s->all, p, MPI_UINT64_T, 0, c->comm);
  scope_comm_end(c);
  if (root) {
    qsort(s->all, (size_t)p * (size_t)p, 8, cmp_u64);
    for (int k = 1; k < p; k++) /* the p-th, 2p-th, ... samples, offset by p/2 (Shi & Schaeffer) */
      s->pivots[k - 1] = s->all[(size_t)k * (size_t)p + (size_t)p / 2 - 1];
  }
  kernel_comm_from(c, s->op_bcast, root ? SCOPE_DEP_ALL : 0);
  MPI_Bcast(s->pivots, p - 1, MPI_UINT64_T, 0, c->comm);
  scope_comm_end(c);
  size_t at = 0;
  for (int k = 0; k < p; k++) {
    size_t end = k + 1 < p ? upper(s->work, s->mine, s->pivots[k]) : s->mine;
    end = end < at ? at : end;
    s->sdispl[k] = (int)at;
    s->scount[k] = (int)(end - at);
    at = end;
  }
  kernel_comm_from(c, -1, SCOPE_DEP_ALL);
  MPI_Alltoall(s->scount, 1, MPI_INT, s->rcount, 1, MPI_INT, c->comm);
  scope_comm_end(c);
  size_t total = 0;
  for (int k = 0; k < p; k++) {
    s->rdispl[k] = (int)total;
    total += (size_t)s->rcount[k];
  }
  if (total > s->cap) { /* many equal keys can pass PSRS's bound; grow, rarely */
    s->cap = total;
    uint64_t *r = realloc(s->recv, total * 8), *o = realloc(s->out, total * 8);
    if (!r || !o)
      MPI_Abort(MPI_COMM_WORLD, 3);
    s->recv = r, s->out = o;
  }
  kernel_comm_from(c, s->op_a2a, SCOPE_DEP_ALL);
  MPI_Alltoallv(s->work, s->scount, s->sdispl, MPI_UINT64_T, s->recv, s->rcount, s->rdispl, MPI_UINT64_T, c->comm);
  scope_comm_end(c);
  scope_phase(c, SCOPE_PH_COMP);
  merge(s);
}

static size_t verify(scope_ctx *c, void *st, uint64_t seed, size_t *first) {
  psrs_state *s = st;
  size_t bad = 0;
  for (size_t i = 1; i < s->out_n; i++)
    if (s->out[i - 1] > s->out[i]) {
      if (!bad)
        *first = i * 8;
      bad += 8;
    }
  /* count, sum and mixed sum of what came in and of what went out, and each rank's range */
  uint64_t mine[4] = {s->mine, 0, 0, s->out_n}, in_out[4];
  uint64_t mixed_out = 0, sum_out = 0;
  for (size_t i = 0; i < s->mine; i++)
    mine[1] += s->in[i], mine[2] += mix(s->in[i]);
  for (size_t i = 0; i < s->out_n; i++)
    sum_out += s->out[i], mixed_out += mix(s->out[i]);
  MPI_Allreduce(mine, in_out, 4, MPI_UINT64_T, MPI_SUM, c->comm);
  uint64_t outs[2] = {sum_out, mixed_out}, out_all[2];
  MPI_Allreduce(outs, out_all, 2, MPI_UINT64_T, MPI_SUM, c->comm);
  uint64_t range[3] = {s->out_n, s->out_n ? s->out[0] : 0, s->out_n ? s->out[s->out_n - 1] : 0};
  uint64_t *ranges = malloc(sizeof range * (size_t)s->p);
  if (!ranges)
    return 8;
  MPI_Allgather(range, 3, MPI_UINT64_T, ranges, 3, MPI_UINT64_T, c->comm);
  if (c->rank == 0) {
    if (in_out[0] != in_out[3] || in_out[1] != out_all[0] || in_out[2] != out_all[1])
      bad += 8; /* not a permutation of the input */
    uint64_t prev_max = 0;
    for (int r = 0; r < s->p; r++) {
      if (!ranges[3 * r])
        continue;
      if (ranges[3 * r + 1] < prev_max)
        bad += 8; /* rank r starts below where an earlier rank ended */
      prev_max = ranges[3 * r + 2];
    }
  }
  free(ranges);
  (void)seed;
  return bad;
}

/* Input, work, received and merged keys, and slack for an uneven split. */
static double memory(scope_ctx *c) {
  snprintf(c->note, sizeof c->note, "input, work, received and merged keys");
  return 5 * 8 * (double)scope_param_get(c, "n");
}

SCOPE_KERNEL(kernel_psrs, "kernel.psrs", "parallel sorting by regular sampling (local sorts, pivots, Alltoallv, merge)",
             "time of one whole sort of n keys, last rank's completion", 1);
