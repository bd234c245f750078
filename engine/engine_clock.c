/* The engine's global clock: one object of the clock library (clock/scope_clock.h), and the
 * `clock` record rank 0 writes of it at a synchronisation and at the launch's end. */
#include "engine_clock.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

scope_clock *engine_clock;

void engine_clock_open(const char *method, int per_rank, double span_s) {
  scope_clock_options o = {.method = method, .per_rank = per_rank, .span_s = span_s};
  if (scl_open(MPI_COMM_WORLD, 0, timer_selected(), timer_tick_ns(), &o, &engine_clock) != SCOPE_CLOCK_OK)
    MPI_Abort(MPI_COMM_WORLD, 3); /* the option table admits only the methods' names: out of memory */
}

/* A domain's members time with its leader's calibration of their one counter, from the
 * synchronisation that found the domains on. */
static void adopt_tick(void) {
  timer_select(engine_clock->kind, engine_clock->tick_ns);
}

void engine_clock_sync(void) {
  scope_clock_sync(engine_clock);
  adopt_tick();
}

int engine_clock_keep(double bound_ns, double ahead_s) {
  if (scope_clock_keep(engine_clock, bound_ns, ahead_s) != 1)
    return 0;
  adopt_tick();
  return 1;
}

/* per rank: map (5), tick, injected offset, drift and base, leader, parent, depth, why,
 * check round trip, exchanges */
enum {
  F_A,
  F_B,
  F_G0,
  F_E0,
  F_K,
  F_TICK,
  F_IOFF,
  F_IDRIFT,
  F_IBASE,
  F_LEADER,
  F_PARENT,
  F_DEPTH,
  F_WHY,
  F_RTT,
  F_EX,
  NF
};

/* This rank's local time at raw counter value `ticks` from its gathered parameters. */
static double local_at(const double *m, double ticks) {
  double t = ticks * m[F_TICK];
  return t + m[F_IOFF] + m[F_IDRIFT] * (t - m[F_IBASE]);
}

static const char *alone_why[] = {
    [SHARE_OK] = "the only rank on its kernel",
    [SHARE_FORCED] = "--clock-domain rank: synchronised as if on a host of its own",
    [SHARE_INJECTED] = "SCOPE_TEST_CLOCK gives this rank a clock of its own",
    [SHARE_TIMER] = "MPI_Wtime's source is the MPI's, not known to be one counter: synchronised on its own",
    [SHARE_NO_BOOT_ID] = "cannot read the kernel's boot_id, so cannot tell which ranks share a kernel",
    [SHARE_CHECK_FAILED] = "its reads fell outside a round trip of its kernel's leader (or another kernel): "
                           "synchronised on its own",
};

/* "0-3,8,10-11" from an ascending list */
static void ranges_text(const int *r, int n, char *buf, size_t cap) {
  size_t at = 0;
  buf[0] = 0;
  for (int i = 0; i < n && at + 24 < cap; i++) {
    int j = i;
    while (j + 1 < n && r[j + 1] == r[j] + 1)
      j++;
    at += (size_t)snprintf(buf + at, cap - at, j > i ? "%s%d-%d" : "%s%d", at ? "," : "", r[i], r[j]);
    i = j;
  }
}

static void write_domains(json_w *w, const double *all, int size, const char *timer_name) {
  int *count = calloc((size_t)size, sizeof *count), *start = malloc(sizeof *start * (size_t)size),
      *order = malloc(sizeof *order * (size_t)size);
  for (int r = 0; r < size; r++)
    count[(int)all[NF * r + F_LEADER]]++;
  for (int r = 0, at = 0; r < size; r++) {
    start[r] = at;
    at += count[r];
  }
  for (int r = 0; r < size; r++) /* counting sort: each domain's ranks ascending */
    order[start[(int)all[NF * r + F_LEADER]]++] = r;
  char ranks[4096], why[512];
  jw_key(w, "domains");
  jw_arr_begin(w);
  for (int at = 0; at < size;) {
    int lead = (int)all[NF * order[at] + F_LEADER], n = count[lead];
    const double *m = all + NF * lead;
    ranges_text(order + at, n, ranks, sizeof ranks);
    if (n > 1)
      snprintf(why, sizeof why,
               "one kernel and one %s: the tick calibrated once, by rank %d; every read of a member fell between "
               "two reads of rank %d (%d checks a member, round trips up to %.0f ns)",
               timer_name, lead, lead, CLOCK_CHECKS, m[F_RTT]);
    else
      snprintf(why, sizeof why, "%s", alone_why[(int)m[F_WHY]]);
    jw_obj_begin(w);
    jw_kint(w, "leader", lead);
    jw_kint(w, "count", n);
    jw_kstr(w, "ranks", ranks);
    jw_kstr(w, "shared", why);
    jw_obj_end(w);
    at += n;
  }
  jw_arr_end(w);
  free(count);
  free(start);
  free(order);
}

void engine_clock_record(json_w *w, int same_host, const char *at, int *write_it) {
  const scope_clock *c = engine_clock;
  MPI_Comm comm = c->comm;
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  double ticks = (double)timer_read_inline(c->kind);
  MPI_Bcast(&ticks, 1, MPI_DOUBLE, 0, comm);
  double mine[NF] = {c->map.a,   c->map.b,         c->map.g0,    c->map.e0,       c->map.k,
                     c->tick_ns, c->inj_offset_ns, c->inj_drift, c->inj_base_ns,  c->leader,
                     c->parent,  c->depth,         c->why,       c->check_rtt_ns, (double)c->exchanges};
  double *all = rank == 0 ? malloc(sizeof(double) * NF * (size_t)size) : NULL;
  MPI_Gather(mine, NF, MPI_DOUBLE, all, NF, MPI_DOUBLE, 0, comm);
  *write_it = rank == 0;
  if (rank != 0)
    return;
  double g = local_at(all, ticks); /* rank 0's clock is global time */
  double max_pred = 0, max_err = 0, exchanges = 0;
  int within = 0;
  for (int r = 0; r < size; r++)
    exchanges += all[NF * r + F_EX];
  const char *timer_name = scl_timer_text(c->kind);
  jw_obj_begin(w);
  jw_kstr(w, "type", "clock");
  jw_kstr(w, "at", at);
  jw_kint(w, "sync", c->syncs);
  jw_kstr(w, "method", c->method->name);
  jw_kstr(w, "method_describes", c->method->describes);
  jw_kstr(w, "clock_domain", c->per_rank ? "rank" : "host");
  jw_kint(w, "reference_rank", 0);
  jw_kbool(w, "one_host", same_host);
  if (c->truth_known)
    jw_kstr(w, "truth",
            SIMULATED_CLOCK ? "every rank reads SimGrid's one simulated clock, to which its host's injected offset and "
                              "drift are added: the true offsets are those of the ranks' own conversions of one reading"
                            : "every rank on one kernel reads one counter: the true offsets are those of the ranks' "
                              "own conversions of one counter value");
  jw_kint(w, "rounds", c->rounds);
  jw_kint(w, "exchanges", (long long)exchanges);
  jw_knum(w, "sync_s", c->cost_s);
  jw_knum(w, "bound_z", CM_Z);
  write_domains(w, all, size, timer_name);
  jw_key(w, "ranks");
  jw_arr_begin(w);
  for (int r = 1; r < size; r++) {
    const double *m = all + NF * r;
    cm_map f = {m[F_A], m[F_B], m[F_G0], m[F_E0], m[F_K]};
    double est = cm_to_local(&f, g) - g, pred = cm_bound(&f, g);
    jw_obj_begin(w);
    jw_kint(w, "rank", r);
    jw_kint(w, "clock_of", (long long)m[F_LEADER]);
    if (m[F_PARENT] >= 0)
      jw_kint(w, "parent", (long long)m[F_PARENT]);
    jw_kint(w, "depth", (long long)m[F_DEPTH]);
    jw_knum(w, "offset_ns", est);
    jw_knum(w, "drift_ppm", f.b * 1e6);
    jw_knum(w, "predicted_error_ns", pred);
    if (c->truth_known) {
      /* the truth: both clocks evaluated at the same counter value */
      double truth = local_at(m, ticks) - g;
      double rate_r = m[F_TICK] * (1 + m[F_IDRIFT]), rate_0 = all[F_TICK] * (1 + all[F_IDRIFT]);
      double err = fabs(est - truth);
      jw_knum(w, "true_offset_ns", truth);
      jw_knum(w, "true_drift_ppm", (rate_r / rate_0 - 1) * 1e6);
      jw_knum(w, "error_ns", err);
      max_err = fmax(max_err, err);
      within += err <= pred;
    }
    jw_obj_end(w);
    max_pred = fmax(max_pred, pred);
  }
  jw_arr_end(w);
  jw_knum(w, "max_predicted_error_ns", max_pred);
  if (c->truth_known) {
    jw_knum(w, "max_error_ns", max_err);
    jw_kint(w, "within_bound", within);
  }
  jw_obj_end(w);
  free(all);
}
