/* What the MPI chose, through the MPI tool information interface (MPI_T, MPI 3.0 ch. 14) and
 * the process's own maps: the transport libraries it loaded, its protocol thresholds and
 * selections (control variables), and its performance variables sampled around each point. */
#ifndef SCOPE_MPIT_H
#define SCOPE_MPIT_H
#include <mpi.h>

#include "core/json.h"

/* After MPI_Init, on every rank: opens an MPI_T session and finds the variables to read. */
void mpit_open(void);
void mpit_close(void);
/* Rank 0, in the context record: {"libraries": [...], "cvars": {name: value}}. */
void mpit_write_transport(json_w *w);
/* Around a point's timed measurement, on every rank of comm (collective at the end). */
void mpit_point_begin(MPI_Comm comm);
void mpit_point_end(MPI_Comm comm);
/* Rank 0, in the point record: "mpi_t": [{name, class, before, after}] summed over the
 * point's ranks, the variables that were not zero; nothing when the MPI offers none. */
void mpit_write_point(json_w *w);

#endif
