/* The reference SCOPE is measured against: an OSU-style ping-pong with nothing around it.
 *
 *   bare_pingpong loop SIZE ITERS BLOCKS   one-way time per block mean (us), one JSON line
 *   bare_pingpong fixed                    the fixed-count sweep of OSU's habit: 0 B .. 4 MiB,
 *                                          10,000 iterations below 8 KiB and 1,000 above, a
 *                                          fixed warm-up (1,000 / 100); per size the median and
 *                                          the 95 % CI of the median of per-iteration times. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../engine/core/stats.h"

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec * 1e-3;
}

static void pingpong(int rank, char *buf, int n) {
  if (rank == 0) {
    MPI_Send(buf, n, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
    MPI_Recv(buf, n, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  } else if (rank == 1) {
    MPI_Recv(buf, n, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Send(buf, n, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
  }
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  char *buf = calloc(4u << 20, 1);
  if (argc >= 5 && strcmp(argv[1], "loop") == 0) {
    int n = atoi(argv[2]), iters = atoi(argv[3]), blocks = atoi(argv[4]);
    double *means = malloc(sizeof(double) * (size_t)blocks);
    for (int i = 0; i < iters; i++) /* warm-up */
      pingpong(rank, buf, n);
    for (int b = 0; b < blocks; b++) {
      MPI_Barrier(MPI_COMM_WORLD);
      double t0 = MPI_Wtime();
      for (int i = 0; i < iters; i++)
        pingpong(rank, buf, n);
      means[b] = (MPI_Wtime() - t0) * 1e6 / iters / 2;
    }
    if (rank == 0) {
      printf("{\"blocks\":[");
      for (int b = 0; b < blocks; b++)
        printf("%s%.6f", b ? "," : "", means[b]);
      printf("]}\n");
    }
    free(means);
  } else if (argc >= 2 && strcmp(argv[1], "fixed") == 0) {
    double t_start = MPI_Wtime();
    double *t = malloc(sizeof(double) * 10000);
    if (rank == 0)
      printf("{\"sizes\":[");
    for (long n = 0, first = 1; n <= (4 << 20); n = n ? n * 2 : 1, first = 0) {
      int iters = n < 8192 ? 10000 : 1000, skip = n < 8192 ? 1000 : 100;
      for (int i = 0; i < skip; i++)
        pingpong(rank, buf, (int)n);
      double prev = now_us();
      for (int i = 0; i < iters; i++) {
        pingpong(rank, buf, (int)n);
        double x = now_us();
        t[i] = (x - prev) / 2;
        prev = x;
      }
      if (rank == 0) {
        stats_summary s;
        stats_summarise(t, (size_t)iters, &s);
        printf("%s{\"size\":%ld,\"count\":%d,\"median\":%.6f,\"ci_rel\":%.6f}", first ? "" : ",", n, iters, s.median,
               s.ci_rel);
      }
    }
    if (rank == 0)
      printf("],\"seconds\":%.6f}\n", MPI_Wtime() - t_start);
    free(t);
  } else if (rank == 0) {
    fprintf(stderr, "usage: bare_pingpong loop SIZE ITERS BLOCKS | fixed\n");
  }
  free(buf);
  MPI_Finalize();
  return 0;
}
