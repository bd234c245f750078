/* Neighbourhood collectives (MPI_Neighbor_*) on the stencil OMB 7.4 uses by default: the ranks
 * on a periodic Cartesian grid of -p dims dimensions (MPI_Dims_create), each rank's neighbours
 * every displacement in [-radius, radius]^dims but zero, in lexicographic order of the
 * displacement, its own rank left out (on a small grid a neighbour may appear more than once:
 * with 2 ranks and 1 dimension the other rank is both the left and the right neighbour).  The
 * graph is made with MPI_Dist_graph_create_adjacent, sources the same list as destinations.
 *
 * When a rank appears k times, MPI matches the k-th message between the two in the order of the
 * lists, not by geometry: the checks below find which of the sender's blocks arrives where. */
#ifndef SCOPE_NEIGHBOR_H
#define SCOPE_NEIGHBOR_H
#include "coll.h"

#define NB_MAX_DIMS 4
#define SCOPE_PARAM_NB_DIMS                                                                                            \
  { "dims", SP_INT, "1", 1, NB_MAX_DIMS, NULL, "dimensions of the periodic grid (OMB's -d)" }
#define SCOPE_PARAM_NB_RADIUS                                                                                          \
  { "radius", SP_INT, "1", 1, 3, NULL, "neighbours within this distance per dimension" }

typedef struct {
  coll_state base;
  MPI_Comm graph;
  int n;    /* neighbours (in = out) */
  int *nbr; /* this rank's list */
  int *counts, *displs;
  MPI_Aint *wdispls; /* alltoallw: byte displacements */
  MPI_Datatype *types;
  int dims[NB_MAX_DIMS], d, r;
  int call; /* the test's -p call */
} nb_state;

/* The neighbour list of `rank` (the same on every rank that asks): returns its length. */
static inline int nb_list(const nb_state *s, int rank, int *out) {
  int me[NB_MAX_DIMS], disp[NB_MAX_DIMS], n = 0;
  for (int i = s->d - 1, x = rank; i >= 0; i--) { /* row-major, as MPI_Cart_coords */
    me[i] = x % s->dims[i];
    x /= s->dims[i];
  }
  for (int i = 0; i < s->d; i++)
    disp[i] = -s->r;
  for (;;) {
    int other = 0;
    for (int i = 0; i < s->d; i++)
      other = other * s->dims[i] + ((me[i] + disp[i]) % s->dims[i] + s->dims[i]) % s->dims[i];
    if (other != rank && out)
      out[n] = other;
    n += other != rank;
    int i = s->d - 1;
    for (; i >= 0 && disp[i] == s->r; i--)
      disp[i] = -s->r;
    if (i < 0)
      return n;
    disp[i]++;
  }
}

/* Which of `from`'s send blocks arrives in this rank's receive slot m: the k-th occurrence of
 * `from` among this rank's sources pairs with the k-th occurrence of this rank among from's
 * destinations. */
static inline int nb_block_from(const nb_state *s, int me, int m, int *scratch) {
  int from = s->nbr[m], k = 0;
  for (int i = 0; i < m; i++)
    k += s->nbr[i] == from;
  int n = nb_list(s, from, scratch);
  for (int j = 0; j < n; j++)
    if (scratch[j] == me && k-- == 0)
      return j;
  return -1;
}

/* In setup: the grid, the list, the graph communicator (collective over c->comm), and per
 * neighbour counts of `size` bytes; buffers: sbuf `sblocks` blocks, rbuf one per neighbour. */
static inline int nb_setup(scope_ctx *c, void **st, coll_op op, int sblocks_per_nbr) {
  nb_state *s = calloc(1, sizeof *s);
  *st = s;
  if (!s)
    return -1;
  s->base.op = op;
  s->graph = MPI_COMM_NULL;
  s->d = (int)scope_param_get(c, "dims");
  s->r = (int)scope_param_get(c, "radius");
  s->call = (int)scope_param_get(c, "call");
  MPI_Dims_create(c->nranks, s->d, s->dims);
  s->n = nb_list(s, c->rank, NULL);
  int cap = s->n ? s->n : 1;
  s->nbr = malloc(sizeof(int) * (size_t)cap);
  s->counts = malloc(sizeof(int) * (size_t)cap);
  s->displs = malloc(sizeof(int) * (size_t)cap);
  s->wdispls = malloc(sizeof(MPI_Aint) * (size_t)cap);
  s->types = malloc(sizeof(MPI_Datatype) * (size_t)cap);
  if (!s->nbr || !s->counts || !s->displs || !s->wdispls || !s->types)
    return -1;
  nb_list(s, c->rank, s->nbr);
  for (int i = 0; i < s->n; i++) {
    s->counts[i] = (int)c->size;
    s->displs[i] = (int)(c->size * (size_t)i);
    s->wdispls[i] = (MPI_Aint)(c->size * (size_t)i);
    s->types[i] = MPI_BYTE;
  }
  MPI_Dist_graph_create_adjacent(c->comm, s->n, s->nbr, MPI_UNWEIGHTED, s->n, s->nbr, MPI_UNWEIGHTED, MPI_INFO_NULL, 0,
                                 &s->graph);
  c->sbuf_bytes = c->size * (size_t)(sblocks_per_nbr ? s->n : 1);
  c->rbuf_bytes = c->size * (size_t)s->n;
  if (c->sbuf_bytes == 0)
    c->sbuf_bytes = c->size;
  c->bytes_per_op = (double)c->size * s->n * c->nranks; /* every rank receives a block from each neighbour */
  snprintf(c->note, sizeof c->note, "%d neighbours on a periodic %dx%dx%dx%d grid", s->n, s->dims[0],
           s->d > 1 ? s->dims[1] : 1, s->d > 2 ? s->dims[2] : 1, s->d > 3 ? s->dims[3] : 1);
  return coll_read_params(c, &s->base);
}

static inline void nb_free(scope_ctx *c, void *st) {
  nb_state *s = st;
  (void)c;
  coll_release(&s->base);
  if (s->graph != MPI_COMM_NULL)
    MPI_Comm_free(&s->graph);
  free(s->nbr);
  free(s->counts);
  free(s->displs);
  free(s->wdispls);
  free(s->types);
  free(s);
}

#define SCOPE_NEIGHBORHOOD(ID, NAME, SUMMARY, ...) SCOPE_COLLECTIVE(ID, NAME, 1, SUMMARY, params, nb_free, __VA_ARGS__)

#endif
