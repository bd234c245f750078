/* The canary: a fixed, cheap measurement of the machine itself, taken at the start and at the
 * end of every launch, so each stored launch carries the state the machine was in.  Two runs
 * of one configuration can differ because the configuration changed or because the machine
 * did (another tenant, a frequency step, a noisy neighbour on the host); the front end tells
 * them apart by comparing the canaries (analysis/noise.py).
 *
 * The probes use no MPI between ranks on purpose: a change of MPI, transport or tuning moves
 * every MPI figure, and must not be read as a change of the machine.  What they see:
 *  - compute: a chain of dependent multiply-adds (the core's clock, and time stolen from it);
 *  - memory: a copy of twice the last-level cache, at most 16 MiB (the memory path, and who
 *    shares it);
 *  - core to core: a cache-line ping-pong between ranks 0 and 1 where they share a node and
 *    have a core each (where the host put the two virtual cores, which moves every latency);
 *  - steal: the share of CPU time the hypervisor gave to others (/proc/stat), over the launch.
 * All ranks probe at once, as the job loads the machine; the slowest rank's median is kept. */
#include "canary.h"

#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buffers.h"
#include "core/json.h"
#include "core/stats.h"
#include "core/timer.h"
#include "records.h"
#include "scope.h"

#define CANARY_REPS 11
#define CANARY_CHAIN 100000 /* about 0.1-0.4 ms a repetition on current cores */
#define CANARY_TRIPS 200    /* cache-line round trips a repetition */
#define CANARY_COPY_MIN (4ull << 20)
#define CANARY_COPY_MAX (16ull << 20) /* beyond it a probe costs more than it tells */

static volatile double sink; /* keeps the chain's result alive */

static double median_of(double *x, int n) {
  stats_sort(x, (size_t)n);
  return stats_quantile_sorted(x, (size_t)n, 0.5);
}

static double compute_once(void) {
  double x = 1.0, a = 0.999999, b = 1e-7;
  double t0 = timer_wall_s();
  for (int i = 0; i < CANARY_CHAIN; i++)
    x = x * a + b; /* each step waits for the last: latency-bound, not vectorised */
  double t = timer_wall_s() - t0;
  sink = x;
  return t * 1e6;
}

static double copy_once(char *dst, const char *src, size_t n) {
  double t0 = timer_wall_s();
  memcpy(dst, src, n);
  double t = timer_wall_s() - t0;
  sink = dst[n / 2];
  return t * 1e6;
}

typedef struct {
  _Alignas(64) _Atomic uint64_t a;
  _Alignas(64) _Atomic uint64_t b;
} lines;

/* One-way time of a cache-line transfer between ranks 0 and 1, us (median of CANARY_REPS
 * repetitions of CANARY_TRIPS round trips; NaN where it cannot be measured).  Collective. */
static double core_to_core(const run_context *rc) {
  int usable = rc->nranks >= 2 && rc->node0 == rc->node1 && !rc->oversubscribed;
  if (!usable) /* spinning on a shared core would measure the scheduler */
    return NAN;
  scope_ctx c = {.rank = rc->rank, .comm = MPI_COMM_WORLD};
  lines *l = scope_shm_map(&c, sizeof(lines));
  if (!l)
    return NAN;
  double t[CANARY_REPS];
  uint64_t k = 0;
  if (rc->rank == 0) {
    atomic_store(&l->a, 0);
    atomic_store(&l->b, 0);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  for (int r = 0; r < CANARY_REPS && rc->rank < 2; r++) {
    double t0 = timer_wall_s();
    for (int i = 0; i < CANARY_TRIPS; i++) {
      k++;
      if (rc->rank == 0) {
        atomic_store_explicit(&l->a, k, memory_order_release);
        while (atomic_load_explicit(&l->b, memory_order_acquire) != k)
          ;
      } else {
        while (atomic_load_explicit(&l->a, memory_order_acquire) != k)
          ;
        atomic_store_explicit(&l->b, k, memory_order_release);
      }
    }
    t[r] = (timer_wall_s() - t0) * 1e6 / (2.0 * CANARY_TRIPS);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  scope_shm_unmap(l, sizeof(lines));
  return rc->rank == 0 ? median_of(t, CANARY_REPS) : NAN;
}

/* The node's CPU time so far, total and stolen, in the kernel's ticks (0, 0 where unknown). */
static void cpu_ticks(unsigned long long *total, unsigned long long *steal) {
  *total = *steal = 0;
  FILE *f = fopen("/proc/stat", "r");
  if (!f)
    return;
  unsigned long long v[8] = {0};
  if (fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6],
             &v[7]) == 8) {
    for (int i = 0; i < 8; i++)
      *total += v[i];
    *steal = v[7];
  }
  fclose(f);
}

void canary_probe(canary_state *st, const run_context *rc, const char *at) {
  size_t n = 2 * buffers_llc_bytes();
  if (n < CANARY_COPY_MIN)
    n = CANARY_COPY_MIN;
  if (n > CANARY_COPY_MAX)
    n = CANARY_COPY_MAX;
  char *src = malloc(n), *dst = malloc(n);
  double mine[2] = {NAN, NAN}, c[CANARY_REPS], m[CANARY_REPS];
  MPI_Barrier(MPI_COMM_WORLD);
  for (int i = 0; i < CANARY_REPS; i++)
    c[i] = compute_once();
  mine[0] = median_of(c, CANARY_REPS);
  if (src && dst) {
    memset(src, 1, n); /* touched once, so the copy times the memory, not page faults */
    memset(dst, 0, n);
    for (int i = 0; i < CANARY_REPS; i++)
      m[i] = copy_once(dst, src, n);
    mine[1] = median_of(m, CANARY_REPS);
  }
  free(src);
  free(dst);
  double c2c = core_to_core(rc);
  unsigned long long total, steal;
  cpu_ticks(&total, &steal);
  double steal_pct = -1;
  if (st->total && total > st->total)
    steal_pct = 100.0 * (double)(steal - st->steal) / (double)(total - st->total);
  st->total = total;
  st->steal = steal;
  /* a failed allocation on any rank is a NaN, which the maximum would drop: count it apart */
  int ok = !isnan(mine[1]), all_ok;
  MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
  double slowest[2], worst_steal;
  /* Across nodes, every rank's own readings too: which host is slow (a screen's question,
   * analysis/node_screen.py); 16 bytes a rank, gathered once at each end of a launch. */
  int across = !context_one_node(rc);
  double *all = across && rc->rank == 0 ? malloc(sizeof(double) * 2 * (size_t)rc->nranks) : NULL;
  if (across && rc->rank == 0 && !all) {
    fprintf(stderr, "scope-engine: error: out of memory for %d ranks' canary readings\n", rc->nranks);
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
  if (across)
    MPI_Gather(mine, 2, MPI_DOUBLE, all, 2, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  if (!ok)
    mine[1] = 0;
  MPI_Reduce(mine, slowest, 2, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  MPI_Reduce(&steal_pct, &worst_steal, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  if (rc->rank != 0)
    return;
  json_w *w = rec_writer();
  jw_obj_begin(w);
  jw_kstr(w, "type", "canary");
  jw_kstr(w, "at", at);
  jw_kint(w, "repetitions", CANARY_REPS);
  jw_knum(w, "compute_us", slowest[0]);
  jw_kint(w, "copy_bytes", (long long)n);
  jw_knum(w, "copy_us", all_ok ? slowest[1] : NAN); /* null: a rank could not allocate */
  if (!isnan(c2c))
    jw_knum(w, "c2c_us", c2c);
  if (worst_steal >= 0)
    jw_knum(w, "steal_pct", worst_steal);
  if (all) {
    jw_key(w, "per_rank");
    jw_obj_begin(w);
    for (int k = 0; k < 2; k++) {
      jw_key(w, k ? "copy_us" : "compute_us");
      jw_arr_begin(w);
      for (int r = 0; r < rc->nranks; r++)
        jw_num(w, all[2 * r + k]);
      jw_arr_end(w);
    }
    jw_obj_end(w);
    free(all);
  }
  jw_obj_end(w);
  rec_emit();
}
