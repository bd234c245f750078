/* MPI_Alltoallv: rank i sends rank j a block of n bytes, or half of it when i + j is odd
 * (blocks=even: always n, as osu_alltoallv). */
#include "coll.h"

static int cnt(size_t n, int i, int j, int even) {
  return (int)((i + j) % 2 && !even ? n / 2 : n);
}

static const scope_param params[] = {SCOPE_PARAM_NB, SCOPE_PARAM_API, SCOPE_PARAM_BLOCKS};

static void op(scope_ctx *c, void *st, int how, MPI_Request *req);

static int setup(scope_ctx *c, void **st) {
  c->sbuf_bytes = c->rbuf_bytes = c->size * (size_t)c->nranks;
  if (coll_vsetup(c, st, op))
    return -1;
  coll_vstate *s = *st;
  c->bytes_per_op = 0; /* every block between distinct ranks */
  for (int i = 0; i < c->nranks; i++)
    for (int j = 0; j < c->nranks; j++)
      c->bytes_per_op += i == j ? 0 : cnt(c->size, i, j, s->even);
  int sat = 0, rat = 0;
  for (int j = 0; j < c->nranks; j++) {
    s->scounts[j] = cnt(c->size, c->rank, j, s->even);
    s->sdispls[j] = sat;
    sat += s->scounts[j];
    s->counts[j] = cnt(c->size, j, c->rank, s->even);
    s->displs[j] = rat;
    rat += s->counts[j];
  }
  return 0;
}

static void op(scope_ctx *c, void *st, int how, MPI_Request *req) {
  coll_vstate *s = st;
  COLL_DO(how, req, Alltoallv, Ialltoallv, c->sbuf, s->scounts, s->sdispls, MPI_BYTE, c->rbuf, s->counts, s->displs,
          MPI_BYTE, c->comm);
}

/* The block from rank j starts, in j's send buffer, after j's blocks for ranks 0 .. me-1. */
static size_t verify(scope_ctx *c, void *st, uint64_t seed, size_t *first) {
  coll_vstate *s = st;
  size_t bad = 0;
  for (int j = 0; j < c->nranks; j++) {
    size_t off = 0;
    for (int k = 0; k < c->rank; k++)
      off += (size_t)cnt(c->size, j, k, s->even);
    bad += scope_check_at(c->rbuf + s->displs[j], (size_t)s->counts[j], seed, j, off, first);
  }
  return bad;
}

SCOPE_COLLECTIVE(coll_alltoallv, "coll.alltoallv", 1,
                 "MPI_Alltoallv with uneven blocks (half size when source + destination is odd)", params, coll_vfree,
                 "peer:osu_alltoallv", "peer:osu_alltoallv_persistent");
