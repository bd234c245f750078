/* The clock domains: which ranks read one counter, so that one calibration of its tick and
 * one map onto global time serve them all.  A domain's first rank (its leader) is synchronised,
 * the others take its map, and their offset from it is zero by construction.  Whether a
 * member's counter really is the leader's is checked (every read of the member falls between
 * two reads of the leader); a rank that cannot tell, or fails the check, is a domain of its
 * own.  per_rank makes every rank a domain of its own, as on separate hosts, so the cross-host
 * method can be measured where the truth is known. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock_state.h"

enum { TAG_CHECK = 7173 };

/* One id per boot of a kernel: ranks that see the same one run on one kernel, which keeps one
 * CLOCK_MONOTONIC_RAW and, with an invariant TSC it trusts, one TSC for every core. */
static void read_boot_id(char out[40]) {
  out[0] = 0;
#ifdef SCOPE_SIM
  /* a simulated host's ranks share its clock (SimGrid's one clock, plus the host's injected
   * offset and drift: clock_local.c): the host's name stands for a kernel's boot id */
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
static int check_members(scope_clock *c, MPI_Comm d, int drank, int dn, share_why *why) {
  int ok = *why == SHARE_OK;
  if (drank == 0) {
    double worst = 0;
    for (int m = 1; m < dn; m++) {
      int fine = 1;
      for (int e = 0; e < CLOCK_CHECKS; e++) {
        double t1 = scope_clock_local_ns(c), t2;
        MPI_Send(&t1, 1, MPI_DOUBLE, m, TAG_CHECK, d);
        MPI_Recv(&t2, 1, MPI_DOUBLE, m, TAG_CHECK, d, MPI_STATUS_IGNORE);
        double t3 = scope_clock_local_ns(c);
        fine &= t1 <= t2 && t2 <= t3;
        worst = fmax(worst, t3 - t1);
      }
      MPI_Send(&fine, 1, MPI_INT, m, TAG_CHECK, d);
    }
    c->check_rtt_ns = worst;
    c->check_exchanges = dn > 1 ? CLOCK_CHECKS : 0;
    return ok;
  }
  for (int e = 0; e < CLOCK_CHECKS; e++) {
    double t1, t2;
    MPI_Recv(&t1, 1, MPI_DOUBLE, 0, TAG_CHECK, d, MPI_STATUS_IGNORE);
    t2 = scope_clock_local_ns(c);
    MPI_Send(&t2, 1, MPI_DOUBLE, 0, TAG_CHECK, d);
  }
  int fine;
  MPI_Recv(&fine, 1, MPI_INT, 0, TAG_CHECK, d, MPI_STATUS_IGNORE);
  if (ok && !fine)
    *why = SHARE_CHECK_FAILED;
  return ok && fine;
}

void scl_find_domains(scope_clock *c) {
  MPI_Comm comm = c->comm;
  int rank = c->rank;
  read_boot_id(c->boot_id);
  timer_kind k = c->kind;
  share_why why = c->per_rank                          ? SHARE_FORCED
                  : SIMULATED_CLOCK                    ? SHARE_OK
                  : c->injected                        ? SHARE_INJECTED
                  : k != TIMER_TSC && k != TIMER_CLOCK ? SHARE_TIMER
                  : !c->boot_id[0]                     ? SHARE_NO_BOOT_ID
                                                       : SHARE_OK;
  /* the truth is known where every rank reads rank 0's counter: one kernel */
  char ref[40];
  memcpy(ref, c->boot_id, sizeof ref);
  MPI_Bcast(ref, (int)sizeof ref, MPI_CHAR, 0, comm);
  /* ... or where every rank reads SimGrid's one simulated clock */
  int same = SIMULATED_CLOCK || (c->boot_id[0] && strcmp(ref, c->boot_id) == 0 && k != TIMER_MPI);
  MPI_Allreduce(&same, &c->truth_known, 1, MPI_INT, MPI_LAND, comm);

  /* candidates grouped by kernel; the rest alone */
  int color = why == SHARE_OK ? (int)(fnv1a(c->boot_id) & 0x3fffffffu) : 0x40000000 + rank;
  MPI_Comm cand;
  MPI_Comm_split(comm, color, rank, &cand);
  int drank, dn;
  MPI_Comm_rank(cand, &drank);
  MPI_Comm_size(cand, &dn);
  char lead_boot[40];
  memcpy(lead_boot, c->boot_id, sizeof lead_boot);
  MPI_Bcast(lead_boot, (int)sizeof lead_boot, MPI_CHAR, 0, cand);
  double tick = c->tick_ns;
  MPI_Bcast(&tick, 1, MPI_DOUBLE, 0, cand);
  if (why == SHARE_OK && strcmp(lead_boot, c->boot_id) != 0)
    why = SHARE_CHECK_FAILED; /* another kernel whose id hashed alike */
  if (why == SHARE_OK && drank > 0)
    c->tick_ns = tick; /* one counter, one calibration: the leader's */
  int shares = check_members(c, cand, drank, dn, &why);
  MPI_Comm_split(cand, shares || drank == 0 ? 0 : 1 + drank, drank, &c->domain);
  MPI_Comm_free(&cand);
  c->why = why;
  c->leader = rank;
  MPI_Bcast(&c->leader, 1, MPI_INT, 0, c->domain);
  MPI_Comm_split(comm, c->leader == rank ? 0 : MPI_UNDEFINED, rank, &c->leaders);
}
