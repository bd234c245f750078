/* McCalpin's STREAM kernels (copy, scale, add, triad) on every rank of the point at once:
 * the single-node level (SCOPE §6.4) that explains the memory-bound figures above it.
 * Window-timed over --procs, so procs=1 is one core alone and procs=all the whole node; the
 * time is the last rank's completion and the bandwidth the node's (STREAM's byte counts, every
 * rank's arrays).  Each array is at least 4x the last-level cache (STREAM's rule), detected
 * and recorded. */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "../core/pattern.h"
#include "../core/testhook.h"
#include "node.h"

enum { COPY, SCALE, ADD, TRIAD };
static const char *const kernels[] = {"copy", "scale", "add", "triad", NULL};
static const scope_param params[] = {
    {"kernel", SP_ENUM, "triad", 0, 0, kernels, "copy c=a, scale b=q*c, add c=a+b, triad a=b+q*c (q = 3)"},
    {"array", SP_BYTES, "0", 0, 1L << 40, NULL,
     "bytes in each of a rank's 3 arrays (0: STREAM's rule per node, 4x the last-level caches its ranks use, "
     "shared out over them and capped to the memory)"},
};
/* arrays read and written by one pass of each kernel (STREAM's counts) */
static const int arrays_moved[] = {2, 2, 3, 3};
#define Q 3.0

/* The last-level cache of the CPU this rank runs on, as the kernel describes it (sysfs: on this
 * VM glibc's sysconf says 384 MiB where the CPU has 32 MiB), else sysconf's, else 32 MiB; where
 * that came from; and which instance it is (sysfs's index3 id, -1 unknown), so a node's ranks
 * count a cache they share once.  SCOPE_TEST_LLC stands in for all of it (core/testhook.h). */
static size_t llc_bytes(const char **from, long *id) {
  size_t fake = testhook_llc_bytes();
  if (fake) {
    *from = "SCOPE_TEST_LLC";
    *id = -1;
    return fake;
  }
  int cpu = sched_getcpu();
  char path[128];
  snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/cache/index3/size", cpu < 0 ? 0 : cpu);
  FILE *f = fopen(path, "r");
  unsigned long v = 0;
  char unit = 0;
  *id = -1;
  if (f) {
    int got = fscanf(f, "%lu%c", &v, &unit);
    fclose(f);
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/cache/index3/id", cpu < 0 ? 0 : cpu);
    if ((f = fopen(path, "r"))) {
      if (fscanf(f, "%ld", id) != 1)
        *id = -1;
      fclose(f);
    }
    if (got >= 1 && v > 0) {
      *from = "sysfs";
      return (size_t)v << (unit == 'M' ? 20 : unit == 'K' ? 10 : 0);
    }
  }
  long sc = sysconf(_SC_LEVEL3_CACHE_SIZE);
  *from = sc > 0 ? "sysconf" : "assumed";
  return sc > 0 ? (size_t)sc : (size_t)32 << 20;
}

/* The last-level cache the ranks of this rank's node use: the sum over the distinct caches
 * (an unknown instance counts as the one every rank of the node shares), and how many. */
static double llc_in_use(scope_ctx *c, size_t llc, long id, int *ncaches, int *here) {
  double mine[3] = {(double)c->node, (double)id, (double)llc};
  double *all = malloc(sizeof(double) * 3 * (size_t)c->nranks);
  if (!all) {
    *ncaches = *here = 1;
    return (double)llc;
  }
  MPI_Allgather(mine, 3, MPI_DOUBLE, all, 3, MPI_DOUBLE, c->comm);
  double sum = 0;
  *ncaches = *here = 0;
  for (int r = 0; r < c->nranks; r++) {
    if (all[3 * r] != mine[0])
      continue;
    (*here)++;
    int seen = 0;
    for (int q = 0; q < r && !seen; q++)
      seen = all[3 * q] == mine[0] && all[3 * q + 1] == all[3 * r + 1];
    if (!seen) {
      sum += all[3 * r + 2];
      (*ncaches)++;
    }
  }
  free(all);
  return sum;
}

/* MemAvailable from /proc/meminfo, bytes (0 where unknown).  Test hook: SCOPE_TEST_MEM_AVAILABLE
 * (bytes) stands in for it, so the cap is tested without filling the machine. */
static double mem_available(void) {
  const char *fake = getenv("SCOPE_TEST_MEM_AVAILABLE");
  if (fake)
    return strtod(fake, NULL);
  FILE *f = fopen("/proc/meminfo", "r");
  char line[128];
  double kib = 0;
  while (f && fgets(line, sizeof line, f))
    if (sscanf(line, "MemAvailable: %lf kB", &kib) == 1)
      break;
  if (f)
    fclose(f);
  return kib * 1024;
}

/* STREAM's rule per node (node_stream_rule_bytes), or what fits: all of this node's ranks'
 * arrays within half the memory available to the tightest node; agreed over the point (the
 * largest rule, the smallest room), so every rank moves the same bytes; 0 when even that is
 * not larger than the caches in use. */
static size_t auto_array(scope_ctx *c, double in_use, int here, int *capped) {
  double avail = mem_available(), room = avail > 0 ? 0.5 * avail / (3.0 * here) : 1e300;
  double want = (double)node_stream_rule_bytes(in_use, here);
  MPI_Allreduce(MPI_IN_PLACE, &room, 1, MPI_DOUBLE, MPI_MIN, c->comm);
  MPI_Allreduce(MPI_IN_PLACE, &want, 1, MPI_DOUBLE, MPI_MAX, c->comm);
  *capped = room < want;
  if (*capped)
    want = (double)((size_t)room & ~(size_t)((1 << 20) - 1)); /* whole MiB: the same on every rank */
  return want * here > in_use ? (size_t)want : 0;
}

static int setup(scope_ctx *c, void **st) {
  node_arrays *s = calloc(1, sizeof *s);
  *st = s;
  if (!s)
    return -1;
  s->kernel = (int)scope_param_get(c, "kernel");
  const char *from;
  long id;
  size_t llc = llc_bytes(&from, &id), asked = (size_t)scope_param_get(c, "array");
  int capped = 0, ncaches, here;
  double in_use = llc_in_use(c, llc, id, &ncaches, &here);
  size_t bytes = asked ? asked : auto_array(c, in_use, here, &capped);
  if (!bytes) {
    c->skip = "the memory available holds no arrays larger than the last-level cache: STREAM would time the cache";
    return 0;
  }
  if (node_alloc(s, bytes / sizeof(double)))
    return -1;
  c->sbuf_bytes = c->rbuf_bytes = 64;
  c->ops_per_iter = 1;
  c->bytes_per_op = (double)c->nranks * arrays_moved[s->kernel] * (double)(s->n * sizeof(double));
  c->extra[0].name = "array_bytes";
  c->extra[0].value = (double)(s->n * sizeof(double));
  c->extra[1].name = "llc_bytes";
  c->extra[1].value = in_use;
  c->extra[2].name = "capped";
  c->extra[2].value = capped;
  c->nextra = 3;
  double mib = (double)(s->n * sizeof(double)) / (1 << 20);
  const char *why = asked    ? "as asked; STREAM's rule per node: 4x"
                    : capped ? "capped to half the free memory; "
                               "STREAM's rule per node: 4x"
                             : "STREAM's rule per node: 4x";
  snprintf(c->note, sizeof c->note,
           "%d rank(s) at once, 3 arrays of %.4g MiB each per rank (%s the %.4g MiB of last-level cache the node's "
           "%d rank(s) use, %d cache(s) of %zu MiB from %s, shared out)",
           c->nranks, mib, why, in_use / (1 << 20), here, ncaches, llc >> 20, from);
  return 0;
}

static void run(scope_ctx *c, void *st) {
  node_arrays *s = st;
  double *restrict a = s->a, *restrict b = s->b, *restrict cc = s->c;
  size_t n = s->n;
  switch (s->kernel) {
  case COPY:
    for (size_t i = 0; i < n; i++)
      cc[i] = a[i];
    break;
  case SCALE:
    for (size_t i = 0; i < n; i++)
      b[i] = Q * cc[i];
    break;
  case ADD:
    for (size_t i = 0; i < n; i++)
      cc[i] = a[i] + b[i];
    break;
  case TRIAD:
    for (size_t i = 0; i < n; i++)
      a[i] = b[i] + Q * cc[i];
    break;
  }
}

/* Small integers from the pattern, so every kernel's result is exact. */
static double value(uint64_t seed, int src, size_t i) {
  return (double)pattern_byte(seed, src, i);
}

static void fill(scope_ctx *c, void *st, uint64_t seed) {
  node_arrays *s = st;
  for (size_t i = 0; i < s->n; i++) {
    s->a[i] = value(seed, 3 * c->rank, i);
    s->b[i] = value(seed, 3 * c->rank + 1, i);
    s->c[i] = value(seed, 3 * c->rank + 2, i);
  }
}

static size_t verify(scope_ctx *c, void *st, uint64_t seed, size_t *first) {
  node_arrays *s = st;
  size_t bad = 0;
  for (size_t i = 0; i < s->n; i++) {
    double a = value(seed, 3 * c->rank, i), b = value(seed, 3 * c->rank + 1, i), cv = value(seed, 3 * c->rank + 2, i);
    double want, got;
    switch (s->kernel) {
    case COPY:
      want = a, got = s->c[i];
      break;
    case SCALE:
      want = Q * cv, got = s->b[i];
      break;
    case ADD:
      want = a + b, got = s->c[i];
      break;
    default:
      want = b + Q * cv, got = s->a[i];
      break;
    }
    if (got != want) {
      if (!bad)
        *first = i * sizeof(double);
      bad += sizeof(double);
    }
  }
  return bad;
}

/* Three arrays a rank: as asked, or STREAM's rule per node, which setup caps to half the memory
 * available (the plan is asked on the host the run starts from, before any rank is placed: its
 * ranks taken for one node sharing this CPU's last-level cache). */
static double memory(scope_ctx *c) {
  const char *from;
  long id;
  double asked = (double)scope_param_get(c, "array"), llc = (double)llc_bytes(&from, &id);
  double all = 3 * (asked ? asked : (double)node_stream_rule_bytes(llc, c->nranks)) * c->nranks;
  double avail = mem_available();
  if (!asked && avail > 0 && all > 0.5 * avail)
    all = 0.5 * avail;
  snprintf(c->note, sizeof c->note, "3 arrays of %s on each rank",
           asked ? "that many bytes" : "STREAM's rule per node");
  return all;
}

SCOPE_NODE(node_stream, "node.stream",
           "STREAM copy, scale, add and triad on every rank at once (procs=1: one core alone)",
           "time of one kernel pass, last rank's completion; bandwidth is the node's (all ranks' arrays)", 10);
