/* What the user selected, resolved before MPI starts: the tests (names or globs against the
 * registry), each test's parameter values (--param), the --pattern file; and, once the run's
 * size is known, the process counts of window-timed tests. */
#ifndef SCOPE_SELECT_H
#define SCOPE_SELECT_H
#include "scope.h"

#define SEL_MAX_TESTS 256
#define SEL_MAX_VALUES 32

/* The values asked for each parameter of one test, in schema order. */
typedef struct {
  long v[SCOPE_MAX_PARAMS][SEL_MAX_VALUES];
  int n[SCOPE_MAX_PARAMS];
  char rejected[256];              /* values asked that this test does not accept (reported in a skip) */
  const unsigned long long *sizes; /* the sizes it is swept over: --sizes, or its --test-sizes */
  long nsizes;
} test_values;

/* Fills sel[] in registry order; every list item must match a test. */
int sel_tests(const char *spec, const scope_test **sel);
/* Resolves the --param assignments for every selected test (tv[t] for sel[t]). */
void sel_params(const char *const *assign, int nassign, const scope_test **sel, int nsel, test_values *tv);
/* Per-test sizes: every --test-sizes item GLOB=SIZES sets the sizes of the selected tests it
 * matches (a later item over an earlier one); the others keep sizes[0..nsizes).  Exits with
 * the reason on a bad item. */
void sel_test_sizes(const char *const *items, int nitems, const scope_test **sel, int nsel, test_values *tv,
                    const unsigned long long *sizes, long nsizes);
/* Combinations of parameter values of one test. */
long sel_combos(const scope_test *T, const test_values *tv);
/* The values of combination `comb` into p[]. */
void sel_combo(const scope_test *T, const test_values *tv, long comb, long *p);
/* Process counts of a window-timed test ("all", "pow2" or a list), for a run of nranks. */
int sel_procs(const char *spec, const scope_test *T, int nranks, int *out, int max_out);
/* Loads --pattern FILE; returns the largest rank it names. */
int sel_pattern(const char *path);

/* "a whole number from 1 to 8", "yes or no", "one of a, b" */
void sel_describe_domain(const scope_param *p, char *buf, size_t len);

#endif
