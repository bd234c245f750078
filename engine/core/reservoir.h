/* A uniform sample of at most `cap` values from a stream of unknown length (Vitter's algorithm R,
 * "Random sampling with a reservoir", ACM TOMS 1985): after n offers each value is kept with
 * probability cap / n.  Seeded (core/rng.h), so a run repeats its sample.  MPI-free. */
#ifndef SCOPE_RESERVOIR_H
#define SCOPE_RESERVOIR_H
#include <stddef.h>
#include <stdint.h>

#include "rng.h"

typedef struct {
  double *keep; /* room for cap values */
  long cap, kept, seen;
  uint64_t state;
} reservoir;

static inline void reservoir_offer(reservoir *r, double v) {
  if (r->kept < r->cap) {
    r->keep[r->kept++] = v;
  } else { /* in place of a uniformly chosen kept value, with probability cap / (seen + 1) */
    uint64_t j = splitmix64(&r->state) % (uint64_t)(r->seen + 1);
    if (j < (uint64_t)r->cap)
      r->keep[j] = v;
  }
  r->seen++;
}

#endif
