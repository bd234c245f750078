#include "window.h"

#include <math.h>

double window_late_ns(double sync_error_ns) {
  return fmax(500.0, 4 * sync_error_ns);
}

double window_initial_ns(double warm_median_ns, double late_ns) {
  return fmax(3 * warm_median_ns, 2000.0) + 4 * late_ns;
}

double window_floor_ns(double warm_median_ns, double late_ns) {
  return fmax(1.5 * warm_median_ns, 1000.0) + 2 * late_ns;
}

double window_ceiling_ns(double budget_s, double initial_ns) {
  return fmin(1e9, fmax(budget_s * 1e9 / 16, 8 * initial_ns));
}

double window_next_ns(double window_ns, size_t repetitions, size_t valid, double floor, double ceiling) {
  double late = repetitions ? (double)(repetitions - valid) / (double)repetitions : 0;
  if (repetitions >= 20 && late > 0.25 && window_ns < ceiling)
    return fmin(2 * window_ns, fmax(ceiling, window_ns));
  if (repetitions >= 20 && late <= 0.02)
    return fmax(0.5 * window_ns, floor);
  return window_ns;
}

double window_lead_ns(double window_ns) {
  return fmax(2 * window_ns, 50000.0);
}

int window_give_up(double elapsed_s, double budget_s, size_t valid_samples) {
  return (elapsed_s > 4 * budget_s && valid_samples >= 6) || elapsed_s > 20 * budget_s + 10;
}
