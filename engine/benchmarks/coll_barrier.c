/* MPI_Barrier against group size (SCOPE §6.5.4): pure synchronisation, no data. */
#include "coll.h"

static const scope_param params[] = {SCOPE_PARAM_NB, SCOPE_PARAM_API};

static void op(scope_ctx *c, void *st, int how, MPI_Request *req);

static int setup(scope_ctx *c, void **st) {
  c->bytes_per_op = 0;
  c->self_sync = 1;
  return coll_setup_state(c, st, op);
}

static void op(scope_ctx *c, void *st, int how, MPI_Request *req) {
  (void)st;
  COLL_DO(how, req, Barrier, Ibarrier, c->comm);
}

/* No data moves; what can be checked is that every rank came through the same number of
 * barriers, which a mismatch would have turned into a hang or an MPI error. */
static size_t verify(scope_ctx *c, void *st, uint64_t seed, size_t *first) {
  (void)c, (void)st, (void)seed;
  *first = 0;
  return 0;
}

SCOPE_COLLECTIVE(coll_barrier, "coll.barrier", 0, "MPI_Barrier: synchronisation cost against the number of processes",
                 params, coll_free, "model:collective", "peer:osu_barrier", "peer:osu_barrier_persistent",
                 "peer:imb_Barrier");
