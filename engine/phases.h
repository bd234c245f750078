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
/* A repetition's accounts run from `now` to `now` (local ns): the very instants its timing takes,
 * so a rank's phases add up to its own time. */
void phases_rep_begin(struct scope_phases *ph, double now);
void phases_rep_end(struct scope_phases *ph, double now);
/* Collective over comm: splits the chunk's communications into idle and comm, and keeps the
 * repetitions' accounts when `measuring`. */
/* keep[r]: whether repetition r of the chunk counts (the window rules', the same on every rank);
 * NULL: all of them. */
void phases_chunk_end(struct scope_phases *ph, MPI_Comm comm, int measuring, const unsigned char *keep);
/* Collective: every rank's accounts to rank 0. */
void phases_gather(struct scope_phases *ph, MPI_Comm comm);
/* Rank 0: the `phases` and `ops` members of a point record. */
void phases_write(const struct scope_phases *ph, json_w *w);

#endif
