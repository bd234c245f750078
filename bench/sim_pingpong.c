/* A ping-pong with nothing around it, for SimGrid (bench/sim_links.py): what
 * the simulator itself gives for one 0-byte message each way on a platform, the
 * reference beside SCOPE's Hockney t0. Prints one JSON line: the one-way time
 * (half the round trip), in us, over ITERS round trips. */
#include <mpi.h>
#include <stdio.h>

enum { ITERS = 1000 };

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank;
  char byte = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  for (int i = 0; i < ITERS; i++) {
    if (rank == 0) {
      MPI_Send(&byte, 0, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
      MPI_Recv(&byte, 0, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (rank == 1) {
      MPI_Recv(&byte, 0, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(&byte, 0, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
    }
  }
  double t = (MPI_Wtime() - t0) / ITERS / 2 * 1e6;
  if (rank == 0)
    printf("{\"one_way_us\": %.6f}\n", t);
  MPI_Finalize();
  return 0;
}
