/* Stamps the steps of a ring halo exchange on SCOPE's global clock
 * (docs/clock-library.md): mpicc stamp.c $(pkg-config --cflags --libs
 * scope-clock) -o stamp mpiexec -n 4 ./stamp run1        # each rank writes
 * run1.RANK.jsonl scope import run1 && scope report last -o run1.html A second
 * argument "rank" makes every rank a clock domain of its own, as if each had a
 * host. */
#include <mpi.h>
#include <scope_clock.h>
#include <stdio.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size, e;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  scope_clock *clk;
  scope_clock_options o = {.per_rank = argc > 2 && argv[2][0] == 'r'};
  if ((e = scope_clock_init(MPI_COMM_WORLD, &o, &clk)) ||
      (e = scope_clock_events_open(clk, argc > 1 ? argv[1] : "events"))) {
    fprintf(stderr, "stamp: %s\n", scope_clock_strerror(e));
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  static double out[4096], in[4096];
  for (int step = 0; step < 20; step++) {
    scope_clock_event(clk, "compute");
    for (volatile long i = 0; i < 200000L * (1 + rank % 2);
         i++) /* the odd ranks work twice as long */
      ;
    scope_clock_event(clk, "halo");
    MPI_Sendrecv(out, 4096, MPI_DOUBLE, (rank + 1) % size, 0, in, 4096,
                 MPI_DOUBLE, (rank + size - 1) % size, 0, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    scope_clock_event(clk, "halo_done");
    scope_clock_keep(
        clk, 1000,
        0.01); /* collective: synchronises again only when the bound needs it */
  }
  double bound, t = scope_clock_global_ns(clk, &bound);
  if (rank == size - 1) /* rank 0's clock is global time: its own bound is 0 */
    printf("stamp: %d ranks on %s, rank %d's global time %.0f ns +- %.1f ns\n",
           size, scope_clock_timer(clk), rank, t, bound);
  scope_clock_finalize(&clk);
  MPI_Finalize();
  return 0;
}
