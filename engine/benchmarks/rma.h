/* What the one-sided tests (rma.put, rma.get) share: a window over the target's memory in one
 * of three flavours, and the synchronisation that completes the operations of an iteration.
 *
 * Rank 0 is the origin, rank 1 the target.  An iteration is `window` operations of one size,
 * to (or from) distinct offsets of the target's window, then one completion: a window of one
 * is the latency of one operation, a larger one a bandwidth (as OSU's put/get _latency and _bw).
 * The synchronisation modes and what the time covers:
 *   lock         lock(shared, target); ops; unlock          remote completion, epoch included
 *   lock_all     lock_all; ops; unlock_all                  remote completion, epoch included
 *   flush        ops; flush(target)   (one lock held)       remote completion
 *   flush_local  ops; flush_local(target) (one lock held)   local completion: the origin buffer
 *                                                           may be reused, the data need not have
 *                                                           arrived (a put timed at the sender)
 *   pscw         start; ops; complete  /  post; wait        generalised active target
 *   fence        fence; ops; fence (both ranks)              active target
 * Passive modes leave the target out of the operation; it reaches the engine's next collective
 * at once and waits there, which is where MPICH makes progress for it. */
#ifndef SCOPE_RMA_H
#define SCOPE_RMA_H
#include <stdlib.h>
#include <string.h>

#include "../scope.h"
#include "window.h"

enum { SYNC_LOCK, SYNC_LOCK_ALL, SYNC_FLUSH, SYNC_FLUSH_LOCAL, SYNC_PSCW, SYNC_FENCE };
enum { WIN_CREATE, WIN_ALLOCATE, WIN_DYNAMIC };

static const char *const rma_sync_choices[] = {"lock", "lock_all", "flush", "flush_local", "pscw", "fence", NULL};
static const char *const rma_win_choices[] = {"create", "allocate", "dynamic", NULL};

#define RMA_PARAMS                                                                                                     \
  {"sync", SP_ENUM, "flush", 0, 0, rma_sync_choices, "how an iteration's operations complete (see docs/rma.md)"},      \
      {"win",                                                                                                          \
       SP_ENUM,                                                                                                        \
       "allocate",                                                                                                     \
       0,                                                                                                              \
       0,                                                                                                              \
       rma_win_choices,                                                                                                \
       "window flavour: MPI_Win_create, MPI_Win_allocate or MPI_Win_create_dynamic"},                                  \
  {                                                                                                                    \
    "window", SP_INT, "1", 1, 1024, NULL, "operations per iteration before their completion (1: latency)"              \
  }

typedef struct {
  MPI_Win win;
  MPI_Group peer; /* pscw: the other rank */
  char *mem;      /* the window's memory on this rank */
  int own_mem;    /* mem came from malloc (create, dynamic) */
  MPI_Aint base;  /* dynamic: the target's address of mem, as the origin uses it */
  int sync, flavour, w, locked;
  size_t bytes; /* window memory: w operations of c->size */
} rma_state;

/* Displacement of operation i at the target. */
static inline MPI_Aint rma_disp(const rma_state *s, size_t n, int i) {
  return s->base + (MPI_Aint)((size_t)i * n);
}

/* The `setup` hook of both tests: the window on every rank of c->comm (ranks past 1 expose
 * nothing); -1 when out of memory.  A flavour the MPI refuses becomes a skip. */
static inline int rma_setup(scope_ctx *c, void **st) {
  rma_state *s = calloc(1, sizeof *s);
  *st = s;
  if (!s)
    return -1;
  s->sync = (int)scope_param_get(c, "sync");
  s->flavour = (int)scope_param_get(c, "win");
  s->w = window_effective(c, scope_param_get(c, "window"), 0);
  s->win = MPI_WIN_NULL;
  s->peer = MPI_GROUP_NULL;
  s->bytes = c->rank < 2 ? (size_t)s->w * (c->size ? c->size : 1) : 0;
  c->ops_per_iter = s->w;
  c->bytes_per_op = (double)c->size;
  c->sbuf_bytes = c->rbuf_bytes = (size_t)s->w * c->size;
  MPI_Comm_set_errhandler(c->comm, MPI_ERRORS_RETURN);
  int rc;
  if (s->flavour == WIN_ALLOCATE) {
    rc = MPI_Win_allocate((MPI_Aint)s->bytes, 1, MPI_INFO_NULL, c->comm, &s->mem, &s->win);
  } else {
    s->mem = s->bytes ? malloc(s->bytes) : NULL;
    s->own_mem = 1;
    if (s->bytes && !s->mem) {
      free(s);
      *st = NULL;
      return -1;
    }
    if (s->flavour == WIN_CREATE) {
      rc = MPI_Win_create(s->mem, (MPI_Aint)s->bytes, 1, MPI_INFO_NULL, c->comm, &s->win);
    } else {
      rc = MPI_Win_create_dynamic(MPI_INFO_NULL, c->comm, &s->win);
      if (rc == MPI_SUCCESS && s->bytes)
        rc = MPI_Win_attach(s->win, s->mem, (MPI_Aint)s->bytes);
      MPI_Aint mine = 0;
      if (s->mem)
        MPI_Get_address(s->mem, &mine);
      MPI_Bcast(&mine, 1, MPI_AINT, 1, c->comm); /* the origin addresses the target's memory */
      s->base = mine;
    }
  }
  MPI_Comm_set_errhandler(c->comm, MPI_ERRORS_ARE_FATAL);
  int bad = rc != MPI_SUCCESS, any = 0;
  MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_LOR, c->comm);
  if (any) {
    c->skip = "the MPI refused to create this window flavour";
    return 0; /* teardown frees what was made */
  }
  if (s->sync == SYNC_PSCW && c->rank < 2) {
    MPI_Group all;
    MPI_Comm_group(c->comm, &all);
    int other = 1 - c->rank;
    MPI_Group_incl(all, 1, &other, &s->peer);
    MPI_Group_free(&all);
  }
  return 0;
}

/* The `start` hook: one lock held over the whole measurement for the flush modes. */
static inline void rma_start(scope_ctx *c, void *st) {
  rma_state *s = st;
  if ((s->sync == SYNC_FLUSH || s->sync == SYNC_FLUSH_LOCAL) && c->rank == 0 && s->win != MPI_WIN_NULL) {
    MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, s->win);
    s->locked = 1;
  }
}

/* The synchronisation that opens an iteration, on the origin (rank 0) and the target (rank 1). */
static inline void rma_open(scope_ctx *c, rma_state *s) {
  switch (s->sync) {
  case SYNC_LOCK:
    if (c->rank == 0)
      MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, s->win);
    break;
  case SYNC_LOCK_ALL:
    if (c->rank == 0)
      MPI_Win_lock_all(0, s->win);
    break;
  case SYNC_PSCW:
    if (c->rank == 0)
      MPI_Win_start(s->peer, 0, s->win);
    else if (c->rank == 1)
      MPI_Win_post(s->peer, 0, s->win);
    break;
  case SYNC_FENCE:
    MPI_Win_fence(MPI_MODE_NOPRECEDE, s->win);
    break;
  default:
    break;
  }
}

/* ... and the one that completes it. */
static inline void rma_close(scope_ctx *c, rma_state *s) {
  switch (s->sync) {
  case SYNC_LOCK:
    if (c->rank == 0)
      MPI_Win_unlock(1, s->win);
    break;
  case SYNC_LOCK_ALL:
    if (c->rank == 0)
      MPI_Win_unlock_all(s->win);
    break;
  case SYNC_FLUSH:
    if (c->rank == 0)
      MPI_Win_flush(1, s->win);
    break;
  case SYNC_FLUSH_LOCAL:
    if (c->rank == 0)
      MPI_Win_flush_local(1, s->win);
    break;
  case SYNC_PSCW:
    if (c->rank == 0)
      MPI_Win_complete(s->win);
    else if (c->rank == 1)
      MPI_Win_wait(s->win);
    break;
  case SYNC_FENCE:
    MPI_Win_fence(MPI_MODE_NOSUCCEED, s->win);
    break;
  }
}

/* The target's own access to its window memory, outside any operation of the origin's: a
 * shared lock on itself (compatible with the origin's shared lock of the flush modes) makes
 * the memory agree with what the origin's completed operations wrote.  Active-target modes
 * are synchronised already by their closing call. */
static inline void rma_local_begin(rma_state *s) {
  if (s->sync != SYNC_PSCW && s->sync != SYNC_FENCE)
    MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, s->win);
}

static inline void rma_local_end(rma_state *s) {
  if (s->sync != SYNC_PSCW && s->sync != SYNC_FENCE)
    MPI_Win_unlock(1, s->win);
}

static inline void rma_teardown(scope_ctx *c, void *st) {
  rma_state *s = st;
  (void)c;
  if (s->locked)
    MPI_Win_unlock(1, s->win);
  if (s->peer != MPI_GROUP_NULL)
    MPI_Group_free(&s->peer);
  if (s->win != MPI_WIN_NULL) {
    if (s->flavour == WIN_DYNAMIC && s->mem)
      MPI_Win_detach(s->win, s->mem);
    MPI_Win_free(&s->win);
  }
  if (s->own_mem)
    free(s->mem);
  free(s);
}

#endif
