/* Multigrid relaxation (SCOPE §6.7, App. F) of the problem kernel.jacobi solves (grid.h): V
 * cycles of the standard geometric scheme for the 5-point Laplacian (Briggs, Henson & McCormick,
 * "A Multigrid Tutorial", 2nd ed., ch. 3-4): damped Jacobi smoothing (omega = 4/5, `nu` sweeps
 * before and after), full-weighting restriction of the residual, bilinear prolongation of the
 * correction, plain Jacobi sweeps on the coarsest grid.  The grid of n interior points a side has
 * N = n + 1 intervals; each level halves N while it stays even.
 *
 * Rows are split over the ranks as in kernel.jacobi; a coarse row belongs to the rank holding the
 * fine row under it (coarse row i over fine row 2i), so every operation between levels needs one
 * halo row on each side.  Coarse levels have fewer rows than there are ranks near the bottom:
 * a rank may hold none, yet still needs the two coarse rows around its fine rows to prolong, so
 * who sends which row is derived from every rank's range, not from fixed neighbours.  The halo
 * exchange of the finest level is the operation in context (p2p.exchange, one row).  Checked
 * exactly against rank 0 running the same cycles on the whole grid; rank 0 also records how much
 * each cycle shrank the residual (a multigrid that is right shrinks it by ~0.1 a V(2,2) cycle). */
#include <math.h>
#include <stdio.h>

#include "grid.h"

static const scope_param params[] = {
    {"n", SP_INT, "511", 3, 32767, NULL, "interior grid points per side (n + 1 must be even: 2^k - 1 is best)"},
    {"cycles", SP_INT, "8", 1, 1000, NULL, "V cycles per execution"},
    {"nu", SP_INT, "2", 1, 16, NULL, "smoothing sweeps before and after each coarse correction"},
    {"levels", SP_INT, "0", 0, 30, NULL, "grid levels (0: halve while the intervals stay even)"},
};

#define MG_MAX_LEVELS 30
#define MG_OMEGA 0.8
#define TAG_TOP 31 /* the sender's last row, the receiver's halo above */
#define TAG_BOTTOM 32

typedef struct {
  size_t N, lo, hi;  /* intervals a side; this rank's interior rows [lo, hi) of 1 .. N - 1 */
  double *u, *g, *r; /* rows lo - 1 .. hi, N + 1 wide: unknowns, right-hand side, residual */
  double *t;         /* the smoother's target, swapped with u */
  int from[2];       /* who sends rows lo - 1 and hi (MPI_PROC_NULL: a boundary row) */
  int nto, *to, *to_tag;
} mg_level;

typedef struct {
  int nlev, nu, p, op;
  long cycles;
  mg_level lev[MG_MAX_LEVELS];
  double *u0; /* the initial finest grid */
} mg_state;

/* This rank's rows at level l given the finest split (the same rule on every rank). */
static void range_at(size_t N0, int p, int r, int l, size_t *lo, size_t *hi) {
  size_t n = N0 - 1;
  *lo = 1 + kernel_part_start(n, p, r);
  *hi = *lo + kernel_part(n, p, r);
  for (int k = 0; k < l; k++)
    *lo = (*lo + 1) / 2, *hi = (*hi + 1) / 2;
}

static int owner_at(size_t N0, int p, int l, size_t row) {
  for (int r = 0; r < p; r++) {
    size_t lo, hi;
    range_at(N0, p, r, l, &lo, &hi);
    if (row >= lo && row < hi)
      return r;
  }
  return MPI_PROC_NULL;
}

static size_t cells(const mg_level *L) {
  return (L->hi - L->lo + 2) * (L->N + 1);
}

static void free_levels(mg_state *s) {
  for (int l = 0; l < s->nlev; l++) {
    mg_level *L = &s->lev[l];
    free(L->u), free(L->g), free(L->r), free(L->t), free(L->to), free(L->to_tag);
    memset(L, 0, sizeof *L);
  }
  s->nlev = 0;
}

/* The levels of an N0-interval grid split over p ranks, as rank `me` holds them. */
static int build_levels(mg_state *s, size_t N0, int nlev, int p, int me) {
  s->nlev = nlev;
  for (int l = 0; l < nlev; l++) {
    mg_level *L = &s->lev[l];
    L->N = N0 >> l;
    range_at(N0, p, me, l, &L->lo, &L->hi);
    size_t k = cells(L);
    L->u = calloc(k, sizeof(double)), L->g = calloc(k, sizeof(double));
    L->r = calloc(k, sizeof(double)), L->t = calloc(k, sizeof(double));
    L->to = malloc(sizeof(int) * 2 * (size_t)p), L->to_tag = malloc(sizeof(int) * 2 * (size_t)p);
    if (!L->u || !L->g || !L->r || !L->t || !L->to || !L->to_tag)
      return -1;
    L->from[0] = L->lo - 1 >= 1 ? owner_at(N0, p, l, L->lo - 1) : MPI_PROC_NULL;
    L->from[1] = L->hi <= L->N - 1 ? owner_at(N0, p, l, L->hi) : MPI_PROC_NULL;
    L->nto = 0;
    for (int r = 0; r < p && L->hi > L->lo; r++) {
      size_t lo, hi;
      range_at(N0, p, r, l, &lo, &hi);
      if (r == me)
        continue;
      if (lo == L->hi) /* r starts where this rank ends (perhaps holding nothing): its row above is ours */
        L->to[L->nto] = r, L->to_tag[L->nto++] = TAG_TOP;
      if (hi == L->lo)
        L->to[L->nto] = r, L->to_tag[L->nto++] = TAG_BOTTOM;
    }
  }
  return 0;
}

static int levels_of(size_t N0, long asked) {
  int n = 1;
  while (n < MG_MAX_LEVELS && (N0 >> (n - 1)) % 2 == 0 && (N0 >> n) >= 2 && (asked == 0 || n < asked))
    n++;
  return n;
}

static void teardown(scope_ctx *c, void *st) {
  mg_state *s = st;
  (void)c;
  free_levels(s);
  free(s->u0);
  free(s);
}

/* Grid-point visits of one V cycle at level l and below (smoothing, residual, restriction,
 * prolongation; sweeps on the coarsest), for the rate. */
static double visits(const mg_state *s, size_t N0) {
  double v = 0;
  for (int l = 0; l < s->nlev; l++) {
    double pts = (double)((N0 >> l) - 1) * (double)((N0 >> l) - 1);
    v += l + 1 < s->nlev ? (2.0 * s->nu + 2) * pts + (double)((N0 >> (l + 1)) - 1) * ((N0 >> (l + 1)) - 1)
                         : (double)(N0 >> l) * pts;
  }
  return v;
}

static const char *refuse(scope_ctx *c) {
  long n = scope_param_get(c, "n"), asked = scope_param_get(c, "levels");
  int nlev = levels_of((size_t)n + 1, asked);
  if (nlev < 2)
    return "n + 1 must be even for a coarser grid: use n = 2^k - 1";
  if (asked && nlev < asked)
    return "fewer levels than asked: n + 1 must be divisible by 2^(levels - 1)";
  return n < c->nranks ? "fewer grid rows than ranks: raise n" : NULL;
}

static int setup(scope_ctx *c, void **st) {
  mg_state *s = calloc(1, sizeof *s);
  *st = s;
  if (!s)
    return -1;
  size_t n = (size_t)scope_param_get(c, "n"), N0 = n + 1;
  s->cycles = scope_param_get(c, "cycles");
  s->nu = (int)scope_param_get(c, "nu");
  s->p = c->nranks;
  long asked = scope_param_get(c, "levels");
  int nlev = levels_of(N0, asked);
  if (build_levels(s, N0, nlev, c->nranks, c->rank) || !(s->u0 = calloc(cells(&s->lev[0]), sizeof(double))))
    return -1;
  s->op = scope_op(c, "halo", "p2p.exchange", (double)((n + 2) * sizeof(double)));
  c->sbuf_bytes = c->rbuf_bytes = 64;
  c->bytes_per_op = 0;
  c->extra[0].name = "updates";
  c->extra[0].value = visits(s, N0) * (double)s->cycles;
  c->extra[1].name = "levels";
  c->extra[1].value = nlev;
  c->nextra = 2;
  snprintf(c->note, sizeof c->note, "%zu x %zu grid, %d levels, %ld V(%d,%d) cycles, rows split over %d rank(s)", n, n,
           nlev, s->cycles, s->nu, s->nu, c->nranks);
  return 0;
}

static void fill(scope_ctx *c, void *st, uint64_t seed) {
  mg_state *s = st;
  mg_level *L = &s->lev[0];
  (void)c;
  grid_initial(s->u0, L->N - 1, L->lo - 1, L->hi - L->lo, seed);
}

/* Rows lo - 1 and hi of a (one of the level's arrays) from the ranks holding them. */
static void halo(scope_ctx *c, const mg_state *s, int l, double *a) {
  const mg_level *L = &s->lev[l];
  size_t w = L->N + 1, rows = L->hi - L->lo;
  MPI_Request req[2 + 2 * SCOPE_MAX_DEPS + 64];
  int nr = 0, deps[2], nd = 0;
  for (int k = 0; k < 2; k++)
    if (L->from[k] != MPI_PROC_NULL)
      deps[nd++] = L->from[k];
  scope_comm_begin(c, l == 0 ? s->op : -1, nd, deps);
  if (L->from[0] != MPI_PROC_NULL)
    MPI_Irecv(a, (int)w, MPI_DOUBLE, L->from[0], TAG_TOP, c->comm, &req[nr++]);
  if (L->from[1] != MPI_PROC_NULL)
    MPI_Irecv(a + (rows + 1) * w, (int)w, MPI_DOUBLE, L->from[1], TAG_BOTTOM, c->comm, &req[nr++]);
  for (int k = 0; k < L->nto; k++) {
    const double *row = L->to_tag[k] == TAG_TOP ? a + rows * w : a + w;
    MPI_Isend(row, (int)w, MPI_DOUBLE, L->to[k], L->to_tag[k], c->comm, &req[nr++]);
    if (nr == (int)(sizeof req / sizeof req[0])) /* many empty ranks below one row: drain */
      MPI_Waitall(nr, req, MPI_STATUSES_IGNORE), nr = 0;
  }
  MPI_Waitall(nr, req, MPI_STATUSES_IGNORE);
  scope_comm_end(c);
}

/* Sweeps of damped (omega < 1) or plain Jacobi on level l: u <- (1 - w) u + w/4 (sum + g). */
static void smooth(scope_ctx *c, mg_state *s, int l, int sweeps, double omega) {
  mg_level *L = &s->lev[l];
  size_t w = L->N + 1, rows = L->hi - L->lo;
  for (int k = 0; k < sweeps; k++) {
    halo(c, s, l, L->u);
    scope_phase(c, SCOPE_PH_COMP);
    const double *u = L->u, *g = L->g;
    for (size_t i = 1; i <= rows; i++)
      for (size_t j = 1; j < L->N; j++) {
        double nb = grid_neighbours(u, w, i, j);
        L->t[i * w + j] = (1.0 - omega) * u[i * w + j] + omega * 0.25 * (nb + g[i * w + j]);
      }
    double *t = L->u;
    L->u = L->t, L->t = t;
  }
}

/* r = g - A u (scaled by h^2: g + sum of neighbours - 4 u), then its halo for restriction. */
static void residual(scope_ctx *c, mg_state *s, int l) {
  mg_level *L = &s->lev[l];
  size_t w = L->N + 1, rows = L->hi - L->lo;
  halo(c, s, l, L->u);
  scope_phase(c, SCOPE_PH_COMP);
  const double *u = L->u;
  for (size_t i = 1; i <= rows; i++)
    for (size_t j = 1; j < L->N; j++) {
      double nb = grid_neighbours(u, w, i, j);
      L->r[i * w + j] = L->g[i * w + j] + nb - 4.0 * u[i * w + j];
    }
  halo(c, s, l, L->r);
}

/* Coarse right-hand side by full weighting of the fine residual (times 4 = (2h)^2 / h^2), and a
 * zero first guess of the correction. */
static void restrict_to(scope_ctx *c, mg_state *s, int l) {
  const mg_level *F = &s->lev[l];
  mg_level *C = &s->lev[l + 1];
  size_t wf = F->N + 1, wc = C->N + 1;
  scope_phase(c, SCOPE_PH_COMP);
  memset(C->u, 0, cells(C) * sizeof(double));
  memset(C->t, 0, cells(C) * sizeof(double));
  for (size_t ci = C->lo; ci < C->hi; ci++) {
    const double *r = F->r + (2 * ci - F->lo + 1) * wf; /* fine row 2 ci */
    for (size_t cj = 1; cj < C->N; cj++) {
      size_t j = 2 * cj;
      double edge = (r[j - wf] + r[j + wf]) + (r[j - 1] + r[j + 1]);
      double corner = (r[j - wf - 1] + r[j - wf + 1]) + (r[j + wf - 1] + r[j + wf + 1]);
      C->g[(ci - C->lo + 1) * wc + cj] = (4.0 * r[j] + 2.0 * edge + corner) * 0.25;
    }
  }
}

/* u += the bilinear interpolation of the coarse correction (after its halo). */
static void prolong(scope_ctx *c, mg_state *s, int l) {
  mg_level *F = &s->lev[l];
  const mg_level *C = &s->lev[l + 1];
  size_t wf = F->N + 1, wc = C->N + 1;
  halo(c, s, l + 1, C->u);
  scope_phase(c, SCOPE_PH_COMP);
  for (size_t i = F->lo; i < F->hi; i++) {
    const double *a = C->u + (i / 2 - C->lo + 1) * wc, *b = C->u + ((i + 1) / 2 - C->lo + 1) * wc;
    double *u = F->u + (i - F->lo + 1) * wf;
    for (size_t j = 1; j < F->N; j++) {
      size_t cj = j / 2, ck = (j + 1) / 2;
      double e = i % 2 == 0 ? (j % 2 == 0 ? a[cj] : 0.5 * (a[cj] + a[ck]))
                            : (j % 2 == 0 ? 0.5 * (a[cj] + b[cj]) : 0.25 * ((a[cj] + a[ck]) + (b[cj] + b[ck])));
      u[j] += e;
    }
  }
}

static void vcycle(scope_ctx *c, mg_state *s, int l) {
  if (l + 1 == s->nlev) {
    smooth(c, s, l, (int)s->lev[l].N, 1.0);
    return;
  }
  smooth(c, s, l, s->nu, MG_OMEGA);
  residual(c, s, l);
  restrict_to(c, s, l);
  vcycle(c, s, l + 1);
  prolong(c, s, l);
  smooth(c, s, l, s->nu, MG_OMEGA);
}

/* The finest grid from u0, both buffers (the boundary stays in each), and `cycles` V cycles. */
static void solve(scope_ctx *c, mg_state *s) {
  mg_level *L = &s->lev[0];
  memcpy(L->u, s->u0, cells(L) * sizeof(double));
  memcpy(L->t, s->u0, cells(L) * sizeof(double));
  for (long k = 0; k < s->cycles; k++)
    vcycle(c, s, 0);
}

static void run(scope_ctx *c, void *st) {
  solve(c, st);
}

/* The 2-norm of the finest residual of the grid held in u (a whole grid: one rank's check). */
static double residual_norm(const mg_level *L) {
  size_t w = L->N + 1;
  double sum = 0;
  for (size_t i = 1; i < L->N; i++)
    for (size_t j = 1; j < L->N; j++) {
      const double *u = L->u;
      double r = grid_neighbours(u, w, i, j) - 4.0 * u[i * w + j];
      sum += r * r;
    }
  return sqrt(sum);
}

/* Rank 0 gathers the finest grid and runs the same cycles on one rank's layout of it. */
static size_t verify(scope_ctx *c, void *st, uint64_t seed, size_t *first) {
  mg_state *s = st, one = {.nu = s->nu, .p = 1, .op = -1, .cycles = s->cycles};
  const mg_level *L = &s->lev[0];
  size_t N0 = L->N, w = N0 + 1, n = N0 - 1, bad = 0;
  int p = c->nranks, *counts = NULL, *displs = NULL, ok = 1;
  double *got = NULL;
  if (c->rank == 0) {
    counts = malloc(sizeof(int) * (size_t)p), displs = malloc(sizeof(int) * (size_t)p);
    got = malloc(sizeof(double) * w * n);
    ok = counts && displs && got && !build_levels(&one, N0, s->nlev, 1, 0) &&
         (one.u0 = calloc(cells(&one.lev[0]), sizeof(double)));
    for (int r = 0; ok && r < p; r++) {
      counts[r] = (int)(kernel_part(n, p, r) * w);
      displs[r] = (int)(kernel_part_start(n, p, r) * w);
    }
  }
  MPI_Bcast(&ok, 1, MPI_INT, 0, c->comm);
  if (ok)
    MPI_Gatherv(L->u + w, (int)((L->hi - L->lo) * w), MPI_DOUBLE, got, counts, displs, MPI_DOUBLE, 0, c->comm);
  if (c->rank == 0 && ok) {
    grid_initial(one.u0, n, 0, n, seed);
    memcpy(one.lev[0].u, one.u0, cells(&one.lev[0]) * sizeof(double));
    double before = residual_norm(&one.lev[0]);
    solve(c, &one); /* no communication on one rank, and the phase calls are off in checks */
    double after = residual_norm(&one.lev[0]);
    for (size_t i = 0; i < n; i++)
      for (size_t j = 1; j <= n; j++)
        if (got[i * w + j] != one.lev[0].u[(i + 1) * w + j]) {
          if (!bad)
            *first = (i * w + j) * sizeof(double);
          bad += sizeof(double);
        }
    if (before > 0) /* the record's: how much a cycle shrinks the residual */
      kernel_set_extra(c, "residual_factor", pow(after / before, 1.0 / (double)s->cycles));
  }
  if (!ok && c->rank == 0)
    bad = 1; /* no memory for the serial reference: the point cannot be checked */
  free_levels(&one);
  free(one.u0), free(counts), free(displs), free(got);
  return bad;
}

/* Four grids a level (the levels add a third), and the same again for rank 0's check. */
static double memory(scope_ctx *c) {
  double n = (double)scope_param_get(c, "n");
  snprintf(c->note, sizeof c->note, "4 grids a level, and the same again for the serial check");
  return 14 * 8 * (n + 2) * (n + 2);
}

SCOPE_KERNEL(kernel_multigrid, "kernel.multigrid",
             "multigrid V cycles on a 2-D grid (kernel.jacobi's problem), rows split, halo exchanges on every level",
             "time of one whole solve (all V cycles), last rank's completion", 1);
