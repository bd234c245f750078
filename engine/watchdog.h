/* The engine dies with the scope process that launched it (watchdog.c says how and why). */
#ifndef SCOPE_WATCHDOG_H
#define SCOPE_WATCHDOG_H

/* Starts the watch on this rank when scope launched it on this host; `io_dir` (rank 0's to
 * remove, or NULL) is the run's fresh --io-dir. */
void watchdog_start(int rank, const char *io_dir);

/* Under scope's watch, unlinks the MPI's node segments this rank has mapped: call it once
 * every rank has passed MPI_Init (after a barrier). */
void watchdog_unlink_mpi_segments(void);

#endif
