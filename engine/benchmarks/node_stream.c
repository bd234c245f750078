/* McCalpin's STREAM kernels (copy, scale, add, triad) on every rank of the point at once:
 * the single-node level (SCOPE §6.4) that explains the memory-bound figures above it.
 * Window-timed over --procs, so procs=1 is one core alone and procs=all the whole node; the
 * time is the last rank's completion and the bandwidth the node's (STREAM's byte counts, every
 * rank's arrays).  Each array is at least 4x the last-level cache (STREAM's rule), detected
 * and recorded. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "../core/pattern.h"
#include "node.h"

enum { COPY, SCALE, ADD, TRIAD };
static const char *const kernels[] = {"copy", "scale", "add", "triad", NULL};
static const scope_param params[] = {
    {"kernel", SP_ENUM, "triad", 0, 0, kernels, "copy c=a, scale b=q*c, add c=a+b, triad a=b+q*c (q = 3)"},
    {"array", SP_INT, "0", 0, 1L << 40, NULL,
     "bytes in each of a rank's 3 arrays (0: 4x the last-level cache, STREAM's rule, capped to the memory)"},
};
/* arrays read and written by one pass of each kernel (STREAM's counts) */
static const int arrays_moved[] = {2, 2, 3, 3};
#define Q 3.0

/* The last-level cache as the kernel describes it (sysfs: on this VM glibc's sysconf says
 * 384 MiB where the CPU has 32 MiB), else sysconf's, else 32 MiB; and where it came from. */
static size_t llc_bytes(const char **from) {
  FILE *f = fopen("/sys/devices/system/cpu/cpu0/cache/index3/size", "r");
  unsigned long v = 0;
  char unit = 0;
  if (f) {
    int got = fscanf(f, "%lu%c", &v, &unit);
    fclose(f);
    if (got >= 1 && v > 0) {
      *from = "sysfs";
      return (size_t)v << (unit == 'M' ? 20 : unit == 'K' ? 10 : 0);
    }
  }
  long sc = sysconf(_SC_LEVEL3_CACHE_SIZE);
  *from = sc > 0 ? "sysconf" : "assumed";
  return sc > 0 ? (size_t)sc : (size_t)32 << 20;
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

/* STREAM's 4x-cache arrays, or what fits: all of this node's ranks' arrays within half the
 * memory available to the tightest node (agreed over the point, so every rank moves the same
 * bytes); 0 when even that is not larger than the cache. */
static size_t auto_array(scope_ctx *c, size_t llc, int *capped) {
  int here = 0;
  for (int r = 0; r < c->nranks; r++)
    here += c->node[r] == c->node[c->rank];
  double avail = mem_available(), room = avail > 0 ? 0.5 * avail / (3.0 * here) : 1e300;
  MPI_Allreduce(MPI_IN_PLACE, &room, 1, MPI_DOUBLE, MPI_MIN, c->comm);
  size_t want = 4 * llc;
  *capped = room < (double)want;
  if (*capped)
    want = (size_t)room & ~(size_t)((1 << 20) - 1); /* whole MiB: the same on every rank */
  return want > llc ? want : 0;
}

static int setup(scope_ctx *c, void **st) {
  node_arrays *s = calloc(1, sizeof *s);
  *st = s;
  if (!s)
    return -1;
  s->kernel = (int)scope_param_get(c, "kernel");
  const char *from;
  size_t llc = llc_bytes(&from), asked = (size_t)scope_param_get(c, "array");
  int capped = 0;
  size_t bytes = asked ? asked : auto_array(c, llc, &capped);
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
  c->extra[1].value = (double)llc;
  c->extra[2].name = "capped";
  c->extra[2].value = capped;
  c->nextra = 3;
  double mib = (double)(s->n * sizeof(double)) / (1 << 20);
  const char *why = asked ? "as asked; STREAM's rule: 4x" : capped ? "capped to half the free memory; rule: 4x" : "4x";
  snprintf(c->note, sizeof c->note,
           "%d rank(s) at once, 3 arrays of %.4g MiB each per rank (%s the %zu MiB L3, from %s)", c->nranks, mib, why,
           llc >> 20, from);
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

/* Three arrays a rank: as asked, or STREAM's 4x the cache, which setup caps to half the memory
 * available (the plan is asked on the host the run starts from). */
static double memory(scope_ctx *c) {
  const char *from;
  double asked = (double)scope_param_get(c, "array"), llc = (double)llc_bytes(&from);
  double all = 3 * (asked ? asked : 4 * llc) * c->nranks, avail = mem_available();
  if (!asked && avail > 0 && all > 0.5 * avail)
    all = 0.5 * avail;
  snprintf(c->note, sizeof c->note, "3 arrays of %s on each rank", asked ? "that many bytes" : "4x the cache");
  return all;
}

SCOPE_NODE(node_stream, "node.stream",
           "STREAM copy, scale, add and triad on every rank at once (procs=1: one core alone)",
           "time of one kernel pass, last rank's completion; bandwidth is the node's (all ranks' arrays)", 10);
