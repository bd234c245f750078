/* The canary: the machine's own state measured at the start and the end of a launch
 * (canary.c says what it measures and why it leaves MPI out). */
#ifndef SCOPE_CANARY_H
#define SCOPE_CANARY_H
#include "context.h"

typedef struct {
  unsigned long long total, steal; /* /proc/stat at the previous probe */
} canary_state;

/* Collective over MPI_COMM_WORLD; rank 0 writes a `canary` record with `at` = start | end. */
void canary_probe(canary_state *st, const run_context *rc, const char *at);

#endif
