/* Non-blocking collectives and their overlap (as OSU's non-blocking collective benchmarks
 * define it): t_pure is the time of start + wait with nothing between; with overlap=yes a
 * computation of t_pure (a spin on the clock, no MPI calls) is inserted between start and
 * wait, and the front end reports
 *     overlap = 1 - (t_total - t_compute) / t_pure        (clamped to 0 .. 1)
 * 1 means the operation progressed entirely behind the computation, 0 not at all. */
#ifndef SCOPE_COLL_NB_H
#define SCOPE_COLL_NB_H
#include "../core/stats.h"
#include "../core/timer.h"
#include "coll.h"

static const scope_param nb_params[] = {
    {"overlap", SP_BOOL, "no", 0, 1, scope_bool_choices, "insert computation of t_pure between start and wait"},
};

typedef struct {
  double compute_ns;
  uint64_t compute_ticks;
} nb_state;

typedef void (*nb_start_fn)(scope_ctx *c, MPI_Request *req);

static inline int nb_setup(void **st) {
  nb_state *s = calloc(1, sizeof *s);
  *st = s;
  return s ? 0 : -1;
}

static inline void nb_spin(uint64_t ticks) {
  uint64_t t0 = timer_now();
  while (timer_now() - t0 < ticks)
    ;
}

static inline void nb_run(scope_ctx *c, void *st, nb_start_fn start) {
  nb_state *s = st;
  MPI_Request req;
  start(c, &req);
  if (s->compute_ticks)
    nb_spin(s->compute_ticks);
  MPI_Wait(&req, MPI_STATUS_IGNORE);
}

/* t_pure: median of 51 untimed start + wait, the largest over ranks, so every rank computes
 * for the same time. */
static inline void nb_calibrate(scope_ctx *c, void *st, nb_start_fn start) {
  nb_state *s = st;
  enum { N = 51 };
  double t[N], mine, pure;
  for (int i = 0; i < N; i++) {
    MPI_Barrier(c->comm);
    uint64_t a = timer_now();
    MPI_Request req;
    start(c, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    t[i] = (double)(timer_now() - a) * timer_tick_ns();
  }
  stats_sort(t, N);
  mine = t[N / 2];
  MPI_Allreduce(&mine, &pure, 1, MPI_DOUBLE, MPI_MAX, c->comm);
  s->compute_ns = c->p[0] ? pure : 0;
  s->compute_ticks = (uint64_t)(s->compute_ns / timer_tick_ns());
  c->extra[0].name = "pure_us";
  c->extra[0].value = pure * 1e-3;
  c->extra[1].name = "compute_us";
  c->extra[1].value = s->compute_ns * 1e-3;
  c->nextra = 2;
}

#endif
