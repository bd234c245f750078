/* Phase accounts of kernel timing (see scope.h for the model and phases.h for the flow).
 * Inside a repetition only local clock reads are made and appended to this rank's arrays;
 * the exchange that measures idle time runs after the chunk, outside the timed windows. */
#include "phases.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_clock.h"

/* Communications logged per chunk and rank; beyond it the chunk's idle is not measured
 * (its whole communication time counts as T_comm) and the record says so. */
#define MAX_EVENTS (1u << 18)

typedef struct {
  double in_g; /* entry, global clock (ns) */
  double dur;  /* entry to exit (ns) */
  int rep, op, ndeps;
  int deps[SCOPE_MAX_DEPS];
} comm_event;

typedef struct {
  const char *name, *test;
  double bytes;
  double calls, comm, idle; /* sums over the kept repetitions, ns */
} op_acct;

struct scope_phases {
  int on, cur, in_comm;
  double mark; /* local ns: when the current phase (or communication) began */
  comm_event open;
  double open_local; /* the open communication's entry, local ns */
  /* this chunk */
  double (*acc)[SCOPE_NPHASES + SCOPE_MAX_STEPS]; /* per repetition: its phases, then its steps */
  size_t nrep, repcap;
  comm_event *ev;
  size_t nev, evcap;
  int overflow;
  /* kept repetitions */
  double sum[SCOPE_NPHASES];
  long kept;
  int unmeasured; /* chunks whose idle could not be measured */
  op_acct op[SCOPE_MAX_OPS];
  int nops;
  /* named steps of T_comp: the kept repetitions' sums (each repetition's are in acc) */
  const char *step_name[SCOPE_MAX_STEPS];
  double step_sum[SCOPE_MAX_STEPS];
  int nsteps, step;
  /* rank 0, after phases_gather: nranks rows of SCOPE_NPHASES sums, of nops x 3, of nsteps */
  int nranks;
  double *all_sum, *all_op, *all_step;
  long all_unmeasured;
  double late_ns; /* test hook: this rank computes this long first in every repetition */
};

static void *grow_or_die(void *p, size_t n, size_t each) {
  void *q = realloc(p, n * each);
  if (!q) {
    fprintf(stderr, "scope-engine: error: out of memory for phase accounts\n");
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
  return q;
}

/* SCOPE_TEST_LATE="rank:us" makes that world rank spend `us` computing at the start of every
 * repetition, so its partners' idle time has a known size (tests/test_kernels.py). */
static double late_of_me(void) {
  const char *spec = getenv("SCOPE_TEST_LATE");
  int rank, who;
  double us;
  if (!spec || sscanf(spec, "%d:%lf", &who, &us) != 2)
    return 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank == who ? us * 1e3 : 0;
}

struct scope_phases *phases_new(void) {
  struct scope_phases *ph = calloc(1, sizeof *ph);
  if (!ph) {
    fprintf(stderr, "scope-engine: error: out of memory for phase accounts\n");
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
  ph->late_ns = late_of_me();
  ph->step = -1;
  return ph;
}

void phases_free(struct scope_phases *ph) {
  if (!ph)
    return;
  free(ph->acc);
  free(ph->ev);
  free(ph->all_sum);
  free(ph->all_op);
  free(ph->all_step);
  free(ph);
}

void phases_reset_ops(struct scope_phases *ph) {
  if (!ph)
    return;
  ph->nops = ph->nsteps = 0;
  memset(ph->step_sum, 0, sizeof ph->step_sum);
}

int scope_step(scope_ctx *c, const char *name) {
  struct scope_phases *ph = c->phases;
  if (!ph || ph->nsteps == SCOPE_MAX_STEPS)
    return -1;
  ph->step_name[ph->nsteps] = name;
  return ph->nsteps++;
}

int scope_op(scope_ctx *c, const char *name, const char *test, double bytes) {
  struct scope_phases *ph = c->phases;
  if (!ph || ph->nops == SCOPE_MAX_OPS)
    return -1;
  ph->op[ph->nops] = (op_acct){name, test, bytes, 0, 0, 0};
  return ph->nops++;
}

/* Charges the time since the mark to the current phase. */
static double charge_at(struct scope_phases *ph, double now) {
  ph->acc[ph->nrep][ph->cur] += now - ph->mark;
  if (ph->cur == SCOPE_PH_COMP && ph->step >= 0)
    ph->acc[ph->nrep][SCOPE_NPHASES + ph->step] += now - ph->mark;
  ph->mark = now;
  return now;
}

static double charge(struct scope_phases *ph) {
  return charge_at(ph, scope_clock_local_ns(engine_clock));
}

void scope_phase(scope_ctx *c, int phase) {
  struct scope_phases *ph = c->phases;
  if (!ph || !ph->on || ph->in_comm)
    return;
  charge(ph);
  ph->cur = phase == SCOPE_PH_COMP ? SCOPE_PH_COMP : SCOPE_PH_INIT;
  ph->step = -1;
}

void scope_compute(scope_ctx *c, int step) {
  struct scope_phases *ph = c->phases;
  if (!ph || !ph->on || ph->in_comm)
    return;
  charge(ph);
  ph->cur = SCOPE_PH_COMP;
  ph->step = step >= 0 && step < ph->nsteps ? step : -1;
}

void scope_comm_begin(scope_ctx *c, int op, int ndeps, const int *deps) {
  struct scope_phases *ph = c->phases;
  if (!ph || !ph->on || ph->in_comm)
    return;
  double now = charge(ph);
  ph->in_comm = 1;
  ph->open_local = now;
  ph->open.in_g = scope_clock_to_global_ns(engine_clock, now);
  ph->open.rep = (int)ph->nrep;
  ph->open.op = op;
  ph->open.ndeps = ndeps < 0 ? SCOPE_UNMATCHED : (ndeps > SCOPE_MAX_DEPS ? SCOPE_MAX_DEPS : ndeps);
  for (int k = 0; k < ph->open.ndeps; k++)
    ph->open.deps[k] = deps[k];
}

void scope_comm_end(scope_ctx *c) {
  struct scope_phases *ph = c->phases;
  if (!ph || !ph->on || !ph->in_comm)
    return;
  double now = scope_clock_local_ns(engine_clock);
  ph->open.dur = now - ph->open_local;
  ph->acc[ph->nrep][SCOPE_PH_COMM] += ph->open.dur;
  ph->mark = now;
  ph->in_comm = 0;
  if (ph->nev == MAX_EVENTS) {
    ph->overflow = 1;
    return;
  }
  if (ph->nev == ph->evcap) {
    ph->evcap = ph->evcap ? 2 * ph->evcap : 1024;
    ph->ev = grow_or_die(ph->ev, ph->evcap, sizeof *ph->ev);
  }
  ph->ev[ph->nev++] = ph->open;
}

void phases_rep_begin(struct scope_phases *ph, double now) {
  if (ph->nrep == ph->repcap) {
    ph->repcap = ph->repcap ? 2 * ph->repcap : 64;
    ph->acc = grow_or_die(ph->acc, ph->repcap, sizeof *ph->acc);
  }
  memset(ph->acc[ph->nrep], 0, sizeof ph->acc[0]);
  ph->on = 1;
  ph->cur = SCOPE_PH_INIT;
  ph->step = -1;
  ph->in_comm = 0;
  ph->mark = now;
  if (ph->late_ns > 0) {
    ph->cur = SCOPE_PH_COMP;
    for (double end = ph->mark + ph->late_ns; scope_clock_local_ns(engine_clock) < end;)
      ;
    charge(ph);
    ph->cur = SCOPE_PH_INIT;
  }
}

void phases_rep_end(struct scope_phases *ph, double now) {
  if (ph->in_comm) /* a communication left open counts as one to its end */
    ph->acc[ph->nrep][SCOPE_PH_COMM] += now - ph->mark;
  else
    charge_at(ph, now);
  ph->on = 0;
  ph->nrep++;
}

/* Idle of event e of this rank: how long it was in the communication before the last rank it
 * waits for entered the same one (clipped to the communication's own time). */
static double idle_of(const comm_event *e, size_t idx, const double *in, size_t n, int nranks) {
  double latest = -INFINITY;
  if (e->ndeps == 1 && e->deps[0] == SCOPE_DEP_ALL) {
    for (int r = 0; r < nranks; r++)
      latest = fmax(latest, in[(size_t)r * n + idx]);
  } else {
    for (int k = 0; k < e->ndeps; k++)
      if (e->deps[k] >= 0 && e->deps[k] < nranks)
        latest = fmax(latest, in[(size_t)e->deps[k] * n + idx]);
  }
  return fmin(fmax(latest - e->in_g, 0.0), e->dur);
}

void phases_chunk_end(struct scope_phases *ph, MPI_Comm comm, int measuring, const unsigned char *keep) {
  int nranks;
  MPI_Comm_size(comm, &nranks);
  /* Matched communications are the same on every rank, event k of one being event k of all;
   * unmatched ones (SCOPE_UNMATCHED: a one-sided get) have no idle and may differ by rank. */
  size_t n = 0;
  for (size_t k = 0; k < ph->nev; k++)
    n += ph->ev[k].ndeps >= 0;
  long mine[2] = {ph->overflow ? -1 : (long)n, ph->overflow ? -1 : -(long)n}, agreed[2];
  MPI_Allreduce(mine, agreed, 2, MPI_LONG, MPI_MIN, comm);
  int exchange = agreed[0] >= 0 && agreed[0] == -agreed[1];
  double *in = NULL, *own = NULL;
  if (exchange && n) {
    own = grow_or_die(NULL, n, sizeof *own);
    in = grow_or_die(NULL, n * (size_t)nranks, sizeof *in);
    for (size_t k = 0, i = 0; k < ph->nev; k++)
      if (ph->ev[k].ndeps >= 0)
        own[i++] = ph->ev[k].in_g;
    MPI_Allgather(own, (int)n, MPI_DOUBLE, in, (int)n, MPI_DOUBLE, comm);
  }
  for (size_t k = 0, i = 0; k < ph->nev && measuring; k++) {
    const comm_event *e = &ph->ev[k];
    double idle = 0.0;
    if (e->ndeps >= 0)
      idle = exchange ? idle_of(e, i++, in, n, nranks) : 0.0;
    ph->acc[e->rep][SCOPE_PH_COMM] -= idle;
    ph->acc[e->rep][SCOPE_PH_IDLE] += idle;
    if (e->op >= 0 && e->op < ph->nops && (!keep || keep[e->rep])) {
      ph->op[e->op].calls += 1;
      ph->op[e->op].comm += e->dur - idle;
      ph->op[e->op].idle += idle;
    }
  }
  if (measuring) { /* the repetitions the window rules kept: the same as the point's samples */
    for (size_t r = 0; r < ph->nrep; r++) {
      if (keep && !keep[r])
        continue;
      for (int q = 0; q < SCOPE_NPHASES; q++)
        ph->sum[q] += ph->acc[r][q];
      for (int q = 0; q < ph->nsteps; q++)
        ph->step_sum[q] += ph->acc[r][SCOPE_NPHASES + q];
      ph->kept++;
    }
    ph->unmeasured += !exchange && n;
  }
  free(own);
  free(in);
  ph->nrep = ph->nev = 0;
  ph->overflow = 0;
}

void phases_gather(struct scope_phases *ph, MPI_Comm comm) {
  int rank;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &ph->nranks);
  enum { OPW = 3 };
  enum { STEPS_AT = SCOPE_NPHASES + 1 + SCOPE_MAX_OPS * OPW };
  double row[STEPS_AT + SCOPE_MAX_STEPS] = {0};
  for (int q = 0; q < ph->nsteps; q++)
    row[STEPS_AT + q] = ph->kept ? ph->step_sum[q] / (double)ph->kept : NAN;
  for (int q = 0; q < SCOPE_NPHASES; q++)
    row[q] = ph->kept ? ph->sum[q] / (double)ph->kept : NAN;
  row[SCOPE_NPHASES] = ph->unmeasured;
  for (int o = 0; o < ph->nops; o++) {
    double calls = ph->op[o].calls;
    row[SCOPE_NPHASES + 1 + OPW * o] = ph->kept ? calls / (double)ph->kept : 0;
    row[SCOPE_NPHASES + 2 + OPW * o] = calls ? ph->op[o].comm / calls : NAN;
    row[SCOPE_NPHASES + 3 + OPW * o] = calls ? ph->op[o].idle / calls : NAN;
  }
  int width = (int)(sizeof row / sizeof row[0]);
  double *all = rank == 0 ? grow_or_die(NULL, (size_t)ph->nranks * (size_t)width, sizeof(double)) : NULL;
  MPI_Gather(row, width, MPI_DOUBLE, all, width, MPI_DOUBLE, 0, comm);
  if (rank != 0)
    return;
  free(ph->all_sum);
  free(ph->all_op);
  free(ph->all_step);
  ph->all_step = grow_or_die(NULL, (size_t)ph->nranks * SCOPE_MAX_STEPS, sizeof(double));
  ph->all_sum = grow_or_die(NULL, (size_t)ph->nranks * SCOPE_NPHASES, sizeof(double));
  ph->all_op = grow_or_die(NULL, (size_t)ph->nranks * SCOPE_MAX_OPS * OPW, sizeof(double));
  ph->all_unmeasured = 0;
  for (int r = 0; r < ph->nranks; r++) {
    const double *x = all + (size_t)r * (size_t)width;
    memcpy(ph->all_sum + (size_t)r * SCOPE_NPHASES, x, SCOPE_NPHASES * sizeof(double));
    ph->all_unmeasured += (long)x[SCOPE_NPHASES];
    memcpy(ph->all_op + (size_t)r * SCOPE_MAX_OPS * OPW, x + SCOPE_NPHASES + 1, SCOPE_MAX_OPS * OPW * sizeof(double));
    memcpy(ph->all_step + (size_t)r * SCOPE_MAX_STEPS, x + STEPS_AT, SCOPE_MAX_STEPS * sizeof(double));
  }
  free(all);
}

static void rank_array(json_w *w, const char *key, const double *base, size_t stride, int nranks, double scale) {
  jw_key(w, key);
  jw_arr_begin(w);
  for (int r = 0; r < nranks; r++)
    jw_num(w, base[(size_t)r * stride] * scale);
  jw_arr_end(w);
}

void phases_write(const struct scope_phases *ph, json_w *w) {
  static const char *const names[SCOPE_NPHASES] = {"init", "comp", "comm", "idle"};
  jw_key(w, "phases");
  jw_obj_begin(w);
  jw_kstr(w, "unit", "us");
  jw_kstr(w, "statistic", "mean over the measured repetitions, per rank");
  jw_kint(w, "repetitions", ph->kept);
  jw_kbool(w, "idle_measured", ph->all_unmeasured == 0);
  for (int q = 0; q < SCOPE_NPHASES; q++)
    rank_array(w, names[q], ph->all_sum + q, SCOPE_NPHASES, ph->nranks, 1e-3);
  if (ph->nsteps) { /* T_comp's named steps, per rank */
    jw_key(w, "steps");
    jw_obj_begin(w);
    for (int q = 0; q < ph->nsteps; q++)
      rank_array(w, ph->step_name[q], ph->all_step + q, SCOPE_MAX_STEPS, ph->nranks, 1e-3);
    jw_obj_end(w);
  }
  jw_obj_end(w);
  if (!ph->nops)
    return;
  jw_key(w, "ops");
  jw_arr_begin(w);
  size_t stride = SCOPE_MAX_OPS * 3;
  for (int o = 0; o < ph->nops; o++) {
    jw_obj_begin(w);
    jw_kstr(w, "name", ph->op[o].name);
    jw_kstr(w, "test", ph->op[o].test);
    jw_knum(w, "bytes", ph->op[o].bytes);
    jw_knum(w, "calls", ph->all_op[3 * (size_t)o]);
    rank_array(w, "comm_us", ph->all_op + 3 * (size_t)o + 1, stride, ph->nranks, 1e-3);
    rank_array(w, "idle_us", ph->all_op + 3 * (size_t)o + 2, stride, ph->nranks, 1e-3);
    jw_obj_end(w);
  }
  jw_arr_end(w);
}
