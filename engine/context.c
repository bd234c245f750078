#include "context.h"

#include <dirent.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "core/json.h"

static long long read_ll(const char *path, int *ok) {
  FILE *f = fopen(path, "r");
  long long v = 0;
  *ok = f && fscanf(f, "%lld", &v) == 1;
  if (f)
    fclose(f);
  return v;
}

/* A cache size as sysfs writes it ("32K", "1024K", "8M"), bytes. */
static long long cache_size(int index) {
  char path[96], text[32] = "";
  snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", index);
  FILE *f = fopen(path, "r");
  if (!f || !fgets(text, sizeof text, f)) {
    if (f)
      fclose(f);
    return 0;
  }
  fclose(f);
  char *end;
  long long v = strtoll(text, &end, 10);
  return *end == 'K' ? v << 10 : *end == 'M' ? v << 20 : *end == 'G' ? v << 30 : v;
}

static void describe_node(node_info *n) {
  FILE *f = fopen("/proc/cpuinfo", "r");
  char line[256];
  while (f && fgets(line, sizeof line, f))
    if (strncmp(line, "model name", 10) == 0 && strchr(line, ':')) {
      snprintf(n->cpu_model, sizeof n->cpu_model, "%s", strchr(line, ':') + 2);
      n->cpu_model[strcspn(n->cpu_model, "\n")] = 0;
      break;
    }
  if (f)
    fclose(f);
  n->cores = (int)sysconf(_SC_NPROCESSORS_ONLN);
  n->memory_bytes = (long long)sysconf(_SC_PHYS_PAGES) * sysconf(_SC_PAGESIZE);
  /* index0 is L1 data, index1 L1 instruction, index2 L2, index3 L3 on x86 and most arm64 */
  n->cache_bytes[0] = cache_size(0);
  n->cache_bytes[1] = cache_size(2);
  n->cache_bytes[2] = cache_size(3);
  struct utsname u;
  if (uname(&u) == 0)
    snprintf(n->kernel, sizeof n->kernel, "%.20s %.40s", u.sysname, u.release);
  DIR *d = opendir("/sys/class/net");
  struct dirent *e;
  while (d && (e = readdir(d)) && n->nnics < NODE_NICS) {
    if (e->d_name[0] == '.' || strcmp(e->d_name, "lo") == 0)
      continue;
    char path[300];
    int ok;
    snprintf(n->nic[n->nnics].name, sizeof n->nic[0].name, "%.15s", e->d_name);
    snprintf(path, sizeof path, "/sys/class/net/%s/speed", e->d_name);
    long long speed = read_ll(path, &ok);
    n->nic[n->nnics].speed_mbps = ok && speed > 0 ? (int)speed : -1;
    snprintf(path, sizeof path, "/sys/class/net/%s/mtu", e->d_name);
    n->nic[n->nnics].mtu = (int)read_ll(path, &ok);
    n->nnics++;
  }
  if (d)
    closedir(d);
}

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
  /* Every rank's node id is in rc->ranks (rank 0's); no rank holds the N ids a gather to
   * every rank would give: at 16,384 simulated ranks in one process that was 1 GiB, and
   * SimGrid's default allgather took longer than an hour at 256 (issue 55). */
  rc->node = leader;
  int first_two[2] = {leader, leader};
  MPI_Bcast(&first_two[0], 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (rc->nranks > 1)
    MPI_Bcast(&first_two[1], 1, MPI_INT, 1, MPI_COMM_WORLD);
  rc->node0 = first_two[0];
  rc->node1 = rc->nranks > 1 ? first_two[1] : first_two[0];
  int here = leader == rc->node0;
  MPI_Allreduce(&here, &rc->one_node, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
  rc->ranks = rc->rank == 0 ? malloc(sizeof(rank_info) * (size_t)rc->nranks) : NULL;
  rc->nodes = rc->rank == 0 ? calloc((size_t)rc->nranks, sizeof(node_info)) : NULL;
  int bad = rc->rank == 0 && (!rc->ranks || !rc->nodes), any_bad = 0;
  MPI_Allreduce(&bad, &any_bad, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
  if (any_bad)
    return -1;
#ifdef SCOPE_SIM
  int over_local = 0; /* a simulated rank runs on a core of the platform, not of this host */
#else
  int over_local = node_size > me.cores;
#endif
  MPI_Allreduce(&over_local, &rc->oversubscribed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Gather(&me, (int)sizeof me, MPI_BYTE, rc->ranks, (int)sizeof me, MPI_BYTE, 0, MPI_COMM_WORLD);
  node_info mine = {0};
  describe_node(&mine);
  MPI_Gather(&mine, (int)sizeof mine, MPI_BYTE, rc->nodes, (int)sizeof mine, MPI_BYTE, 0, MPI_COMM_WORLD);

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
  free(rc->ranks);
  free(rc->nodes);
  rc->ranks = NULL;
  rc->nodes = NULL;
}

void context_write_nodes(json_w *w, const run_context *rc) {
  jw_key(w, "nodes");
  jw_arr_begin(w);
  for (int r = 0; r < rc->nranks; r++) {
    if (rc->ranks[r].node != r) /* a node's first rank speaks for it */
      continue;
    const node_info *n = &rc->nodes[r];
    jw_obj_begin(w);
    jw_kint(w, "node", r);
    jw_kstr(w, "host", rc->ranks[r].host);
    jw_kstr(w, "cpu_model", n->cpu_model);
    jw_kint(w, "cores", n->cores);
    jw_kint(w, "memory_bytes", n->memory_bytes);
    jw_key(w, "cache_bytes");
    jw_obj_begin(w);
    jw_kint(w, "l1d", n->cache_bytes[0]);
    jw_kint(w, "l2", n->cache_bytes[1]);
    jw_kint(w, "l3", n->cache_bytes[2]);
    jw_obj_end(w);
    jw_kstr(w, "kernel", n->kernel);
    jw_key(w, "nics");
    jw_arr_begin(w);
    for (int i = 0; i < n->nnics; i++) {
      jw_obj_begin(w);
      jw_kstr(w, "name", n->nic[i].name);
      if (n->nic[i].speed_mbps > 0)
        jw_kint(w, "speed_mbps", n->nic[i].speed_mbps);
      else {
        jw_key(w, "speed_mbps");
        jw_null(w);
      }
      jw_kint(w, "mtu", n->nic[i].mtu);
      jw_obj_end(w);
    }
    jw_arr_end(w);
    jw_obj_end(w);
  }
  jw_arr_end(w);
}

int context_one_node(const run_context *rc) {
  return rc->one_node;
}
