/* What a run ran on, gathered from every rank (collective) and written once as the context
 * record: placement of each rank, MPI, timers, the decision whether the run oversubscribes
 * a host's cores, and the run's settings. */
#ifndef SCOPE_CONTEXT_H
#define SCOPE_CONTEXT_H
#include <mpi.h>

#include "core/json.h"
#include "core/rep.h"
#include "core/timer.h"
#include "scope.h"

typedef struct {
  char host[MPI_MAX_PROCESSOR_NAME];
  char netns[64]; /* network namespace, e.g. net:[4026531840]: ranks of a testbed differ here */
  int cpu, node, cores, allowed;
} rank_info;

/* What a node is, read by every rank from its own node (not assumed from rank 0's), so a
 * cluster of nodes of different kinds is described as it is. */
#define NODE_NICS 6
typedef struct {
  char cpu_model[96], kernel[64];
  int cores;
  long long memory_bytes, cache_bytes[3]; /* L1d, L2, L3 of cpu 0 (0: unknown) */
  struct {
    char name[16];
    int speed_mbps, mtu; /* speed -1 where the link does not say (virtual links) */
  } nic[NODE_NICS];
  int nnics;
} node_info;

typedef struct {
  int rank, nranks;
  int node, node0, node1; /* node ids of this rank, rank 0 and rank 1 (every rank has them) */
  int one_node;           /* every rank on rank 0's node */
  rank_info *ranks;       /* every rank's, on rank 0 only */
  node_info *nodes;       /* every rank's own node's, on rank 0 only */
  int oversubscribed;
  char mpi_library[MPI_MAX_LIBRARY_VERSION_STRING];
  int thread_level; /* the level MPI_Init_thread provided: an index of opt_thread_levels */
  char mpi_standard[16];
  char started_utc[32];
  const timer_info *timers;
  int timer;
  unsigned long long seed;
  const rep_settings *rep; /* what the option table does not hold (warm-up tolerance, batching) */
  const unsigned long long *sizes;
  long nsizes;
  const scope_test *const *sel;
  int nsel;
  int argc;
  char **argv;
} run_context;

/* Collective over MPI_COMM_WORLD: fills placement, node ids, MPI and oversubscription
 * (rank and nranks are the caller's, set already). */
int context_gather(run_context *rc);
void context_free(run_context *rc);
/* The `nodes` array of the context: one entry per node (its first rank's view). */
void context_write_nodes(json_w *w, const run_context *rc);
/* Whether every rank sits on the node of rank 0. */
int context_one_node(const run_context *rc);

#endif
