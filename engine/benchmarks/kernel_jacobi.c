/* Jacobi relaxation of Laplace's equation on an n x n grid (SCOPE §6.7, App. F): rows split
 * over the ranks, each iteration a halo exchange with the neighbours above and below, then
 * every interior point replaced by the mean of its four neighbours (the problem of grid.h).  The halo exchange is
 * an operation in context, reported beside p2p.exchange's loop figure for one row.  Checked
 * exactly against the serial iteration on rank 0 (same arithmetic in the same order). */
#include <stdio.h>

#include "grid.h"

static const scope_param params[] = {
    {"n", SP_INT, "512", 2, 32768, NULL, "interior grid points per side"},
    {"iters", SP_INT, "50", 1, 100000, NULL, "Jacobi iterations per execution"},
};

typedef struct {
  size_t n, rows, row0;
  long iters;
  int up, down;
  double *u0, *u, *v; /* (rows + 2) x (n + 2): halo rows and boundary columns */
  int op;
} jacobi_state;

static void teardown(scope_ctx *c, void *st) {
  jacobi_state *s = st;
  (void)c;
  free(s->u0), free(s->u), free(s->v);
  free(s);
}

static const char *refuse(scope_ctx *c) {
  return scope_param_get(c, "n") < c->nranks ? "fewer grid rows than ranks: raise n" : NULL;
}

static int setup(scope_ctx *c, void **st) {
  jacobi_state *s = calloc(1, sizeof *s);
  *st = s;
  if (!s)
    return -1;
  s->n = (size_t)scope_param_get(c, "n");
  s->iters = scope_param_get(c, "iters");
  s->rows = kernel_part(s->n, c->nranks, c->rank);
  s->row0 = kernel_part_start(s->n, c->nranks, c->rank);
  s->up = c->rank > 0 ? c->rank - 1 : MPI_PROC_NULL;
  s->down = c->rank + 1 < c->nranks ? c->rank + 1 : MPI_PROC_NULL;
  size_t cells = (s->rows + 2) * (s->n + 2);
  if (!(s->u0 = calloc(cells, sizeof(double))) || !(s->u = calloc(cells, sizeof(double))) ||
      !(s->v = calloc(cells, sizeof(double))))
    return -1;
  s->op = scope_op(c, "halo", "p2p.exchange", (double)(s->n * sizeof(double)));
  c->sbuf_bytes = c->rbuf_bytes = 64;
  c->bytes_per_op = 0;
  double updates = (double)s->n * (double)s->n * (double)s->iters;
  c->extra[0].name = "flop";
  c->extra[0].value = 4.0 * updates; /* three additions and one multiplication a point */
  c->extra[1].name = "updates";
  c->extra[1].value = updates;
  c->nextra = 2;
  snprintf(c->note, sizeof c->note, "%zu x %zu grid, %ld iterations, rows split over %d rank(s)", s->n, s->n, s->iters,
           c->nranks);
  return 0;
}

static void fill(scope_ctx *c, void *st, uint64_t seed) {
  jacobi_state *s = st;
  (void)c;
  grid_initial(s->u0, s->n, s->row0, s->rows, seed);
}

/* One sweep over rows 1..rows of u into v (the boundary columns are left as they are). */
static void sweep(const double *u, double *v, size_t n, size_t rows) {
  size_t w = n + 2;
  for (size_t i = 1; i <= rows; i++)
    for (size_t j = 1; j <= n; j++)
      v[i * w + j] = 0.25 * grid_neighbours(u, w, i, j);
}

static void run(scope_ctx *c, void *st) {
  jacobi_state *s = st;
  size_t w = s->n + 2, cells = (s->rows + 2) * w;
  memcpy(s->u, s->u0, cells * sizeof(double));
  memcpy(s->v, s->u0, cells * sizeof(double)); /* the boundary, in both */
  int deps[2], nd = 0;
  if (s->up != MPI_PROC_NULL)
    deps[nd++] = s->up;
  if (s->down != MPI_PROC_NULL)
    deps[nd++] = s->down;
  for (long it = 0; it < s->iters; it++) {
    MPI_Request r[4];
    scope_comm_begin(c, s->op, nd, deps);
    MPI_Irecv(s->u, (int)w, MPI_DOUBLE, s->up, 21, c->comm, &r[0]);
    MPI_Irecv(s->u + (s->rows + 1) * w, (int)w, MPI_DOUBLE, s->down, 22, c->comm, &r[1]);
    MPI_Isend(s->u + w, (int)w, MPI_DOUBLE, s->up, 22, c->comm, &r[2]);
    MPI_Isend(s->u + s->rows * w, (int)w, MPI_DOUBLE, s->down, 21, c->comm, &r[3]);
    MPI_Waitall(4, r, MPI_STATUSES_IGNORE);
    scope_comm_end(c);
    scope_phase(c, SCOPE_PH_COMP);
    sweep(s->u, s->v, s->n, s->rows);
    double *t = s->u;
    s->u = s->v, s->v = t;
  }
}

/* Rank 0 gathers the result and runs the same iterations serially on the whole grid. */
static size_t verify(scope_ctx *c, void *st, uint64_t seed, size_t *first) {
  jacobi_state *s = st;
  size_t n = s->n, w = n + 2, bad = 0;
  int p = c->nranks, *counts = NULL, *displs = NULL;
  double *got = NULL, *a = NULL, *b = NULL;
  int ok = 1;
  if (c->rank == 0) {
    counts = malloc(sizeof(int) * (size_t)p), displs = malloc(sizeof(int) * (size_t)p);
    got = malloc(sizeof(double) * w * n);
    a = malloc(sizeof(double) * w * (n + 2)), b = malloc(sizeof(double) * w * (n + 2));
    ok = counts && displs && got && a && b;
    for (int r = 0; ok && r < p; r++) {
      counts[r] = (int)(kernel_part(n, p, r) * w);
      displs[r] = (int)(kernel_part_start(n, p, r) * w);
    }
  }
  MPI_Bcast(&ok, 1, MPI_INT, 0, c->comm);
  if (ok)
    MPI_Gatherv(s->u + w, (int)(s->rows * w), MPI_DOUBLE, got, counts, displs, MPI_DOUBLE, 0, c->comm);
  if (c->rank == 0 && ok) {
    grid_initial(a, n, 0, n, seed);
    memcpy(b, a, sizeof(double) * w * (n + 2));
    for (long it = 0; it < s->iters; it++) {
      sweep(a, b, n, n);
      double *t = a;
      a = b, b = t;
    }
    for (size_t i = 0; i < n; i++)
      for (size_t j = 1; j <= n; j++)
        if (got[i * w + j] != a[(i + 1) * w + j]) {
          if (!bad)
            *first = (i * w + j) * sizeof(double);
          bad += sizeof(double);
        }
  }
  if (!ok && c->rank == 0)
    bad = 1; /* no memory for the serial reference: the point cannot be checked */
  free(counts), free(displs), free(got), free(a), free(b);
  return bad;
}

/* Three grids over the ranks, and three more on rank 0 for the serial check. */
static double memory(scope_ctx *c) {
  double n = (double)scope_param_get(c, "n");
  snprintf(c->note, sizeof c->note, "3 grids, and 3 more on rank 0 for the serial check");
  return 6 * 8 * (n + 2) * (n + 2);
}

SCOPE_KERNEL(kernel_jacobi, "kernel.jacobi",
             "Jacobi relaxation on a 2-D grid, rows split, halo exchange each iteration",
             "time of one whole relaxation (all iterations), last rank's completion", 1);
