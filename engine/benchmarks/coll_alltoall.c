/* MPI_Alltoall: block j of rank i's buffer goes to rank j (the transpose of a 3-D FFT).
 * call=alltoallw makes the same exchange with MPI_Alltoallw (a count, a byte displacement and a
 * datatype per peer, here all MPI_BYTE), as osu_alltoallw: what the general call costs over
 * the uniform one. */
#include "coll.h"

static const char *const calls[] = {"alltoall", "alltoallw", NULL};

static const scope_param params[] = {
    SCOPE_PARAM_NB,
    SCOPE_PARAM_API,
    {"call", SP_ENUM, "alltoall", 0, 0, calls, "MPI_Alltoall, or MPI_Alltoallw with a byte type per peer"}};

typedef struct {
  coll_state base;
  int w;                /* call=alltoallw */
  int *counts, *displs; /* per peer: bytes, and byte displacements (the same both ways) */
  MPI_Datatype *types;
} state;

static void op(scope_ctx *c, void *st, int how, MPI_Request *req);

static void release(scope_ctx *c, void *st) {
  state *s = st;
  (void)c;
  coll_release(&s->base);
  free(s->counts);
  free(s->displs);
  free(s->types);
  free(s);
}

static int setup(scope_ctx *c, void **st) {
  c->sbuf_bytes = c->rbuf_bytes = c->size * (size_t)c->nranks;
  c->bytes_per_op = (double)c->size * c->nranks * (c->nranks - 1); /* a block between every pair */
  state *s = calloc(1, sizeof *s);
  *st = s;
  if (!s)
    return -1;
  s->base.op = op;
  s->w = scope_param_get(c, "call") == 1;
  s->counts = malloc(sizeof(int) * (size_t)c->nranks);
  s->displs = malloc(sizeof(int) * (size_t)c->nranks);
  s->types = malloc(sizeof(MPI_Datatype) * (size_t)c->nranks);
  if (!s->counts || !s->displs || !s->types)
    return -1;
  for (int j = 0; j < c->nranks; j++) {
    s->counts[j] = (int)c->size;
    s->displs[j] = (int)(c->size * (size_t)j);
    s->types[j] = MPI_BYTE;
  }
  return coll_read_params(c, &s->base);
}

static void op(scope_ctx *c, void *st, int how, MPI_Request *req) {
  state *s = st;
  if (s->w)
    COLL_DO(how, req, Alltoallw, Ialltoallw, c->sbuf, s->counts, s->displs, s->types, c->rbuf, s->counts, s->displs,
            s->types, c->comm);
  else
    COLL_DO(how, req, Alltoall, Ialltoall, c->sbuf, (int)c->size, MPI_BYTE, c->rbuf, (int)c->size, MPI_BYTE, c->comm);
}

static size_t verify(scope_ctx *c, void *st, uint64_t seed, size_t *first) {
  (void)st;
  size_t bad = 0;
  for (int j = 0; j < c->nranks; j++)
    bad += scope_check_at(c->rbuf + (size_t)j * c->size, c->size, seed, j, (size_t)c->rank * c->size, first);
  return bad;
}

SCOPE_COLLECTIVE(coll_alltoall, "coll.alltoall", 1, "MPI_Alltoall: every rank sends a distinct block to every rank",
                 params, release, "peer:osu_alltoall", "peer:osu_alltoall_persistent", "peer:imb_Alltoall",
                 "peer:osu_alltoallw", "peer:osu_alltoallw_persistent");
