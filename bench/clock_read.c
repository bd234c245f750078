/* What a reading of the clock library costs (issue 57, bench/clock_read.py): ns
 * a call of scope_clock_global_ns (with and without its bound) and
 * scope_clock_local_ns against a bare read of the same timer inlined here, each
 * timed in rounds of READS calls, the kinds alternating round by round; one
 * JSON line a rank with the median of each. */
#include <mpi.h>
#include <scope_clock.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

enum { READS = 100000, ROUNDS = 31, KINDS = 5 };

static double wall_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static volatile double sink;

static double bare(const char *timer) { /* the timer the library chose, read as
                                           the engine reads it */
#if defined(__x86_64__)
  if (strcmp(timer, "tsc") == 0) {
    unsigned aux;
    return (double)__rdtscp(&aux);
  }
#endif
  if (strcmp(timer, "mpi_wtime") == 0)
    return MPI_Wtime();
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
  return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  scope_clock *c;
  if (scope_clock_init(MPI_COMM_WORLD, NULL, &c))
    MPI_Abort(MPI_COMM_WORLD, 1);
  const char *timer = scope_clock_timer(c);
  static double ns[KINDS][ROUNDS];
  double bound;
  for (int r = 0; r < ROUNDS; r++)
    for (int k = 0; k < KINDS; k++) {
      double t0 = wall_ns(), s = 0;
      for (int i = 0; i < READS; i++)
        switch (k) {
        case 0:
          s += bare(timer);
          break;
        case 1:
          s += scope_clock_local_ns(c);
          break;
        case 2:
          s += scope_clock_global_ns(c, NULL);
          break;
        case 3:
          s += scope_clock_global_ns(c, &bound);
          break;
        default:
          s += wall_ns(); /* the loop's own clock, for scale */
        }
      sink = s;
      ns[k][r] = (wall_ns() - t0) / READS;
    }
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  for (int k = 0; k < KINDS; k++)
    qsort(ns[k], ROUNDS, sizeof(double), cmp);
  printf("{\"rank\":%d,\"timer\":\"%s\",\"bare_ns\":%.3f,\"local_ns\":%.3f,"
         "\"global_ns\":%.3f,"
         "\"global_bound_ns\":%.3f,\"clock_gettime_ns\":%.3f,\"sync_s\":%.6f,"
         "\"library\":\"%s\"}\n",
         rank, timer, ns[0][ROUNDS / 2], ns[1][ROUNDS / 2], ns[2][ROUNDS / 2],
         ns[3][ROUNDS / 2], ns[4][ROUNDS / 2], scope_clock_sync_seconds(c),
         scope_clock_version());
  scope_clock_finalize(&c);
  MPI_Finalize();
  return 0;
}
