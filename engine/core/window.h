/* The rules of window timing (collectives), as named functions so they can be unit-tested and
 * read in one place.  Repetition k of a chunk starts when every rank's clock, mapped to global
 * time, reaches T0 + k w (SKaMPI, ReproMPI).  A repetition in which any rank started later
 * than the lateness bound is invalid: counted, not used. */
#ifndef SCOPE_WINDOW_H
#define SCOPE_WINDOW_H
#include <stddef.h>

/* A start later than this (ns) invalidates a repetition: four times the clock's error, and
 * never less than 0.5 us (a start spin on the TSC resolves tens of ns; a late start is counted,
 * and a window where more than a quarter are late doubles: window_next_ns). */
double window_late_ns(double sync_error_ns);

/* The first window after warm-up: three times the operation's warm median (room for its
 * spread), at least 2 us, plus room for four lateness bounds. */
double window_initial_ns(double warm_median_ns, double late_ns);

/* The shortest window: room for the operation's warm median and spread, at least 1 us, and two
 * lateness bounds; shrinking stops there. */
double window_floor_ns(double warm_median_ns, double late_ns);

/* The longest window: a sixteenth of the point's budget, or eight initial windows where the
 * operation itself is that long, and never past 1 s.  On a machine whose other load deschedules
 * ranks for milliseconds, late starts are not the window's fault: doubling without this bound
 * took windows to 1 s and a 0.05 s point to its 10 s hard limit (window_give_up); bounded, the
 * repetitions that kept the schedule accumulate within the budget and the record counts the
 * late ones. */
double window_ceiling_ns(double budget_s, double initial_ns);

/* The next window, judged once `repetitions` (every one run at this window, at least 20) say
 * enough: doubled when more than a quarter started late (the window is too short for this
 * operation here), up to `ceiling`; halved, down to `floor`, when at most 2 % did (every
 * repetition waits out the window: idle time is what window timing costs, and on this VM a
 * 2 us allreduce measured 0.4 us in 2 us windows and 1.3 us in 46 us ones, so the window is
 * kept as short as starts stay on time).  A rank descheduled for a millisecond makes every
 * repetition of that millisecond late whatever the window: with 10 % over one chunk of ten
 * the window doubled to hundreds of us and a point ran to its budget in 3 of 8 sweeps. */
double window_next_ns(double window_ns, size_t repetitions, size_t valid, double floor, double ceiling);

/* How far ahead of now (ns) the next chunk's first repetition is placed: two windows, and at
 * least 50 us, so the broadcast of T0 reaches every rank in time (tens of microseconds across a
 * network; a rank it reaches late starts late, and that repetition is counted invalid). */
double window_lead_ns(double window_ns);

/* Whether to stop a point that the budget has overrun because repetitions keep starting
 * late: after 4 budgets once 6 valid samples exist, and after 20 budgets + 10 s in any case
 * (the record then shows the invalid count). */
int window_give_up(double elapsed_s, double budget_s, size_t valid_samples);

#endif
