/* Shared by the collective tests: the size is the bytes each rank contributes (one block);
 * rooted operations rotate the root with -p root=rotate (every rank takes a turn, as
 * SKaMPI and IMB's root shift do) or keep a fixed rank. */
#ifndef SCOPE_COLL_H
#define SCOPE_COLL_H
#include <stdlib.h>
#include <string.h>

#include "../core/pattern.h"
#include "../core/stats.h"
#include "../core/timer.h"
#include "../scope.h"

static const char *const coll_roots[] = {"0", "rotate", NULL};
static const char *const coll_nb_modes[] = {"no", "yes", "overlap", NULL};
static const char *const coll_apis[] = {"standard", "persistent", NULL};
#define SCOPE_PARAM_NB                                                                                                 \
  {                                                                                                                    \
    "nonblocking", SP_ENUM, "no", 0, 0, coll_nb_modes,                                                                 \
        "no: the blocking call; yes: MPI_I... + wait; overlap: + computation of t_pure between start and wait"         \
  }
#define SCOPE_PARAM_ROOT                                                                                               \
  { "root", SP_ENUM, "rotate", 0, 0, coll_roots, "root rank: 0, or rotate through all ranks" }
/* MPI-4 persistent collectives (MPI_Bcast_init ...): made once per root and buffers, then
 * MPI_Start + MPI_Wait each repetition, as OMB's osu_*_persistent. */
#define SCOPE_PARAM_API                                                                                                \
  {                                                                                                                    \
    "api", SP_ENUM, "standard", 0, 0, coll_apis,                                                                       \
        "standard calls, or MPI-4 persistent requests (MPI_..._init once, MPI_Start + MPI_Wait each call)"             \
  }

/* How an operation is called: the blocking call, the non-blocking one (MPI_I...), or the
 * persistent request made (MPI_..._init). */
enum { COLL_CALL, COLL_START, COLL_INIT };
typedef void (*coll_op)(scope_ctx *c, void *st, int how, MPI_Request *req);

/* One collective in its three forms, from its arguments written once:
 * COLL_DO(how, req, Bcast, Ibcast, buf, n, type, root, comm). */
#ifndef SCOPE_SIM
#define COLL_DO(how, req, Name, IName, ...)                                                                            \
  ((how) == COLL_CALL    ? MPI_##Name(__VA_ARGS__)                                                                     \
   : (how) == COLL_START ? MPI_##IName(__VA_ARGS__, (req))                                                             \
                         : MPI_##Name##_init(__VA_ARGS__, MPI_INFO_NULL, (req)))
#else /* SimGrid's SMPI has no MPI-4 persistent collectives: api=persistent is a skip (below) */
#define COLL_DO(how, req, Name, IName, ...)                                                                            \
  ((how) == COLL_CALL ? MPI_##Name(__VA_ARGS__) : (how) == COLL_START ? MPI_##IName(__VA_ARGS__, (req)) : MPI_ERR_OTHER)
#endif

/* A persistent request and the buffers it is bound to. */
typedef struct {
  MPI_Request req;
  const char *s, *r;
} coll_bound;

/* Reductions' element type (-p dtype, coll_sum.h); 4-byte words unless a test reads dtype. */
typedef struct {
  MPI_Datatype type;
  size_t size; /* bytes an element */
  int kind;    /* COLL_U32 ... COLL_DOUBLE */
} coll_dtype;

typedef struct {
  long iter;
  int root;               /* root of the last call */
  uint64_t compute_ticks; /* nonblocking=overlap: computation between start and wait */
  coll_op op;             /* the test's operation, for coll_run and coll_start */
  int nb;                 /* nonblocking: 0 no, 1 yes, 2 overlap */
  int rotate;             /* root=rotate */
  int persistent;         /* api=persistent */
  int init_root;          /* the root a request is being made for (COLL_INIT) */
  int inplace;            /* -p inplace=yes: MPI_IN_PLACE, the input in rbuf */
  coll_dtype dt;
  int byte_span;     /* 1-byte sums: elements are below this (coll_sum.h) */
  coll_bound *bound; /* api=persistent: a request per root (one when the root is fixed) */
  int nbound;
} coll_state;

/* The parameters every collective shares, read by name once per point. */
static inline int coll_read_params(scope_ctx *c, coll_state *s) {
  s->nb = scope_has_param(c, "nonblocking") ? (int)scope_param_get(c, "nonblocking") : 0;
  s->rotate = scope_has_param(c, "root") && scope_param_get(c, "root") == 1;
  s->persistent = scope_has_param(c, "api") && scope_param_get(c, "api") == 1;
  s->inplace = scope_has_param(c, "inplace") && scope_param_get(c, "inplace") == 1;
  c->cycle = s->rotate ? c->nranks : 1; /* a sample: every root once (measure.c) */
  s->dt = (coll_dtype){MPI_UINT32_T, 4, 0};
  if (s->persistent && s->nb)
    c->skip = "persistent requests are started and waited for: -p nonblocking applies to api=standard";
#ifdef SCOPE_SIM
  if (s->persistent)
    c->skip = "SimGrid's SMPI has no MPI-4 persistent collectives (api=persistent)";
#endif
  if (!s->persistent)
    return 0;
  s->nbound = s->rotate ? c->nranks : 1;
  s->bound = calloc((size_t)s->nbound, sizeof *s->bound);
  if (!s->bound)
    return -1;
  for (int i = 0; i < s->nbound; i++)
    s->bound[i].req = MPI_REQUEST_NULL;
  return 0;
}

static inline void coll_release(coll_state *s) {
  for (int i = 0; i < s->nbound; i++)
    if (s->bound[i].req != MPI_REQUEST_NULL)
      MPI_Request_free(&s->bound[i].req);
  free(s->bound);
}

static inline int coll_setup_state(scope_ctx *c, void **st, coll_op op) {
  coll_state *s = calloc(1, sizeof *s);
  *st = s;
  if (!s)
    return -1;
  s->op = op;
  return coll_read_params(c, s);
}

/* A paired repetition's two variants share a root: rotating per repetition would give the
 * reference and the measured variant different roots (with 2 ranks, always different ones). */
static inline int coll_next_root(scope_ctx *c, coll_state *s) {
  if (c->paired && c->variant == 1)
    return s->root;
  s->root = s->rotate ? (int)(s->iter % c->nranks) : 0;
  s->iter++;
  return s->root;
}

/* The root of this call: the next one, or the one a persistent request is made for. */
static inline int coll_root(scope_ctx *c, void *st, int how) {
  coll_state *s = st;
  return how == COLL_INIT ? s->init_root : coll_next_root(c, s);
}

/* api=persistent: start the request of this call's root, made again where the buffers moved
 * (--offcache cycles them; every rank moves alike, so every rank makes it at the same call). */
static inline void coll_persistent(scope_ctx *c, coll_state *s) {
  int root = coll_next_root(c, s);
  coll_bound *b = &s->bound[s->nbound > 1 ? root : 0];
  if (b->req == MPI_REQUEST_NULL || b->s != c->sbuf || b->r != c->rbuf) {
    if (b->req != MPI_REQUEST_NULL)
      MPI_Request_free(&b->req);
    s->init_root = root;
    s->op(c, s, COLL_INIT, &b->req);
    b->s = c->sbuf;
    b->r = c->rbuf;
  }
  MPI_Start(&b->req);
  MPI_Wait(&b->req, MPI_STATUS_IGNORE);
}

/* Vector variants: odd ranks contribute half a block, so uneven counts and displacements
 * are exercised (and a wrong displacement fails the check); -p blocks=even gives every rank a
 * whole block, as OMB's v-collectives do. */
static const char *const coll_blocks[] = {"uneven", "even", NULL};
#define SCOPE_PARAM_BLOCKS                                                                                             \
  { "blocks", SP_ENUM, "uneven", 0, 0, coll_blocks, "uneven: odd ranks' blocks are half; even: all whole (as OMB)" }

static inline int coll_vcount(size_t n, int r, int even) {
  return (int)(r % 2 && !even ? n / 2 : n);
}

static inline void coll_vlayout(size_t n, int p, int *counts, int *displs, int even) {
  int at = 0;
  for (int r = 0; r < p; r++) {
    counts[r] = coll_vcount(n, r, even);
    displs[r] = at;
    at += counts[r];
  }
}

/* SCOPE's effective bandwidth (thesis §6.5.4): the aggregated payload of all transfers
 * between distinct ranks in one call, over the call's time.  Each collective's setup puts that
 * payload in bytes_per_op, so the record's bandwidth is B_eff and there is one definition. */
static inline double coll_vsum(size_t n, int p, int even) {
  double sum = 0;
  for (int r = 0; r < p; r++)
    sum += coll_vcount(n, r, even);
  return sum;
}

/* v-state: counts and displacements for p ranks */
typedef struct {
  coll_state base;
  int *counts, *displs, *scounts, *sdispls;
  int even; /* blocks=even */
} coll_vstate;

static inline int coll_vsetup(scope_ctx *c, void **st, coll_op op) {
  coll_vstate *s = calloc(1, sizeof *s);
  if (!s)
    return -1;
  s->base.op = op;
  *st = s;
  if (coll_read_params(c, &s->base))
    return -1;
  s->counts = calloc((size_t)c->nranks, sizeof(int));
  s->displs = calloc((size_t)c->nranks, sizeof(int));
  s->scounts = calloc((size_t)c->nranks, sizeof(int));
  s->sdispls = calloc((size_t)c->nranks, sizeof(int));
  if (!s->counts || !s->displs || !s->scounts || !s->sdispls)
    return -1;
  s->even = scope_has_param(c, "blocks") && scope_param_get(c, "blocks") == 1;
  coll_vlayout(c->size, c->nranks, s->counts, s->displs, s->even);
  return 0;
}

/* gatherv, scatterv: every block but the root's crosses; a rotating root averages over roots. */
static inline double coll_rooted_vpayload(const scope_ctx *c, const coll_vstate *s) {
  double all = coll_vsum(c->size, c->nranks, s->even);
  return s->base.rotate ? all * (c->nranks - 1) / c->nranks : all - coll_vcount(c->size, 0, s->even);
}

static inline void coll_vfree(scope_ctx *c, void *st) {
  coll_vstate *s = st;
  (void)c;
  coll_release(&s->base);
  free(s->counts);
  free(s->displs);
  free(s->scounts);
  free(s->sdispls);
  free(s);
}

/* Non-blocking versions and overlap, as OSU's non-blocking collective benchmarks define it:
 * overlap = 1 - (t_total - t_compute) / t_pure, where t_pure is start + wait with nothing
 * between and t_total is start + a computation of t_compute (a spin on the clock, no MPI
 * calls) + wait.  OSU measures the two in separate loops; here they are the two variants of
 * paired repetitions (scope.h), timed alike in one window-timed loop: variant 0 is t_pure,
 * variant 1 the point's own samples.  With nonblocking=yes the variants are the same
 * operation, so the overlap it reports is 0 up to noise: the check of the method. */
static inline void coll_call(scope_ctx *c, void *st, coll_op op) {
  coll_state *s = st; /* every collective's state starts with a coll_state */
  if (s->persistent) {
    coll_persistent(c, s);
    return;
  }
  if (!s->nb) {
    op(c, st, COLL_CALL, NULL);
    return;
  }
  MPI_Request req;
  op(c, st, COLL_START, &req);
  if (s->compute_ticks && c->variant == 1) {
    uint64_t t0 = timer_now();
    while (timer_now() - t0 < s->compute_ticks)
      ;
  }
  MPI_Wait(&req, MPI_STATUS_IGNORE);
}

/* The computation to insert: the median of 51 untimed start + wait, the largest over ranks
 * (so every rank computes for the same time); recorded as extra.compute_us.  It only sizes
 * the computation: t_pure itself is measured in the timed loop. */
static inline void coll_calibrate(scope_ctx *c, void *st, coll_op op) {
  coll_state *s = st;
  if (!s->nb)
    return;
  c->paired = 1;
  enum { N = 51 };
  double t[N], mine, pure;
  for (int i = 0; i < N; i++) {
    MPI_Barrier(c->comm);
    uint64_t a = timer_now();
    MPI_Request req;
    op(c, st, COLL_START, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    t[i] = (double)(timer_now() - a) * timer_tick_ns();
  }
  stats_sort(t, N);
  mine = t[N / 2];
  MPI_Allreduce(&mine, &pure, 1, MPI_DOUBLE, MPI_MAX, c->comm);
  double compute = s->nb == 2 ? pure : 0;
  s->compute_ticks = (uint64_t)(compute / timer_tick_ns());
  c->extra[0].name = "compute_us";
  c->extra[0].value = (double)s->compute_ticks * timer_tick_ns() * 1e-3;
  c->nextra = 1;
}

/* The descriptors' run and start hooks: the operation the test's setup stored. */
static inline void coll_run(scope_ctx *c, void *st) {
  coll_call(c, st, ((coll_state *)st)->op);
}

static inline void coll_start(scope_ctx *c, void *st) {
  coll_calibrate(c, st, ((coll_state *)st)->op);
}

#ifndef COLL_FILL
#define COLL_FILL NULL /* reductions: coll_sum.h's */
#endif

/* A collective's descriptor: every collective is window-timed over --procs, needs two ranks
 * and uses the shared start and run hooks; the file defines setup and verify. */
#define SCOPE_COLLECTIVE(ID, NAME, SIZED, SUMMARY, PARAMS, TEARDOWN, ...)                                              \
  const scope_test test_##ID = {.name = NAME,                                                                          \
                                .level = "coll",                                                                       \
                                .summary = SUMMARY,                                                                    \
                                .measures = "global completion time (last exit - common start)",                       \
                                .min_ranks = 2,                                                                        \
                                .sized = SIZED,                                                                        \
                                .timing = SCOPE_TIMING_WINDOW,                                                         \
                                .roles = {__VA_ARGS__},                                                                \
                                SCOPE_PARAMS(PARAMS),                                                                  \
                                .setup = setup,                                                                        \
                                .fill = COLL_FILL,                                                                     \
                                .start = coll_start,                                                                   \
                                .run = coll_run,                                                                       \
                                .verify = verify,                                                                      \
                                .teardown = TEARDOWN}

static inline void coll_free(scope_ctx *c, void *st) {
  (void)c;
  coll_release(st);
  free(st);
}

#endif
