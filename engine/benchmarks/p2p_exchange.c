/* Exchange (IMB Exchange): every rank of a periodic chain sends to and receives from both
 * neighbours at once, the boundary exchange of a 1-D domain decomposition.  Time = one
 * iteration; bandwidth credits 4 x size per rank per iteration (two sends, two receives),
 * as IMB does. */
#include <stdlib.h>

#include "../scope.h"

static const scope_param params[] = {
    SCOPE_PARAM_MODE_NO_READY,
};

enum { TO_RIGHT = 1, TO_LEFT = 2 };

static int left(const scope_ctx *c) {
  return (c->rank + c->nranks - 1) % c->nranks;
}
static int right(const scope_ctx *c) {
  return (c->rank + 1) % c->nranks;
}

static int setup(scope_ctx *c, void **st) {
  int *mode = malloc(sizeof *mode);
  if (!(*st = mode))
    return -1;
  *mode = (int)scope_param_get(c, "mode");
  c->rbuf_bytes = 2 * c->size;
  c->ops_per_iter = 1;
  c->bytes_per_op = 4.0 * (double)c->size;
  if (scope_param_get(c, "mode") == MODE_BUFFERED)
    scope_bsend_attach(2, c->size);
  return 0;
}

static void run(scope_ctx *c, void *st) {
  MPI_Request r[4];
  int mode = *(const int *)st;
  /* Tags tell the two messages apart when both neighbours are the same rank (2 ranks). */
  MPI_Irecv(c->rbuf, (int)c->size, MPI_BYTE, left(c), TO_RIGHT, c->comm, &r[0]);
  MPI_Irecv(c->rbuf + c->size, (int)c->size, MPI_BYTE, right(c), TO_LEFT, c->comm, &r[1]);
  scope_isend(mode, c->sbuf, c->size, right(c), TO_RIGHT, c->comm, &r[2]);
  scope_isend(mode, c->sbuf, c->size, left(c), TO_LEFT, c->comm, &r[3]);
  MPI_Waitall(4, r, MPI_STATUSES_IGNORE);
}

static size_t verify(scope_ctx *c, void *st, uint64_t seed, size_t *first) {
  (void)st;
  return scope_check(c->rbuf, c->size, seed, left(c), first) +
         scope_check(c->rbuf + c->size, c->size, seed, right(c), first);
}

static void teardown(scope_ctx *c, void *st) {
  if (scope_param_get(c, "mode") == MODE_BUFFERED)
    scope_bsend_detach();
  free(st);
}

const scope_test test_p2p_exchange = {
    .name = "p2p.exchange",
    .level = "p2p",
    .summary = "every rank exchanges with both neighbours of a periodic chain (IMB Exchange)",
    .measures = "time of one two-neighbour exchange",
    .min_ranks = 2,
    .sized = 1,
    .roles = {"peer:imb_Exchange"},
    SCOPE_PARAMS(params),
    .setup = setup,
    .run = run,
    .verify = verify,
    .teardown = teardown,
};
