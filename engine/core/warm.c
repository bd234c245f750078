#include "warm.h"

double warm_spin(double cap_s, double (*now)(void)) {
  double t0 = now(), t = t0;
  double counts[WARM_STEADY] = {0};
  int slices = 0;
  while (t - t0 < cap_s) {
    double end = t + WARM_SLICE_S, n = 0;
    while ((t = now()) < end)
      n++;
    counts[slices++ % WARM_STEADY] = n;
    if (slices < WARM_STEADY)
      continue;
    double hi = 0, lo = counts[0];
    for (int i = 0; i < WARM_STEADY; i++) {
      hi = counts[i] > hi ? counts[i] : hi;
      lo = counts[i] < lo ? counts[i] : lo;
    }
    if (hi > 0 && lo >= (1 - WARM_TOLERANCE) * hi)
      break;
  }
  return t - t0;
}
