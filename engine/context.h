/* What a run ran on, gathered from every rank (collective) and written once as the context
 * record: placement of each rank, MPI, timers, the decision whether the run oversubscribes
 * a host's cores, and the run's settings. */
#ifndef SCOPE_CONTEXT_H
#define SCOPE_CONTEXT_H
#include <mpi.h>

#include "core/rep.h"
#include "core/timer.h"
#include "scope.h"

typedef struct {
  char host[MPI_MAX_PROCESSOR_NAME];
  char netns[64]; /* network namespace, e.g. net:[4026531840]: ranks of a testbed differ here */
  int cpu, node, cores, allowed;
} rank_info;

typedef struct {
  int rank, nranks;
  int *node;        /* node id of every rank (every rank has it) */
  rank_info *ranks; /* every rank's, on rank 0 only */
  int oversubscribed;
  char mpi_library[MPI_MAX_LIBRARY_VERSION_STRING];
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
/* Whether every rank sits on the node of rank 0. */
int context_one_node(const run_context *rc);

#endif
