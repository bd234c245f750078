/* The MPI's control variables through MPI_T (--cvars). */
#ifndef SCOPE_CVARS_H
#define SCOPE_CVARS_H
#include <stdio.h>

#include "scope.h"

/* Records of the control variables whose names start with prefix; 0, or 2 when the MPI has none. */
int cvars_list(const char *prefix, FILE *out);

#endif
