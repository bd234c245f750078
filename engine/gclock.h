/* A global clock: every rank's local time mapped onto rank 0's (docs/method.md, "The global
 * clock").
 *
 * Clock domains.  Ranks that read one counter (one kernel, per /proc/sys/kernel/random/boot_id;
 * an invariant TSC or CLOCK_MONOTONIC_RAW) share one calibration of its tick and one map onto
 * global time: the domain's first rank (its leader) is synchronised, the others take its map,
 * and their offset from it is zero by construction.  Whether a member's counter really is the
 * leader's is checked (every read of the member falls between two reads of the leader); a rank
 * that cannot tell, or fails the check, is a domain of its own.  --clock-domain rank makes every
 * rank a domain of its own, as on separate hosts, so the cross-host method can be measured
 * where the truth is known.
 *
 * Across domains the leaders are synchronised pair by pair by a method of cm_methods
 * (core/clockmodel.h): a binomial tree in ceil(log2 H) rounds of disjoint pairs (default), or
 * SKaMPI's linear one.  Each pair fits the child's clock against the parent's (offset and drift)
 * with an error bound; the maps compose along the tree and the bounds add.
 *
 * For testing, SCOPE_TEST_CLOCK="rank:offset_us:drift_ppm[;...]" adds a known offset and
 * drift to that rank's local clock, so the estimator's recovery can be checked (such a rank
 * no longer reads the shared counter, so it is a domain of its own). */
#ifndef SCOPE_GCLOCK_H
#define SCOPE_GCLOCK_H
#include <mpi.h>
#include <stdint.h>

#include "core/json.h"

typedef struct {
  const char *method; /* a cm_methods name */
  int per_rank;       /* every rank its own domain (--clock-domain rank) */
  double span_s;      /* seconds one round of pairs spans */
} gclock_opts;

void gclock_init(int rank); /* reads SCOPE_TEST_CLOCK */
/* This rank's local time in ns (with any injected offset and drift). */
double gclock_local_ns(uint64_t ticks);
double gclock_now_local(void);
/* Waits until this rank's local clock reads `local_ns`: a spin on a machine; under SimGrid
 * (SCOPE_SIM) one simulated sleep, since a spin there is a simulator call per timer read and a
 * window's 50 us wait cost seconds of the host (issue 55: 4 ranks took 44 s for one point). */
void gclock_wait_local(double local_ns);
/* Collective over comm (rank 0 of comm is the reference): fit every rank's clock.  The first
 * call finds the clock domains, which hold for the run. */
void gclock_sync(MPI_Comm comm, const gclock_opts *o);
double gclock_to_global(double local_ns);
double gclock_to_local(double global_ns);
double gclock_now_global(void);
/* This rank's bound on its clock's error at global time g (ns), and right after the last
 * synchronisation (what synchronising again could at best bring it down to). */
double gclock_predicted_error_ns(double g_ns);
double gclock_floor_ns(void);
/* Wall seconds the last synchronisation took, and when it ended (timer_wall_s). */
double gclock_last_cost_s(void);
double gclock_last_end_s(void);
/* Rank 0 writes a `clock` record (collective: gathers every rank's map) at a synchronisation
 * (at = "sync") or at the launch's end ("end": how the last maps held, after drifting). */
void gclock_record(MPI_Comm comm, json_w *w, int same_host, const char *at, int *write_it);

#endif
