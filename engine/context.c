#include "context.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int context_gather(run_context *rc) {
  rank_info me = {0};
  int len;
  MPI_Get_processor_name(me.host, &len);
  me.cpu = sched_getcpu();
  ssize_t nl = readlink("/proc/self/ns/net", me.netns, sizeof me.netns - 1);
  me.netns[nl > 0 ? nl : 0] = 0;
  cpu_set_t set;
  me.allowed = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : -1;
  me.cores = (int)sysconf(_SC_NPROCESSORS_ONLN);
  MPI_Comm node_comm;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node_comm);
  int node_size;
  MPI_Comm_size(node_comm, &node_size);
  /* Node id = world rank of the node's first rank: identical on every rank of the node. */
  int leader = rc->rank;
  MPI_Bcast(&leader, 1, MPI_INT, 0, node_comm);
  MPI_Comm_free(&node_comm);
  me.node = leader;
  rc->node = malloc(sizeof(int) * (size_t)rc->nranks);
  rc->ranks = rc->rank == 0 ? malloc(sizeof(rank_info) * (size_t)rc->nranks) : NULL;
  int bad = !rc->node || (rc->rank == 0 && !rc->ranks), any_bad = 0;
  MPI_Allreduce(&bad, &any_bad, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
  if (any_bad)
    return -1;
  MPI_Allgather(&me.node, 1, MPI_INT, rc->node, 1, MPI_INT, MPI_COMM_WORLD);
  int over_local = node_size > me.cores;
  MPI_Allreduce(&over_local, &rc->oversubscribed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Gather(&me, (int)sizeof me, MPI_BYTE, rc->ranks, (int)sizeof me, MPI_BYTE, 0, MPI_COMM_WORLD);

  int ver, sub;
  MPI_Get_library_version(rc->mpi_library, &len);
  MPI_Get_version(&ver, &sub);
  snprintf(rc->mpi_standard, sizeof rc->mpi_standard, "%d.%d", ver, sub);
  time_t now = time(NULL);
  struct tm tm;
  gmtime_r(&now, &tm);
  strftime(rc->started_utc, sizeof rc->started_utc, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return 0;
}

void context_free(run_context *rc) {
  free(rc->node);
  free(rc->ranks);
  rc->node = NULL;
  rc->ranks = NULL;
}

int context_one_node(const run_context *rc) {
  for (int r = 0; r < rc->nranks; r++)
    if (rc->node[r] != rc->node[0])
      return 0;
  return 1;
}
