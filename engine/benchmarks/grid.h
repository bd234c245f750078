/* What the relaxation kernels share (kernel.jacobi, kernel.multigrid): one problem, Laplace's
 * equation on the unit square with the top boundary held at 1 and the others at 0, whose
 * interior starts from the inputs' generator, so both kernels solve the same grid and their
 * checks can recompute it on one rank. */
#ifndef SCOPE_GRID_H
#define SCOPE_GRID_H
#include "kernel.h"

/* Rows [row0 - 1, row0 + rows] of the initial n x n interior grid with its boundary, into u
 * ((rows + 2) x (n + 2), global row -1 and n the boundary rows). */
static inline void grid_initial(double *u, size_t n, size_t row0, size_t rows, uint64_t seed) {
  size_t w = n + 2;
  for (size_t r = 0; r < rows + 2; r++) {
    long g = (long)row0 + (long)r - 1;
    for (size_t j = 0; j < w; j++) {
      double x = 0.0;
      if (g < 0)
        x = 1.0;
      else if (g < (long)n && j > 0 && j <= n)
        x = kernel_entry(seed, 2, (size_t)g, j - 1, n);
      u[r * w + j] = x;
    }
  }
}

/* The sum of point (i, j)'s four neighbours in a grid w wide, in one order everywhere (the
 * checks compare parallel and serial runs bit for bit). */
static inline double grid_neighbours(const double *u, size_t w, size_t i, size_t j) {
  return (u[(i - 1) * w + j] + u[(i + 1) * w + j]) + (u[i * w + j - 1] + u[i * w + j + 1]);
}

#endif
