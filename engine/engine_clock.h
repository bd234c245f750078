/* The engine's global clock (docs/method.md, "The global clock"): the clock library's object
 * (clock/scope_clock.h, whose internals clock/clock_state.h shows the engine), opened on the
 * timer main.c chose, synchronised when a selected test times on it. */
#ifndef SCOPE_ENGINE_CLOCK_H
#define SCOPE_ENGINE_CLOCK_H
#include <mpi.h>

#include "clock/clock_state.h"
#include "core/json.h"

extern scope_clock *engine_clock;

/* Collective over MPI_COMM_WORLD: the clock on the selected timer, not yet synchronised. */
void engine_clock_open(const char *method, int per_rank, double span_s);
/* Collective: synchronise, and time with the clock's calibration from then on. */
void engine_clock_sync(void);
/* Collective: synchronise again where the library's rule says so (scope_clock_keep); 1 when it did. */
int engine_clock_keep(double bound_ns, double ahead_s);
/* Rank 0 writes a `clock` record (collective: gathers every rank's map) at a synchronisation
 * (at = "sync") or at the launch's end ("end": how the last maps held, after drifting). */
void engine_clock_record(json_w *w, int same_host, const char *at, int *write_it);

#endif
