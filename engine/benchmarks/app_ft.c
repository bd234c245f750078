/* NAS FT (Bailey et al., RNR-94-007 §2.6; NPB 3): the heat equation du/dt = alpha lap u solved
 * spectrally on an nx x ny x nz grid.  The initial field is NPB's generator from seed 314159265,
 * filled x fastest, then y, then z; it is transformed forward once, and each iteration multiplies
 * the spectrum by exp(-4 alpha pi^2 |k|^2) (cumulatively: "evolve"), transforms it back and takes
 * NPB's checksum, the sum of u at (j mod nx, 3j mod ny, 5j mod nz), j = 1..1024, over the grid
 * size.  Verified against NPB's official checksums of every iteration to a relative 1e-12.
 *
 * Slab decomposition (NPB's 1-D layout): z planes are split over the ranks for the x and y
 * FFTs; a transpose (all-to-all of nz/p x ny/p x nx blocks) gives each rank y slabs with whole z
 * lines for the z FFTs, and the inverse transpose comes back.  The transpose is a switch in the
 * spirit of Huse & Omang (003): one MPI_Alltoall, p - 1 pairwise MPI_Sendrecv steps, or
 * non-blocking MPI_Ialltoall of one plane at a time while the next plane is transformed, whose
 * overlap the front end measures against the blocking run.  The FFT is SCOPE's own (fft.h). */
#include <stdio.h>

#include "fft.h"
#include "kernel.h"
#include "npb.h"

static const char *const classes[] = {"S", "W", "A", NULL};
static const int dims[][4] = {{64, 64, 64, 6}, {128, 128, 32, 6}, {256, 256, 128, 6}}; /* nx ny nz iterations */
/* NPB's verification values (ft.f): the checksums after each iteration, real and imaginary */
static const double ref[][6][2] = {
    {{5.546087004964e+02, 4.845363331978e+02},
     {5.546385409189e+02, 4.865304269511e+02},
     {5.546148406171e+02, 4.883910722336e+02},
     {5.545423607415e+02, 4.901273169046e+02},
     {5.544255039624e+02, 4.917475857993e+02},
     {5.542683411902e+02, 4.932597244941e+02}},
    {{5.673612178944e+02, 5.293246849175e+02},
     {5.631436885271e+02, 5.282149986629e+02},
     {5.594024089970e+02, 5.270996558037e+02},
     {5.560698047020e+02, 5.260027904925e+02},
     {5.530898991250e+02, 5.249400845633e+02},
     {5.504159734538e+02, 5.239212247086e+02}},
    {{5.046735008193e+02, 5.114047905510e+02},
     {5.059412319734e+02, 5.098809666433e+02},
     {5.069376896287e+02, 5.098144042213e+02},
     {5.077892868474e+02, 5.101336130759e+02},
     {5.085233095391e+02, 5.104914655194e+02},
     {5.091487099959e+02, 5.107917842803e+02}},
};
static const char *const transposes[] = {"alltoall", "pairwise", "nonblocking", NULL};
enum { TR_ALLTOALL, TR_PAIRWISE, TR_NONBLOCKING };

static const scope_param params[] = {
    {"class", SP_ENUM, "S", 0, 0, classes, "NPB problem class: S (64^3), W (128 x 128 x 32), A (256 x 256 x 128)"},
    {"transpose", SP_ENUM, "alltoall", 0, 0, transposes,
     "alltoall, pairwise (p - 1 MPI_Sendrecv), or nonblocking (one plane's MPI_Ialltoall during the next's FFTs)"},
};

#define FT_SEED 314159265ull
#define FT_ALPHA 1.0e-6
#define FT_BLOCK 16

typedef struct {
  int cls, mode, p, me, iters;
  size_t nx, ny, nz, nzl, nyl;
  cplx *u;             /* z slabs: u[zl][y][x] */
  cplx *s0, *w;        /* y slabs: [yl][z][x], the evolving spectrum and its copy */
  double *tw;          /* y slabs: the evolution factor */
  cplx *sb, *rb, *buf; /* transpose buffers (one slab each), a block of lines */
  MPI_Request *req;    /* one a plane (non-blocking transposes) */
  fft_plan px, py, pz;
  int op_tr, op_ck;
  int st_fft, st_pack, st_evolve, st_check; /* T_comp's steps */
  double sums[6][2];
} ft_state;

static void teardown(scope_ctx *c, void *st) {
  ft_state *s = st;
  (void)c;
  free(s->u), free(s->s0), free(s->w), free(s->tw), free(s->sb), free(s->rb), free(s->buf), free(s->req);
  fft_plan_free(&s->px), fft_plan_free(&s->py), fft_plan_free(&s->pz);
  free(s);
}

static const char *refuse(scope_ctx *c) {
  long cls = scope_param_get(c, "class"), p = c->nranks;
  if (dims[cls][2] % p || dims[cls][1] % p)
    return "FT's slabs need the process count to divide nz and ny (a power of two up to nz)";
  return NULL;
}

static int setup(scope_ctx *c, void **st) {
  ft_state *s = calloc(1, sizeof *s);
  *st = s;
  if (!s)
    return -1;
  s->cls = (int)scope_param_get(c, "class");
  s->mode = (int)scope_param_get(c, "transpose");
  s->p = c->nranks, s->me = c->rank;
  s->nx = (size_t)dims[s->cls][0], s->ny = (size_t)dims[s->cls][1], s->nz = (size_t)dims[s->cls][2];
  s->iters = dims[s->cls][3];
  s->nzl = s->nz / (size_t)s->p, s->nyl = s->ny / (size_t)s->p;
  size_t slab = s->nx * s->ny * s->nzl, most = s->nx > s->ny ? s->nx : s->ny;
  most = most > s->nz ? most : s->nz;
  s->u = malloc(sizeof(cplx) * slab), s->s0 = malloc(sizeof(cplx) * slab), s->w = malloc(sizeof(cplx) * slab);
  s->sb = malloc(sizeof(cplx) * slab), s->rb = malloc(sizeof(cplx) * slab);
  s->tw = malloc(sizeof(double) * slab), s->buf = malloc(sizeof(cplx) * most * FT_BLOCK);
  s->req = malloc(sizeof(MPI_Request) * (s->nzl > s->nyl ? s->nzl : s->nyl));
  if (!s->u || !s->s0 || !s->w || !s->sb || !s->rb || !s->tw || !s->buf || !s->req || fft_plan_make(&s->px, s->nx) ||
      fft_plan_make(&s->py, s->ny) || fft_plan_make(&s->pz, s->nz))
    return -1;
  s->op_tr = scope_op(c, "transpose", "coll.alltoall", (double)(s->nzl * s->nyl * s->nx * sizeof(cplx)));
  s->op_ck = scope_op(c, "checksum", "coll.allreduce", 2 * sizeof(double));
  s->st_fft = scope_step(c, "fft");
  s->st_pack = scope_step(c, "pack"); /* the transposes' local copies */
  s->st_evolve = scope_step(c, "evolve");
  s->st_check = scope_step(c, "checksum");
  c->sbuf_bytes = c->rbuf_bytes = 64;
  c->bytes_per_op = 0;
  double n = (double)(s->nx * s->ny * s->nz);
  c->extra[0].name = "nas_ops"; /* NPB's operation count for FT (ft.f) */
  c->extra[0].value = n * (14.8157 + 7.19641 * log(n) + (5.23518 + 7.21113 * log(n)) * s->iters);
  c->extra[1].name = "iterations";
  c->extra[1].value = s->iters;
  c->nextra = 2;
  snprintf(c->note, sizeof c->note,
           "class %s: %zu x %zu x %zu, %d iterations, z slabs over %d rank(s), %s transpose; FFT: SCOPE's radix-2",
           classes[s->cls], s->nx, s->ny, s->nz, s->iters, s->p, transposes[s->mode]);
  return 0;
}

/* The spectrum's frequency of index i of n: 0 .. n/2 - 1, then -n/2 .. -1. */
static double freq(size_t i, size_t n) {
  return (double)((long)((i + n / 2) % n) - (long)(n / 2));
}

/* Initial field (NPB's compute_initial_conditions) and the evolution factor: T_init. */
static void initial(ft_state *s) {
  size_t plane = s->nx * s->ny;
  for (size_t zl = 0; zl < s->nzl; zl++) {
    uint64_t x = npb_mul(FT_SEED, npb_pow(NPB_A, 2 * plane * (s->me * s->nzl + zl)));
    npb_fill(&x, NPB_A, (double *)(s->u + zl * plane), 2 * plane);
  }
  const double ap = -4.0 * FT_ALPHA * 3.14159265358979323846 * 3.14159265358979323846;
  for (size_t yl = 0; yl < s->nyl; yl++) {
    double fy = freq(s->me * s->nyl + yl, s->ny);
    for (size_t z = 0; z < s->nz; z++) {
      double fz = freq(z, s->nz), *t = s->tw + (yl * s->nz + z) * s->nx;
      for (size_t x = 0; x < s->nx; x++) {
        double fx = freq(x, s->nx);
        t[x] = exp(ap * (fx * fx + fy * fy + fz * fz));
      }
    }
  }
}

/* x and y FFTs of z plane zl of u. */
static void fft_xy(ft_state *s, size_t zl, int sign) {
  cplx *a = s->u + zl * s->nx * s->ny;
  fft_lines(&s->px, a, 1, s->nx, s->ny, s->buf, FT_BLOCK, sign);
  fft_lines(&s->py, a, s->nx, 1, s->nx, s->buf, FT_BLOCK, sign);
}

/* z FFTs of y plane yl of a (y-slab layout). */
static void fft_z(ft_state *s, cplx *a, size_t yl, int sign) {
  fft_lines(&s->pz, a + yl * s->nz * s->nx, s->nx, 1, s->nx, s->buf, FT_BLOCK, sign);
}

/* The exchange of one slab's worth of blocks (count complex numbers a rank pair). */
static void exchange(scope_ctx *c, ft_state *s, size_t count) {
  int n = (int)(2 * count);
  kernel_comm_from(c, s->op_tr, SCOPE_DEP_ALL);
  if (s->mode == TR_PAIRWISE) {
    memcpy(s->rb + (size_t)s->me * count, s->sb + (size_t)s->me * count, count * sizeof(cplx));
    for (int k = 1; k < s->p; k++) {
      int to = (s->me + k) % s->p, from = (s->me - k + s->p) % s->p;
      MPI_Sendrecv(s->sb + (size_t)to * count, n, MPI_DOUBLE, to, 41, s->rb + (size_t)from * count, n, MPI_DOUBLE, from,
                   41, c->comm, MPI_STATUS_IGNORE);
    }
  } else {
    MPI_Alltoall(s->sb, n, MPI_DOUBLE, s->rb, n, MPI_DOUBLE, c->comm);
  }
  scope_comm_end(c);
}

/* One plane's blocks on their way (the non-blocking transpose); the FFTs go on meanwhile. */
static void post(scope_ctx *c, ft_state *s, size_t k, size_t piece) {
  int n = (int)(2 * piece);
  size_t at = k * (size_t)s->p * piece;
  scope_comm_begin(c, -1, 0, NULL);
  MPI_Ialltoall(s->sb + at, n, MPI_DOUBLE, s->rb + at, n, MPI_DOUBLE, c->comm, &s->req[k]);
  scope_comm_end(c);
  int done;
  MPI_Testall((int)(k + 1), s->req, &done, MPI_STATUSES_IGNORE); /* progress for the earlier planes */
}

static void wait_all(scope_ctx *c, ft_state *s, size_t k) {
  kernel_comm_from(c, s->op_tr, SCOPE_DEP_ALL);
  MPI_Waitall((int)k, s->req, MPI_STATUSES_IGNORE);
  scope_comm_end(c);
}

/* Where rank r's block of local plane k sits in the transpose buffers: per rank, planes inside
 * (blocking: one exchange of the whole slab), or per plane, ranks inside (non-blocking: one
 * exchange a plane).  `plane`: complex numbers of one block of one plane; `piece`: of a rank. */
static size_t block_at(const ft_state *s, size_t k, int r, size_t plane, size_t piece) {
  return s->mode == TR_NONBLOCKING ? (k * (size_t)s->p + (size_t)r) * plane : (size_t)r * piece + k * plane;
}

/* u (z slabs, after its x and y FFTs) -> s0 (y slabs), then the z FFTs: the forward transform. */
static void forward(scope_ctx *c, ft_state *s) {
  size_t nx = s->nx, piece = s->nzl * s->nyl * nx, plane = s->nyl * nx;
  int P = s->p;
  for (size_t zl = 0; zl < s->nzl; zl++) {
    scope_compute(c, s->st_fft);
    fft_xy(s, zl, -1);
    scope_compute(c, s->st_pack);
    for (int r = 0; r < P; r++) {
      size_t at = block_at(s, zl, r, plane, piece);
      memcpy(s->sb + at, s->u + (zl * s->ny + (size_t)r * s->nyl) * nx, plane * sizeof(cplx));
    }
    if (s->mode == TR_NONBLOCKING)
      post(c, s, zl, plane);
  }
  if (s->mode == TR_NONBLOCKING)
    wait_all(c, s, s->nzl);
  else
    exchange(c, s, piece);
  scope_compute(c, s->st_pack);
  for (int r = 0; r < P; r++)
    for (size_t zl = 0; zl < s->nzl; zl++) {
      size_t from = block_at(s, zl, r, plane, piece);
      for (size_t yl = 0; yl < s->nyl; yl++)
        memcpy(s->s0 + (yl * s->nz + (size_t)r * s->nzl + zl) * nx, s->rb + from + yl * nx, nx * sizeof(cplx));
    }
  scope_compute(c, s->st_fft);
  for (size_t yl = 0; yl < s->nyl; yl++)
    fft_z(s, s->s0, yl, -1);
}

/* w (y slabs) -> its inverse z FFTs -> u (z slabs) -> the inverse x and y FFTs. */
static void inverse(scope_ctx *c, ft_state *s) {
  size_t nx = s->nx, piece = s->nzl * s->nyl * nx, plane = s->nzl * nx;
  int P = s->p;
  for (size_t yl = 0; yl < s->nyl; yl++) {
    scope_compute(c, s->st_fft);
    fft_z(s, s->w, yl, +1);
    scope_compute(c, s->st_pack);
    for (int r = 0; r < P; r++) {
      size_t at = block_at(s, yl, r, plane, piece);
      memcpy(s->sb + at, s->w + (yl * s->nz + (size_t)r * s->nzl) * nx, plane * sizeof(cplx));
    }
    if (s->mode == TR_NONBLOCKING)
      post(c, s, yl, plane);
  }
  if (s->mode == TR_NONBLOCKING)
    wait_all(c, s, s->nyl);
  else
    exchange(c, s, piece);
  scope_compute(c, s->st_pack);
  for (int r = 0; r < P; r++)
    for (size_t yl = 0; yl < s->nyl; yl++) {
      size_t from = block_at(s, yl, r, plane, piece);
      for (size_t zl = 0; zl < s->nzl; zl++)
        memcpy(s->u + (zl * s->ny + (size_t)r * s->nyl + yl) * nx, s->rb + from + zl * nx, nx * sizeof(cplx));
    }
  scope_compute(c, s->st_fft);
  for (size_t zl = 0; zl < s->nzl; zl++)
    fft_xy(s, zl, +1);
}

/* NPB's checksum of u after iteration `it` (1-based), summed over the ranks. */
static void checksum(scope_ctx *c, ft_state *s, int it) {
  double mine[2] = {0, 0};
  size_t z0 = (size_t)s->me * s->nzl;
  scope_compute(c, s->st_check);
  for (size_t j = 1; j <= 1024; j++) {
    size_t x = j % s->nx, y = (3 * j) % s->ny, z = (5 * j) % s->nz;
    if (z >= z0 && z < z0 + s->nzl) {
      const cplx *v = s->u + ((z - z0) * s->ny + y) * s->nx + x;
      mine[0] += v->re, mine[1] += v->im;
    }
  }
  kernel_comm_from(c, s->op_ck, SCOPE_DEP_ALL);
  MPI_Allreduce(mine, s->sums[it - 1], 2, MPI_DOUBLE, MPI_SUM, c->comm);
  scope_comm_end(c);
  double n = (double)(s->nx * s->ny * s->nz);
  s->sums[it - 1][0] /= n, s->sums[it - 1][1] /= n;
}

static void run(scope_ctx *c, void *st) {
  ft_state *s = st;
  size_t slab = s->nx * s->ny * s->nzl;
  initial(s);
  forward(c, s);
  for (int it = 1; it <= s->iters; it++) {
    scope_compute(c, s->st_evolve);
    for (size_t k = 0; k < slab; k++) { /* evolve: the spectrum decays by one more step */
      s->s0[k].re *= s->tw[k], s->s0[k].im *= s->tw[k];
      s->w[k] = s->s0[k];
    }
    inverse(c, s);
    checksum(c, s, it);
  }
}

static void fill(scope_ctx *c, void *st, uint64_t seed) {
  ft_state *s = st;
  (void)c, (void)seed;
  memset(s->sums, 0, sizeof s->sums); /* the inputs are NPB's: only the last result goes */
}

/* NPB's test: |checksum - reference| / |reference| <= 1e-12 at every iteration.  The worst
 * iteration's checksum, NPB's reference and the relative error go with the point; a failure is
 * said in NPB's terms. */
static size_t verify(scope_ctx *c, void *st, uint64_t seed, size_t *first) {
  ft_state *s = st;
  (void)seed;
  size_t bad = 0;
  double worst = -1, skew = 1 + npb_test_skew();
  int at = 0;
  for (int i = 0; i < s->iters; i++) {
    double re = s->sums[i][0] * skew, im = s->sums[i][1] * skew;
    double dr = re - ref[s->cls][i][0], di = im - ref[s->cls][i][1];
    double err = sqrt(dr * dr + di * di) / hypot(ref[s->cls][i][0], ref[s->cls][i][1]);
    if (!(err <= worst)) /* NaN counts as the worst */
      worst = err, at = i;
    if (!(err <= 1e-12) && !bad++)
      *first = (size_t)i;
  }
  if (c->rank != 0)
    return 0;
  const double *want = ref[s->cls][at];
  kernel_set_extra(c, "checksum_iteration", at + 1); /* the iteration of the worst relative error */
  kernel_set_extra(c, "checksum_re", s->sums[at][0] * skew);
  kernel_set_extra(c, "checksum_re_reference", want[0]);
  kernel_set_extra(c, "checksum_im", s->sums[at][1] * skew);
  kernel_set_extra(c, "checksum_im_reference", want[1]);
  kernel_set_extra(c, "verification_error", worst);
  kernel_set_extra(c, "verification_bound", 1e-12);
  if (bad)
    snprintf(c->check_message, sizeof c->check_message,
             "NPB verification failed: checksum %d = %.12e%+.12ei against NPB's %.12e%+.12ei "
             "(relative error %.2e, NPB's bound 1e-12)",
             at + 1, s->sums[at][0] * skew, s->sums[at][1] * skew, want[0], want[1], worst);
  return bad;
}

/* Five complex grids and a real one, split over the ranks (16 bytes a complex point). */
static double memory(scope_ctx *c) {
  const int *d = dims[scope_param_get(c, "class")];
  snprintf(c->note, sizeof c->note, "5 complex grids and a real one, split over the ranks");
  return 88.0 * d[0] * d[1] * d[2];
}

SCOPE_PHASED(app_ft, "app.ft", "app",
             "NAS FT: 3-D FFT heat equation, slab transposes (alltoall, pairwise or overlapped); NPB's checksums",
             "time of one whole FT (initial field, forward FFT, all iterations), last rank's completion", 1);
