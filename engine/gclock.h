/* A global clock: every rank's local time mapped onto rank 0's.
 *
 * Rank 0 runs ping-pong exchanges with each rank in turn (t1 on rank 0, t2 on the rank,
 * t3 on rank 0); the exchange with the smallest round trip of each batch gives an offset
 * estimate o = t2 - (t1 + t3) / 2 at global time (t1 + t3) / 2.  Batches are spread over a
 * span of time and a line o(G) = a + b (G - G0) is fitted through them: a is the offset,
 * b the drift.  This is the approach of SKaMPI's and ReproMPI's HCA clock synchronisation
 * (Hunold & Carpen-Amarie), simplified to a flat tree rooted at rank 0.
 *
 * For testing, SCOPE_TEST_CLOCK="rank:offset_us:drift_ppm[;...]" adds a known offset and
 * drift to that rank's local clock, so the estimator's recovery can be checked. */
#ifndef SCOPE_GCLOCK_H
#define SCOPE_GCLOCK_H
#include <mpi.h>
#include <stdint.h>

#include "core/json.h"

typedef struct {
  double a_ns;     /* offset of this rank's clock from rank 0's at G0 */
  double b;        /* drift: d(offset)/dG */
  double g0_ns;    /* reference global time of the fit */
  double resid_ns; /* rms residual of the batch estimates around the line */
  double se_b;     /* standard error of the drift */
  int batches;
  double inj_offset_ns; /* injected (test mode), else 0 */
  double inj_drift;
  double inj_base_ns;
} gclock_fit;

void gclock_init(int rank); /* reads SCOPE_TEST_CLOCK */
/* This rank's local time in ns (with any injected offset and drift). */
double gclock_local_ns(uint64_t ticks);
double gclock_now_local(void);
/* Collective over comm (rank 0 of comm is the reference): fit every rank's clock. */
void gclock_sync(MPI_Comm comm, double span_s);
double gclock_to_global(double local_ns);
double gclock_to_local(double global_ns);
double gclock_now_global(void);
/* The fit's own estimate of its error at global time g (ns). */
double gclock_predicted_error_ns(double g_ns);
const gclock_fit *gclock_fit_of_self(void);
/* Rank 0 writes a `clock` record (collective: gathers every rank's fit). */
void gclock_record(MPI_Comm comm, json_w *w, int same_host, int *write_it);

#endif
