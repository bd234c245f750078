/* The spin before the first point on the global clock: every rank busy until its core runs at
 * a steady rate, so that the first window-timed points are not measured on a core still being
 * handed to the rank (a vCPU woken from idle, the launcher's own processes still settling). */
#ifndef SCOPE_WARM_H
#define SCOPE_WARM_H

#define WARM_SLICE_S 0.005 /* the spin is judged in slices of this length */
#define WARM_STEADY 4      /* slices in a row within WARM_TOLERANCE of their largest */
#define WARM_TOLERANCE 0.02

/* Spins, reading `now` (seconds) in a loop, until WARM_STEADY slices in a row read it as
 * often as each other (within WARM_TOLERANCE: a slice in which the rank lost its core reads
 * it fewer times), or until `cap_s`.  Returns the seconds spun. */
double warm_spin(double cap_s, double (*now)(void));

#endif
