/* Two threads on each rank, each with a clock of its own on a communicator of
 * its own (the clock library's claim: objects share no state,
 * tests/test_clock_library.py).  Each thread synchronises, then checks that its
 * readings go forward and that its bound is finite; rank 0's threads read
 * global time with a bound of 0.  Prints one line a rank: "ok" or what failed.
 */
#include <math.h>
#include <mpi.h>
#include <pthread.h>
#include <scope_clock.h>
#include <stdio.h>

typedef struct {
  MPI_Comm comm;
  int failed;
} job;

static void *clock_thread(void *arg) {
  job *j = arg;
  scope_clock *c;
  scope_clock_options o = {.per_rank = 1, .span_s = 0.01, .warm_s = -1};
  if (scope_clock_init(j->comm, &o, &c)) {
    j->failed = 1;
    return NULL;
  }
  int rank;
  MPI_Comm_rank(j->comm, &rank);
  double prev = -INFINITY, bound;
  for (int i = 0; i < 100000; i++) {
    double t = scope_clock_global_ns(c, &bound);
    if (!(t >= prev) || !isfinite(bound) || bound < 0 ||
        (rank == 0 && bound != 0))
      j->failed = 1;
    prev = t;
  }
  if (scope_clock_sync(c) || scope_clock_finalize(&c) || c != NULL)
    j->failed = 1;
  return NULL;
}

int main(int argc, char **argv) {
  int provided, rank;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (provided < MPI_THREAD_MULTIPLE) {
    printf("rank %d: skip: no MPI_THREAD_MULTIPLE\n", rank);
    MPI_Finalize();
    return 0;
  }
  job jobs[2];
  pthread_t th[2];
  for (int k = 0; k < 2;
       k++) { /* dup'd in the same order on every rank, before the threads */
    MPI_Comm_dup(MPI_COMM_WORLD, &jobs[k].comm);
    jobs[k].failed = 0;
  }
  for (int k = 0; k < 2; k++)
    pthread_create(&th[k], NULL, clock_thread, &jobs[k]);
  for (int k = 0; k < 2; k++)
    pthread_join(th[k], NULL);
  printf("rank %d: %s\n", rank,
         jobs[0].failed || jobs[1].failed ? "failed" : "ok");
  for (int k = 0; k < 2; k++)
    MPI_Comm_free(&jobs[k].comm);
  MPI_Finalize();
  return 0;
}
