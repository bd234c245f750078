/* The library's clock object and what the engine reads of it beyond the public API (its
 * clock record, the windows' waits).  Nothing outside engine/ includes this file. */
#ifndef SCOPE_CLOCK_STATE_H
#define SCOPE_CLOCK_STATE_H
#include <stdio.h>

#include "../core/clockmodel.h"
#include "../core/json.h"
#include "../core/timer.h"
#include "scope_clock.h"

#ifdef SCOPE_SIM
#define SIMULATED_CLOCK 1 /* SimGrid: one simulated clock, hosts' clocks injected (clock_local.c) */
#else
#define SIMULATED_CLOCK 0
#endif

/* Exchanges a domain member is checked by (clock_domain.c); the record states it. */
#define CLOCK_CHECKS 8

/* Why a rank does or does not share its domain leader's counter (recorded per domain). */
typedef enum {
  SHARE_OK = 0,      /* one kernel, a counter every core reads alike, the check passed */
  SHARE_FORCED,      /* per_rank (--clock-domain rank) */
  SHARE_INJECTED,    /* SCOPE_TEST_CLOCK gave this rank a clock of its own */
  SHARE_TIMER,       /* MPI_Wtime: its source is the MPI's, not known to be one counter */
  SHARE_NO_BOOT_ID,  /* /proc/sys/kernel/random/boot_id unreadable: cannot tell the kernel */
  SHARE_CHECK_FAILED /* a read of this rank fell outside the leader's two reads around it */
} share_why;

/* An edge's last fit, parent side: the next synchronisation's drift is measured from it. */
typedef struct {
  cm_map fit;
  int have;
} edge_history;

struct scope_clock {
  MPI_Comm comm; /* its rank 0 is the reference: the caller's, duplicated unless the engine's */
  int own_comm;  /* comm is a duplicate this clock frees */
  int rank, size;
  timer_kind kind;
  double tick_ns; /* the domain leader's calibration of the counter */
  cm_map map;     /* this rank's clock onto global time, with its bound */
  double inj_offset_ns, inj_drift, inj_base_ns;
  int injected;
  const cm_method *method;
  int per_rank;
  double span_s;
  MPI_Comm domain;  /* the ranks that read this rank's counter; its rank 0 is the leader */
  MPI_Comm leaders; /* the domains' leaders (MPI_COMM_NULL on the other ranks) */
  int leader;       /* rank (in comm) of this rank's leader */
  share_why why;
  double check_rtt_ns; /* leader: the largest round trip of its members' checks */
  int check_exchanges;
  char boot_id[40];
  int truth_known;   /* every rank reads one counter (one kernel, or SimGrid's one clock) */
  int parent, depth; /* rank of the leader this one's map came from (-1: none), edges to rank 0 */
  int rounds;
  edge_history *history; /* per round where this leader is the parent */
  long exchanges;
  double cost_s, end_s;
  int syncs;
  FILE *events;                      /* scope_clock_events_open's file, or NULL */
  unsigned long long ev_dev, ev_ino; /* that file's identity, in the process's list of open ones */
  json_w line;                       /* the event being written */
  long nevents;
};

/* The engine's way in: a clock on a timer already chosen (scl_choose_timer), neither spun nor
 * synchronised; the public init is this plus the spin and the first synchronisation.  With dup
 * 0 the clock uses comm itself (the engine's MPI_COMM_WORLD, whose traffic it owns): under
 * SimGrid a duplicate of 1,024 ranks cost 17 s of the host (issue 55). */
int scl_open(MPI_Comm comm, int dup, timer_kind kind, double tick_ns, const scope_clock_options *o, scope_clock **out);
/* Every rank probes the timers (info filled as timer_probe does) and all agree on one: `name`
 * if given and every rank has it, else the best of rank 0's that every rank has.  Ranks of
 * one node share the node's first rank's TSC calibration unless per_rank.  Returns the kind. */
timer_kind scl_choose_timer(MPI_Comm comm, const char *name, int per_rank, timer_info info[TIMER_COUNT]);
/* Finds the clock domains (collective; the first synchronisation calls it). */
void scl_find_domains(scope_clock *c);
double scl_local_ns(const scope_clock *c, uint64_t ticks);
double scl_to_local_ns(const scope_clock *c, double global_ns);
/* Waits until this rank's local clock reads local_ns: a spin on a machine; under SimGrid one
 * simulated sleep, since a spin there is a simulator call a read (issue 55). */
void scl_wait_local(const scope_clock *c, double local_ns);
/* The counter's name as the records give it. */
const char *scl_timer_text(timer_kind k);

#endif
