/* The global clock's state, shared by gclock.c (synchronisation) and gclock_domain.c (the
 * clock domains and the record); nothing else includes it. */
#ifndef SCOPE_GCLOCK_INTERNAL_H
#define SCOPE_GCLOCK_INTERNAL_H
#include <mpi.h>

#include "core/clockmodel.h"
#include "gclock.h"

#ifdef SCOPE_SIM
#define SIMULATED_CLOCK 1 /* SimGrid: one simulated clock, hosts' clocks injected (gclock_init) */
#else
#define SIMULATED_CLOCK 0
#endif

/* Why a rank does or does not share its domain leader's counter (recorded per domain). */
typedef enum {
  SHARE_OK = 0,      /* one kernel, a counter every core reads alike, the check passed */
  SHARE_FORCED,      /* --clock-domain rank */
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

typedef struct {
  int rank;
  cm_map map; /* this rank's clock onto global time, with its bound */
  double inj_offset_ns, inj_drift, inj_base_ns;
  int injected;
  const cm_method *method;
  MPI_Comm domain;  /* the ranks that read this rank's counter; its rank 0 is the leader */
  MPI_Comm leaders; /* the domains' leaders (MPI_COMM_NULL on the other ranks) */
  int leader;       /* world rank of this rank's leader */
  int per_rank;
  share_why why;
  double check_rtt_ns; /* leader: the largest round trip of its members' checks */
  int check_exchanges;
  char boot_id[40];
  int truth_known;   /* every rank on one kernel: every rank reads one counter */
  int parent, depth; /* world rank of the leader this one's map came from (-1: none), edges to rank 0 */
  int rounds;
  edge_history *history; /* per round where this leader is the parent */
  long exchanges;
  double cost_s, end_s;
  int syncs;
} gclock_state;

extern gclock_state gclock_self;

void gclock_find_domains(MPI_Comm comm, const gclock_opts *o);

#endif
