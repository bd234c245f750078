/* Kernel timing's phase accounts (the calls a test makes are declared in scope.h).  The timing
 * methods bracket each repetition with phases_rep_begin/end and close each chunk of
 * repetitions with phases_chunk_end, which exchanges the communications' entry times and
 * splits their time into idle and communication; rec_point writes what phases_gather
 * brought to rank 0. */
#ifndef SCOPE_PHASES_H
#define SCOPE_PHASES_H
#include "core/json.h"
#include "scope.h"

struct scope_phases *phases_new(void);
void phases_free(struct scope_phases *ph);
/* Forgets the named operations (before setup runs again). */
void phases_reset_ops(struct scope_phases *ph);
void phases_rep_begin(struct scope_phases *ph);
void phases_rep_end(struct scope_phases *ph);
/* Collective over comm: splits the chunk's communications into idle and comm, and keeps the
 * repetitions' accounts when `measuring`. */
void phases_chunk_end(struct scope_phases *ph, MPI_Comm comm, int measuring);
/* Collective: every rank's accounts to rank 0. */
void phases_gather(struct scope_phases *ph, MPI_Comm comm);
/* Rank 0: the `phases` and `ops` members of a point record. */
void phases_write(const struct scope_phases *ph, json_w *w);

#endif
