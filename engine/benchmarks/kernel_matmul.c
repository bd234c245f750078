/* Row- and column-striped matrix multiply C = A B (SCOPE App. F; ParaStation2's Tables 4-5):
 * rank 0 holds A, B and C; with split=row it scatters A's row blocks (Scatterv), broadcasts
 * B, every rank multiplies its rows, and C's row blocks are gathered (Gatherv); with
 * split=col it broadcasts A and scatters B's column blocks (packed by rank 0 first, its
 * T_init, as is unpacking C's).  Each communication is an operation in context, reported
 * beside the same operation's loop figure.  Checked on sampled entries of C against the serial
 * sum from the inputs' generator. */
#include <stdio.h>

#include "kernel.h"

static const char *const splits[] = {"row", "col", NULL};
static const scope_param params[] = {
    {"n", SP_INT, "512", 2, 16384, NULL, "matrix order: C (n x n) = A (n x n) B (n x n)"},
    {"split", SP_ENUM, "row", 0, 0, splits, "row: A's rows scattered and B broadcast; col: B's columns, A broadcast"},
};

#define SAMPLES 48

typedef struct {
  size_t n;
  int col;
  int *counts, *displs; /* each rank's block, in doubles */
  double *A, *B, *C;    /* rank 0: whole matrices; others: the broadcast one */
  double *pack, *cpack; /* col, rank 0: B's column blocks and C's, packed by rank */
  double *in, *out;     /* this rank's scattered block and its block of C */
  int op_scatter, op_bcast, op_gather;
} mm_state;

static void teardown(scope_ctx *c, void *st) {
  mm_state *s = st;
  (void)c;
  free(s->counts);
  free(s->displs);
  free(s->A);
  free(s->B);
  free(s->C);
  free(s->pack);
  free(s->cpack);
  if (c->rank != 0) {
    free(s->in);
    free(s->out);
  }
  free(s);
}

static const char *refuse(scope_ctx *c) {
  size_t n = (size_t)scope_param_get(c, "n");
  return n * n > (size_t)1 << 31 ? "n^2 exceeds MPI's int count for one block" : NULL;
}

static int setup(scope_ctx *c, void **st) {
  mm_state *s = calloc(1, sizeof *s);
  *st = s;
  if (!s)
    return -1;
  size_t n = s->n = (size_t)scope_param_get(c, "n");
  s->col = (int)scope_param_get(c, "split");
  int p = c->nranks;
  s->counts = malloc(sizeof(int) * (size_t)p);
  s->displs = malloc(sizeof(int) * (size_t)p);
  if (!s->counts || !s->displs)
    return -1;
  for (int r = 0; r < p; r++) {
    s->counts[r] = (int)(kernel_part(n, p, r) * n);
    s->displs[r] = (int)(kernel_part_start(n, p, r) * n);
  }
  size_t mine = (size_t)s->counts[c->rank], whole = n * n * sizeof(double);
  int root = c->rank == 0;
  if (root) {
    s->A = malloc(whole), s->B = malloc(whole), s->C = malloc(whole);
    if (!s->A || !s->B || !s->C)
      return -1;
    if (s->col) {
      s->pack = malloc(whole), s->cpack = malloc(whole);
      if (!s->pack || !s->cpack)
        return -1;
      s->in = s->pack, s->out = s->cpack; /* rank 0's block is the first */
    } else {
      s->in = s->A, s->out = s->C;
    }
  } else {
    double **full = s->col ? &s->A : &s->B; /* the broadcast matrix */
    *full = calloc(n * n, sizeof(double));
    s->in = calloc(mine ? mine : 1, sizeof(double));
    s->out = calloc(mine ? mine : 1, sizeof(double));
    if (!*full || !s->in || !s->out)
      return -1;
  }
  kernel_one_thread();
  double block = (double)(n / (size_t)p) * (double)n * sizeof(double);
  s->op_scatter = scope_op(c, "scatterv", "coll.scatter", block);
  s->op_bcast = scope_op(c, "bcast", "coll.bcast", (double)whole);
  s->op_gather = scope_op(c, "gatherv", "coll.gather", block);
  c->sbuf_bytes = c->rbuf_bytes = 64;
  c->bytes_per_op = 0;
  c->extra[0].name = "flop";
  c->extra[0].value = 2.0 * (double)n * (double)n * (double)n;
  c->nextra = 1;
  snprintf(c->note, sizeof c->note, "%s-striped %zu x %zu multiply over %d rank(s); %s", s->col ? "column" : "row", n,
           n, p, KERNEL_GEMM_NAME);
  return 0;
}

static void fill(scope_ctx *c, void *st, uint64_t seed) {
  mm_state *s = st;
  if (c->rank != 0)
    return;
  size_t n = s->n;
  for (size_t i = 0; i < n; i++)
    for (size_t j = 0; j < n; j++) {
      s->A[i * n + j] = kernel_entry(seed, 0, i, j, n);
      s->B[i * n + j] = kernel_entry(seed, 1, i, j, n);
      s->C[i * n + j] = -1.0; /* a block never written shows */
    }
}

/* Column blocks of M (n x n) packed by rank into `to` (rank r's block: n x cols_r), or back. */
static void repack(mm_state *s, int p, double *M, double *to, int unpack) {
  size_t n = s->n;
  for (int r = 0; r < p; r++) {
    size_t w = kernel_part(n, p, r), j0 = kernel_part_start(n, p, r);
    double *blk = to + s->displs[r];
    for (size_t i = 0; i < n; i++)
      for (size_t j = 0; j < w; j++) {
        if (unpack)
          M[i * n + j0 + j] = blk[i * w + j];
        else
          blk[i * w + j] = M[i * n + j0 + j];
      }
  }
}

static void run(scope_ctx *c, void *st) {
  mm_state *s = st;
  int root = c->rank == 0, p = c->nranks, mine = s->counts[c->rank];
  size_t n = s->n, rows = kernel_part(n, p, c->rank);
  if (s->col && root)
    repack(s, p, s->B, s->pack, 0);
  /* rank 0 waits for the receivers of blocks too large to go eagerly; they wait for it */
  kernel_comm_from(c, s->op_scatter, root ? SCOPE_DEP_ALL : 0);
  MPI_Scatterv(s->col ? s->pack : s->A, s->counts, s->displs, MPI_DOUBLE, root ? MPI_IN_PLACE : s->in, mine, MPI_DOUBLE,
               0, c->comm);
  scope_comm_end(c);
  kernel_comm_from(c, s->op_bcast, root ? SCOPE_DEP_ALL : 0);
  MPI_Bcast(s->col ? s->A : s->B, (int)(n * n), MPI_DOUBLE, 0, c->comm);
  scope_comm_end(c);
  scope_phase(c, SCOPE_PH_COMP);
  if (s->col)
    kernel_gemm(n, rows, n, s->A, n, s->in, rows, 0.0, s->out, rows); /* rows: this rank's columns */
  else
    kernel_gemm(rows, n, n, s->in, n, s->B, n, 0.0, s->out, n);
  /* a block too large to go eagerly waits for rank 0 to be there */
  kernel_comm_from(c, s->op_gather, root ? SCOPE_DEP_ALL : 0);
  MPI_Gatherv(root ? MPI_IN_PLACE : s->out, mine, MPI_DOUBLE, s->col ? s->cpack : s->C, s->counts, s->displs,
              MPI_DOUBLE, 0, c->comm);
  scope_comm_end(c);
  scope_phase(c, SCOPE_PH_INIT);
  if (s->col && root)
    repack(s, p, s->C, s->cpack, 1);
}

/* Rank 0: sampled entries of C against the serial sum (integers: exact in doubles). */
static size_t verify(scope_ctx *c, void *st, uint64_t seed, size_t *first) {
  mm_state *s = st;
  if (c->rank != 0)
    return 0;
  size_t bad = 0, n = s->n;
  for (size_t k = 0; k < SAMPLES; k++) {
    size_t i = pattern_index(seed, 7, 2 * k, n), j = pattern_index(seed, 7, 2 * k + 1, n);
    if (k == 0)
      i = j = n - 1; /* the last rank's corner */
    if (s->C[i * n + j] != kernel_product_entry(seed, i, j, n)) {
      if (!bad)
        *first = (i * n + j) * sizeof(double);
      bad += sizeof(double);
    }
  }
  return bad;
}

/* Whole A, B and C on rank 0 with its packed copies, one matrix on each other rank. */
static double memory(scope_ctx *c) {
  double n = (double)scope_param_get(c, "n");
  snprintf(c->note, sizeof c->note, "whole matrices on rank 0, one on each other rank");
  return 8 * n * n * (5 + 3 * (c->nranks - 1));
}

SCOPE_KERNEL(kernel_matmul, "kernel.matmul",
             "row- or column-striped matrix multiply from rank 0 (Scatterv, Bcast, Gatherv)",
             "time of one whole multiply, distribution to collection, last rank's completion", 1);
