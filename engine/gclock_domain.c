/* The global clock's domains (which ranks read one counter) and its `clock` record. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/timer.h"
#include "gclock_internal.h"

#define S gclock_self

enum { CHECKS = 8, TAG_CHECK = 7173 };

/* One id per boot of a kernel: ranks that see the same one run on one kernel, which keeps one
 * CLOCK_MONOTONIC_RAW and, with an invariant TSC it trusts, one TSC for every core. */
static void read_boot_id(char out[40]) {
  out[0] = 0;
#ifdef SCOPE_SIM
  /* a simulated host's ranks share its clock (SimGrid's one clock, plus the host's injected
   * offset and drift: gclock_init): the host's name stands for a kernel's boot id */
  char host[MPI_MAX_PROCESSOR_NAME];
  int len = 0;
  MPI_Get_processor_name(host, &len);
  snprintf(out, 40, "sim:%.35s", host);
  return;
#endif
  FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
  if (!f)
    return;
  if (!fgets(out, 40, f))
    out[0] = 0;
  fclose(f);
  out[strcspn(out, "\n")] = 0;
}

static unsigned long long fnv1a(const char *s) {
  unsigned long long h = 1469598103934665603ull;
  for (; *s; s++)
    h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

/* The leader reads its clock, the member its own, the leader its own again: on one counter
 * the member's read falls between the leader's two, every time. */
static int check_members(MPI_Comm d, int drank, int dn, share_why *why) {
  int ok = *why == SHARE_OK;
  if (drank == 0) {
    double worst = 0;
    for (int m = 1; m < dn; m++) {
      int fine = 1;
      for (int e = 0; e < CHECKS; e++) {
        double t1 = gclock_now_local(), t2;
        MPI_Send(&t1, 1, MPI_DOUBLE, m, TAG_CHECK, d);
        MPI_Recv(&t2, 1, MPI_DOUBLE, m, TAG_CHECK, d, MPI_STATUS_IGNORE);
        double t3 = gclock_now_local();
        fine &= t1 <= t2 && t2 <= t3;
        worst = fmax(worst, t3 - t1);
      }
      MPI_Send(&fine, 1, MPI_INT, m, TAG_CHECK, d);
    }
    S.check_rtt_ns = worst;
    S.check_exchanges = dn > 1 ? CHECKS : 0;
    return ok;
  }
  for (int e = 0; e < CHECKS; e++) {
    double t1, t2;
    MPI_Recv(&t1, 1, MPI_DOUBLE, 0, TAG_CHECK, d, MPI_STATUS_IGNORE);
    t2 = gclock_now_local();
    MPI_Send(&t2, 1, MPI_DOUBLE, 0, TAG_CHECK, d);
  }
  int fine;
  MPI_Recv(&fine, 1, MPI_INT, 0, TAG_CHECK, d, MPI_STATUS_IGNORE);
  if (ok && !fine)
    *why = SHARE_CHECK_FAILED;
  return ok && fine;
}

void gclock_find_domains(MPI_Comm comm, const gclock_opts *o) {
  int rank;
  MPI_Comm_rank(comm, &rank);
  read_boot_id(S.boot_id);
  S.per_rank = o->per_rank;
  timer_kind k = timer_selected();
  share_why why = o->per_rank                          ? SHARE_FORCED
                  : SIMULATED_CLOCK                    ? SHARE_OK
                  : S.injected                         ? SHARE_INJECTED
                  : k != TIMER_TSC && k != TIMER_CLOCK ? SHARE_TIMER
                  : !S.boot_id[0]                      ? SHARE_NO_BOOT_ID
                                                       : SHARE_OK;
  /* the truth is known where every rank reads rank 0's counter: one kernel */
  char ref[40];
  memcpy(ref, S.boot_id, sizeof ref);
  MPI_Bcast(ref, (int)sizeof ref, MPI_CHAR, 0, comm);
  /* ... or where every rank reads SimGrid's one simulated clock */
  int same = SIMULATED_CLOCK || (S.boot_id[0] && strcmp(ref, S.boot_id) == 0 && k != TIMER_MPI);
  MPI_Allreduce(&same, &S.truth_known, 1, MPI_INT, MPI_LAND, comm);

  /* candidates grouped by kernel; the rest alone */
  int color = why == SHARE_OK ? (int)(fnv1a(S.boot_id) & 0x3fffffffu) : 0x40000000 + rank;
  MPI_Comm cand;
  MPI_Comm_split(comm, color, rank, &cand);
  int drank, dn;
  MPI_Comm_rank(cand, &drank);
  MPI_Comm_size(cand, &dn);
  char lead_boot[40];
  memcpy(lead_boot, S.boot_id, sizeof lead_boot);
  MPI_Bcast(lead_boot, (int)sizeof lead_boot, MPI_CHAR, 0, cand);
  double tick = timer_tick_ns();
  MPI_Bcast(&tick, 1, MPI_DOUBLE, 0, cand);
  if (why == SHARE_OK && strcmp(lead_boot, S.boot_id) != 0)
    why = SHARE_CHECK_FAILED; /* another kernel whose id hashed alike */
  if (why == SHARE_OK && drank > 0)
    timer_select(k, tick); /* one counter, one calibration: the leader's */
  int shares = check_members(cand, drank, dn, &why);
  MPI_Comm_split(cand, shares || drank == 0 ? 0 : 1 + drank, drank, &S.domain);
  MPI_Comm_free(&cand);
  S.why = why;
  S.leader = rank;
  MPI_Bcast(&S.leader, 1, MPI_INT, 0, S.domain);
  MPI_Comm_split(comm, S.leader == rank ? 0 : MPI_UNDEFINED, rank, &S.leaders);
}

/* ------------------------------------------------------------------ the record */

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
               timer_name, lead, lead, CHECKS, m[F_RTT]);
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

void gclock_record(MPI_Comm comm, json_w *w, int same_host, const char *at, int *write_it) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  double ticks = (double)timer_now();
  MPI_Bcast(&ticks, 1, MPI_DOUBLE, 0, comm);
  double mine[NF] = {S.map.a,         S.map.b,         S.map.g0,    S.map.e0,       S.map.k,
                     timer_tick_ns(), S.inj_offset_ns, S.inj_drift, S.inj_base_ns,  S.leader,
                     S.parent,        S.depth,         S.why,       S.check_rtt_ns, (double)S.exchanges};
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
  timer_kind k = timer_selected();
  const char *timer_name = k == TIMER_TSC     ? "invariant TSC (cpu flags constant_tsc, nonstop_tsc)"
                           : k == TIMER_CLOCK ? "CLOCK_MONOTONIC_RAW"
                                              : "MPI_Wtime";
  jw_obj_begin(w);
  jw_kstr(w, "type", "clock");
  jw_kstr(w, "at", at);
  jw_kint(w, "sync", S.syncs);
  jw_kstr(w, "method", S.method->name);
  jw_kstr(w, "method_describes", S.method->describes);
  jw_kstr(w, "clock_domain", S.per_rank ? "rank" : "host");
  jw_kint(w, "reference_rank", 0);
  jw_kbool(w, "one_host", same_host);
  if (S.truth_known)
    jw_kstr(w, "truth",
            SIMULATED_CLOCK ? "every rank reads SimGrid's one simulated clock, to which its host's injected offset and "
                              "drift are added: the true offsets are those of the ranks' own conversions of one reading"
                            : "every rank on one kernel reads one counter: the true offsets are those of the ranks' "
                              "own conversions of one counter value");
  jw_kint(w, "rounds", S.rounds);
  jw_kint(w, "exchanges", (long long)exchanges);
  jw_knum(w, "sync_s", S.cost_s);
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
    if (S.truth_known) {
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
  if (S.truth_known) {
    jw_knum(w, "max_error_ns", max_err);
    jw_kint(w, "within_bound", within);
  }
  jw_obj_end(w);
  free(all);
}
