/* SPLASH-2 LU, contiguous blocks (Woo et al., ISCA 1995), on one-sided gets as Bjørnstad runs it
 * over Global Arrays (004): an n x n matrix factored without pivoting (it is diagonally
 * dominant), in B x B blocks dealt 2-D cyclically over a pr x pc process grid, every block in
 * its owner's MPI window.  Step K: the owner of (K,K) factors it; the owners of the perimeter
 * blocks (K,J) and (I,K) get the diagonal block and solve against it; the owners of the interior
 * blocks (I,J) get (I,K) and (K,J) and subtract their product.  A barrier closes each phase.
 * Every remote block is read with MPI_Get under one MPI_Win_lock_all (the ARMCI pattern):
 * `get=blocking` completes each get (MPI_Win_flush) when it is needed, `get=nonblocking`
 * prefetches the next block (MPI_Rget) while the current one is used.
 *
 * Steps of T_comp: diag, perimeter, interior.  The gets are an operation in context beside
 * rma.get's loop figure, the barriers beside coll.barrier.  Verified by the residual
 * ||A - LU|| / ||A|| over 256 sampled entries (rank 0 reads the factors back with gets). */
#include <math.h>
#include <stdio.h>

#include "kernel.h"

static const char *const get_modes[] = {"blocking", "nonblocking", NULL};
static const scope_param params[] = {
    {"n", SP_INT, "768", 16, 16384, NULL, "matrix order (a multiple of block)"},
    {"block", SP_INT, "32", 4, 512, NULL, "block order B (SPLASH-2's default is 16; 004 uses 32)"},
    {"get", SP_ENUM, "blocking", 0, 0, get_modes, "blocking: get and flush when needed; nonblocking: prefetch"},
};

#define LU_SAMPLES 256

typedef struct {
  size_t n, B, nb, bb;     /* order, block order, blocks a side, doubles a block */
  int p, me, pr, pc, mode; /* grid pr x pc */
  size_t lcols, lblocks;   /* local blocks: ceil(nb/pr) x ceil(nb/pc) slots */
  double *mine;            /* this rank's window */
  MPI_Win win;
  int have_win;
  double *diag, *colc, *rowc; /* fetched: (K,K); (I,K) for local block-rows, negated; (K,J) */
  size_t lrows;
  uint64_t seed;
  int op_get, op_bar, st_diag, st_per, st_int;
} lu_state;

static int owner(const lu_state *s, size_t bi, size_t bj) {
  return (int)(bi % (size_t)s->pr) * s->pc + (int)(bj % (size_t)s->pc);
}
static size_t slot(const lu_state *s, size_t bi, size_t bj) {
  return (bi / (size_t)s->pr) * s->lcols + bj / (size_t)s->pc;
}
static double *local(const lu_state *s, size_t bi, size_t bj) {
  return s->mine + slot(s, bi, bj) * s->bb;
}

static double entry(uint64_t seed, size_t i, size_t j, size_t n) {
  return (double)(pattern_byte(seed, 3, i * n + j)) / 256.0 + (i == j ? (double)n : 0.0);
}

static void teardown(scope_ctx *c, void *st) {
  lu_state *s = st;
  (void)c;
  if (s->have_win) {
    MPI_Win_unlock_all(s->win);
    MPI_Win_free(&s->win);
  }
  free(s->diag), free(s->colc), free(s->rowc);
  free(s);
}

static const char *refuse(scope_ctx *c) {
  return scope_param_get(c, "n") % scope_param_get(c, "block") ? "n must be a multiple of block" : NULL;
}

static int setup(scope_ctx *c, void **st) {
  lu_state *s = calloc(1, sizeof *s);
  *st = s;
  if (!s)
    return -1;
  s->n = (size_t)scope_param_get(c, "n");
  s->B = (size_t)scope_param_get(c, "block");
  s->mode = (int)scope_param_get(c, "get");
  s->p = c->nranks, s->me = c->rank;
  for (s->pr = 1; (s->pr + 1) * (s->pr + 1) <= s->p; s->pr++)
    ;
  while (s->p % s->pr)
    s->pr--;
  s->pc = s->p / s->pr;
  s->nb = s->n / s->B, s->bb = s->B * s->B;
  s->lrows = (s->nb + (size_t)s->pr - 1) / (size_t)s->pr;
  s->lcols = (s->nb + (size_t)s->pc - 1) / (size_t)s->pc;
  s->lblocks = s->lrows * s->lcols;
  if (MPI_Win_allocate((MPI_Aint)(s->lblocks * s->bb * sizeof(double)), sizeof(double), MPI_INFO_NULL, c->comm,
                       &s->mine, &s->win) != MPI_SUCCESS)
    return -1;
  s->have_win = 1;
  MPI_Win_lock_all(0, s->win);
  s->diag = malloc(sizeof(double) * s->bb);
  s->colc = malloc(sizeof(double) * s->bb * s->lrows);
  s->rowc = malloc(sizeof(double) * s->bb * s->lcols);
  if (!s->diag || !s->colc || !s->rowc)
    return -1;
  s->op_get = scope_op(c, "get", "rma.get", (double)(s->bb * sizeof(double)));
  s->op_bar = scope_op(c, "barrier", "coll.barrier", 0);
  s->st_diag = scope_step(c, "diag");
  s->st_per = scope_step(c, "perimeter");
  s->st_int = scope_step(c, "interior");
  c->sbuf_bytes = c->rbuf_bytes = 64;
  c->bytes_per_op = 0;
  c->extra[0].name = "flop";
  c->extra[0].value = 2.0 / 3.0 * (double)s->n * (double)s->n * (double)s->n;
  c->nextra = 1;
  snprintf(c->note, sizeof c->note, "%zu x %zu in %zu x %zu blocks on a %d x %d grid, %s gets", s->n, s->n, s->B, s->B,
           s->pr, s->pc, get_modes[s->mode]);
  return 0;
}

static void fill(scope_ctx *c, void *st, uint64_t seed) {
  lu_state *s = st;
  (void)c;
  s->seed = seed;
}

static void barrier(scope_ctx *c, lu_state *s) {
  MPI_Win_sync(s->win); /* this rank's stores to its window, visible to the others' gets */
  kernel_comm_from(c, s->op_bar, SCOPE_DEP_ALL);
  MPI_Barrier(c->comm);
  scope_comm_end(c);
  MPI_Win_sync(s->win);
}

/* Block (I,J) into dst: a copy when it is this rank's, else a get completed at once. */
static void fetch_now(scope_ctx *c, lu_state *s, size_t bi, size_t bj, double *dst) {
  int o = owner(s, bi, bj);
  if (o == s->me) {
    memcpy(dst, local(s, bi, bj), s->bb * sizeof(double));
    return;
  }
  scope_comm_begin(c, s->op_get, SCOPE_UNMATCHED, NULL);
  MPI_Get(dst, (int)s->bb, MPI_DOUBLE, o, (MPI_Aint)(slot(s, bi, bj) * s->bb), (int)s->bb, MPI_DOUBLE, s->win);
  MPI_Win_flush(o, s->win);
  scope_comm_end(c);
}

/* The get of block (I,J) into dst started (MPI_REQUEST_NULL when it is local and copied). */
static MPI_Request fetch_start(scope_ctx *c, lu_state *s, size_t bi, size_t bj, double *dst) {
  MPI_Request r = MPI_REQUEST_NULL;
  int o = owner(s, bi, bj);
  if (o == s->me) {
    memcpy(dst, local(s, bi, bj), s->bb * sizeof(double));
    return r;
  }
  scope_comm_begin(c, -1, SCOPE_UNMATCHED, NULL);
  MPI_Rget(dst, (int)s->bb, MPI_DOUBLE, o, (MPI_Aint)(slot(s, bi, bj) * s->bb), (int)s->bb, MPI_DOUBLE, s->win, &r);
  scope_comm_end(c);
  return r;
}

static void fetch_wait(scope_ctx *c, lu_state *s, MPI_Request *r) {
  if (*r == MPI_REQUEST_NULL)
    return;
  scope_comm_begin(c, s->op_get, SCOPE_UNMATCHED, NULL);
  MPI_Wait(r, MPI_STATUS_IGNORE);
  scope_comm_end(c);
}

/* In place: A = L U, L unit lower (below the diagonal), U upper. */
static void factor(double *a, size_t B) {
  for (size_t k = 0; k < B; k++)
    for (size_t i = k + 1; i < B; i++) {
      double l = a[i * B + k] /= a[k * B + k];
      for (size_t j = k + 1; j < B; j++)
        a[i * B + j] -= l * a[k * B + j];
    }
}

/* a <- L^-1 a (row perimeter) with L the unit lower part of d. */
static void solve_lower(const double *d, double *a, size_t B) {
  for (size_t k = 0; k < B; k++)
    for (size_t i = k + 1; i < B; i++)
      for (size_t j = 0; j < B; j++)
        a[i * B + j] -= d[i * B + k] * a[k * B + j];
}

/* a <- a U^-1 (column perimeter) with U the upper part of d. */
static void solve_upper(const double *d, double *a, size_t B) {
  for (size_t i = 0; i < B; i++)
    for (size_t k = 0; k < B; k++) {
      double x = a[i * B + k] /= d[k * B + k];
      for (size_t j = k + 1; j < B; j++)
        a[i * B + j] -= x * d[k * B + j];
    }
}

static void interior(scope_ctx *c, lu_state *s, size_t bk) {
  size_t rows[s->lrows + 1], cols[s->lcols + 1], nr = 0, ncol = 0;
  for (size_t bi = bk + 1; bi < s->nb; bi++)
    if ((int)(bi % (size_t)s->pr) == s->me / s->pc)
      rows[nr++] = bi;
  for (size_t bj = bk + 1; bj < s->nb; bj++)
    if ((int)(bj % (size_t)s->pc) == s->me % s->pc)
      cols[ncol++] = bj;
  if (!nr || !ncol)
    return;
  /* the blocks this step reads, in order of use: each (I,K) of our rows, then each (K,J) */
  size_t total = nr + ncol;
  MPI_Request next = MPI_REQUEST_NULL;
  for (size_t u = 0; u < total; u++) {
    double *dst = u < nr ? s->colc + u * s->bb : s->rowc + (u - nr) * s->bb;
    size_t bi = u < nr ? rows[u] : bk, bj = u < nr ? bk : cols[u - nr];
    if (s->mode == 0) {
      fetch_now(c, s, bi, bj, dst);
    } else {
      if (u == 0)
        next = fetch_start(c, s, bi, bj, dst);
      MPI_Request cur = next;
      if (u + 1 < total) { /* prefetch the next block while this one is put to use */
        size_t v = u + 1;
        double *d2 = v < nr ? s->colc + v * s->bb : s->rowc + (v - nr) * s->bb;
        next = fetch_start(c, s, v < nr ? rows[v] : bk, v < nr ? bk : cols[v - nr], d2);
      }
      fetch_wait(c, s, &cur);
    }
    scope_compute(c, s->st_int);
    if (u < nr) /* negated once, so each update is C += (-A_IK) A_KJ */
      for (size_t q = 0; q < s->bb; q++)
        dst[q] = -dst[q];
    else
      for (size_t a = 0; a < nr; a++)
        kernel_gemm(s->B, s->B, s->B, s->colc + a * s->bb, s->B, dst, s->B, 1.0, local(s, rows[a], cols[u - nr]), s->B);
  }
}

static void run(scope_ctx *c, void *st) {
  lu_state *s = st;
  for (size_t bi = 0; bi < s->nb; bi++) /* T_init: this rank's blocks of A, afresh */
    for (size_t bj = 0; bj < s->nb; bj++)
      if (owner(s, bi, bj) == s->me)
        for (size_t i = 0; i < s->B; i++)
          for (size_t j = 0; j < s->B; j++)
            local(s, bi, bj)[i * s->B + j] = entry(s->seed, bi * s->B + i, bj * s->B + j, s->n);
  barrier(c, s);
  for (size_t bk = 0; bk < s->nb; bk++) {
    scope_compute(c, s->st_diag);
    if (owner(s, bk, bk) == s->me)
      factor(local(s, bk, bk), s->B);
    barrier(c, s);
    int row_mine = (int)(bk % (size_t)s->pr) == s->me / s->pc, col_mine = (int)(bk % (size_t)s->pc) == s->me % s->pc;
    int need = 0;
    for (size_t X = bk + 1; X < s->nb && !need; X++)
      need = (row_mine && owner(s, bk, X) == s->me) || (col_mine && owner(s, X, bk) == s->me);
    if (need) {
      fetch_now(c, s, bk, bk, s->diag);
      scope_compute(c, s->st_per);
      for (size_t X = bk + 1; X < s->nb; X++) {
        if (owner(s, bk, X) == s->me)
          solve_lower(s->diag, local(s, bk, X), s->B);
        if (owner(s, X, bk) == s->me)
          solve_upper(s->diag, local(s, X, bk), s->B);
      }
    }
    barrier(c, s);
    interior(c, s, bk);
  }
  barrier(c, s);
}

/* Rank 0 reads the factors back and compares L U with A at LU_SAMPLES entries. */
static size_t verify(scope_ctx *c, void *st, uint64_t seed, size_t *first) {
  lu_state *s = st;
  size_t n = s->n, bad = 0;
  MPI_Win_sync(s->win);
  MPI_Barrier(c->comm);
  if (c->rank != 0)
    return 0;
  double *f = malloc(sizeof(double) * n * n), *blk = malloc(sizeof(double) * s->bb);
  if (!f || !blk) {
    free(f), free(blk);
    return 1;
  }
  for (size_t bi = 0; bi < s->nb; bi++)
    for (size_t bj = 0; bj < s->nb; bj++) {
      int o = owner(s, bi, bj);
      MPI_Get(blk, (int)s->bb, MPI_DOUBLE, o, (MPI_Aint)(slot(s, bi, bj) * s->bb), (int)s->bb, MPI_DOUBLE, s->win);
      MPI_Win_flush(o, s->win);
      for (size_t i = 0; i < s->B; i++)
        memcpy(f + (bi * s->B + i) * n + bj * s->B, blk + i * s->B, s->B * sizeof(double));
    }
  double num = 0, den = 0;
  for (size_t k = 0; k < LU_SAMPLES; k++) {
    size_t i = pattern_index(seed, 11, k, n), j = pattern_index(seed, 12, k, n);
    if (k == 0)
      i = j = n - 1; /* the last pivot: the end of every elimination */
    double lu = 0;
    for (size_t q = 0; q <= (i < j ? i : j); q++)
      lu += (q == i ? 1.0 : f[i * n + q]) * f[q * n + j];
    double a = entry(seed, i, j, n);
    num += (a - lu) * (a - lu), den += a * a;
  }
  double res = sqrt(num / den);
  kernel_set_extra(c, "residual", res);
  if (!(res <= 1e-12)) {
    bad = 1;
    *first = 0;
  }
  free(f), free(blk);
  return bad;
}

/* The matrix over the ranks, and again on rank 0 for the check. */
static double memory(scope_ctx *c) {
  double n = (double)scope_param_get(c, "n");
  snprintf(c->note, sizeof c->note, "the matrix over the ranks, and again on rank 0 for the check");
  return 2 * 8 * n * n;
}

SCOPE_PHASED(app_lu, "app.lu", "app", "SPLASH-2 LU in blocks on a process grid, every remote block an MPI_Get",
             "time of one whole factorisation, last rank's completion", 1);
