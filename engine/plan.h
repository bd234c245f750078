/* scope-engine --plan N: what a run of N ranks with the same options would measure, written
 * as JSON Lines without starting MPI (docs/records.md: `planned`, then `plan`).  It is the
 * run's own selection (select.c) with the checks that need the run's size, so the front end
 * asks it before it creates a run and keeps no second parser of sizes, test globs, parameters,
 * pattern files or limits. */
#ifndef SCOPE_PLAN_H
#define SCOPE_PLAN_H
#include "select.h"

/* Refuses (opt_die, exit 2) what a run of nranks could not do; else writes the plan to stdout
 * and returns 0. */
int plan_print(int nranks, const scope_test **sel, const test_values *tv, int nsel, int pattern_max_rank);

#endif
