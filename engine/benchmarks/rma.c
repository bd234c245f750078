/* The one-sided tests' shared machinery (see rma.h): no test descriptor here. */
#include "rma.h"

#include <stdio.h>

#include "../core/timer.h"
#include "window.h"

const char *const rma_sync_choices[] = {"lock", "lock_all", "flush", "flush_local", "pscw", "fence", NULL};
const char *const rma_win_choices[] = {"create", "allocate", "dynamic", NULL};
const char *const rma_layout_choices[] = {"contig", "strided", "vector", NULL};
const char *const rma_completion_choices[] = {"auto", "local", "remote", NULL};
const char *const rma_type_choices[] = {"double", "float", NULL};

static int is_passive(int sync) {
  return sync == SYNC_LOCK || sync == SYNC_LOCK_ALL || sync == SYNC_FLUSH || sync == SYNC_FLUSH_LOCAL;
}

/* The point's layout and completion, or the reason it cannot be measured. */
static const char *read_modes(scope_ctx *c, rma_state *s) {
  long completion = scope_has_param(c, "completion") ? scope_param_get(c, "completion") : COMPLETION_AUTO;
  int flushes = s->sync == SYNC_FLUSH || s->sync == SYNC_FLUSH_LOCAL;
  if (completion != COMPLETION_AUTO && !flushes)
    return "closing a lock, lock_all, PSCW or fence epoch completes at the target: choose completion with sync=flush";
  s->local = completion == COMPLETION_AUTO ? s->sync == SYNC_FLUSH_LOCAL : completion == COMPLETION_LOCAL;
  size_t n = c->size;
  s->layout = scope_has_param(c, "layout") ? (int)scope_param_get(c, "layout") : LAYOUT_CONTIG;
  s->blocks = 1;
  s->blk = s->gap = s->span = n;
  if (n % (size_t)s->k.elem)
    return s->k.elem == 8 ? "the size is not a whole number of doubles (8 bytes)"
                          : "the size is not a whole number of floats (4 bytes)";
  if (s->layout != LAYOUT_CONTIG) {
    s->blocks = (int)scope_param_get(c, "blocks");
    size_t stride = (size_t)scope_param_get(c, "stride");
    if (n == 0 || n % ((size_t)s->blocks * (size_t)s->k.elem))
      return "the size does not cut into `blocks` pieces of whole elements";
    s->blk = n / (size_t)s->blocks;
    s->gap = stride * s->blk;
    s->span = (size_t)s->blocks * s->gap;
  }
  return NULL;
}

static int make_window(scope_ctx *c, rma_state *s) {
  int rc;
  if (s->flavour == WIN_ALLOCATE)
    return MPI_Win_allocate((MPI_Aint)s->bytes, 1, MPI_INFO_NULL, c->comm, &s->mem, &s->win);
  s->mem = s->bytes ? malloc(s->bytes) : NULL;
  s->own_mem = 1;
  if (s->bytes && !s->mem)
    return -1;
  if (s->flavour == WIN_CREATE)
    return MPI_Win_create(s->mem, (MPI_Aint)s->bytes, 1, MPI_INFO_NULL, c->comm, &s->win);
  rc = MPI_Win_create_dynamic(MPI_INFO_NULL, c->comm, &s->win);
  if (rc == MPI_SUCCESS && s->bytes)
    rc = MPI_Win_attach(s->win, s->mem, (MPI_Aint)s->bytes);
  MPI_Aint addr = 0;
  if (s->mem)
    MPI_Get_address(s->mem, &addr);
  MPI_Bcast(&addr, 1, MPI_AINT, s->k.target, c->comm); /* origins address the target's memory */
  s->base = addr;
  return rc;
}

/* pscw: an origin's group is the target; the target's, every origin. */
static void make_groups(scope_ctx *c, rma_state *s) {
  MPI_Group all;
  MPI_Comm_group(c->comm, &all);
  int zero = 0;
  if (s->origin)
    MPI_Group_incl(all, 1, &s->k.target, &s->peer);
  else if (c->rank == 0) /* hotspot's target: every other rank is an origin */
    MPI_Group_excl(all, 1, &zero, &s->peer);
  else if (c->rank == s->k.target) /* a pair's target: rank 0 is the origin */
    MPI_Group_incl(all, 1, &zero, &s->peer);
  MPI_Group_free(&all);
}

int rma_setup(scope_ctx *c, void **st, rma_kind k) {
  rma_state *s = calloc(1, sizeof *s);
  *st = s;
  if (!s)
    return -1;
  if (scope_has_param(c, "type") && scope_param_get(c, "type") == 1)
    k.elem = 4; /* type=float: OSU's accumulate offers no double */
  s->k = k;
  s->win = MPI_WIN_NULL;
  s->peer = MPI_GROUP_NULL;
  s->type = MPI_DATATYPE_NULL;
  s->base_t = k.elem == 8 ? MPI_DOUBLE : k.elem == 4 ? MPI_FLOAT : MPI_BYTE;
  s->sync = (int)scope_param_get(c, "sync");
  s->flavour = (int)scope_param_get(c, "win");
  int hotspot = k.target == 0;
  int origins = hotspot ? c->nranks - 1 : 1;
  s->origin = hotspot ? c->rank != 0 : c->rank == 0;
  const char *why = read_modes(c, s);
  if (why) {
    c->skip = why;
    return 0;
  }
  if (k.atomic)
    s->blk = s->gap = s->span = 8;
  /* every origin's operations share the target's window: its 16 MiB cap divides among them */
  s->w = window_capped(c, scope_param_get(c, "window"), s->span * (size_t)origins);
  s->region = (size_t)s->w * s->span;
  /* an atomic's counter is one element however long the window */
  size_t used = k.atomic ? 8 : s->region;
  s->mine = s->origin ? (MPI_Aint)((size_t)(hotspot ? c->rank - 1 : 0) * used) : 0;
  s->bytes = c->rank == k.target ? used * (size_t)origins : 0;
  c->ops_per_iter = s->w;
  c->bytes_per_op = (double)s->blk * s->blocks;
  c->sbuf_bytes = c->rbuf_bytes = s->region;
  if (s->layout == LAYOUT_STRIDED) {
    MPI_Type_vector(s->blocks, (int)(s->blk / (size_t)k.elem), (int)(s->gap / (size_t)k.elem), s->base_t, &s->type);
    MPI_Type_commit(&s->type);
  }
  MPI_Comm_set_errhandler(c->comm, MPI_ERRORS_RETURN);
  int rc = make_window(c, s);
  MPI_Comm_set_errhandler(c->comm, MPI_ERRORS_ARE_FATAL);
  if (rc == -1)
    return -1;
  int bad = rc != MPI_SUCCESS, any = 0;
  MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_LOR, c->comm);
  if (any) {
    /* the MPI's own words where this rank has them */
    static char refused[MPI_MAX_ERROR_STRING + 64]; /* c->skip outlives setup */
    char msg[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    if (bad)
      MPI_Error_string(rc, msg, &len);
    snprintf(refused, sizeof refused, "the MPI refused to create this window flavour%s%s", len ? ": " : "", msg);
    c->skip = refused;
    return 0; /* teardown frees what was made */
  }
  if (s->sync == SYNC_PSCW)
    make_groups(c, s);
  s->count = (int)(s->blk / (size_t)k.elem); /* once: a 64-bit division is 4-7 ns, each iteration */
  s->direct = s->origin && s->layout == LAYOUT_CONTIG && (s->sync == SYNC_FLUSH || s->sync == SYNC_FLUSH_LOCAL);
  return 0;
}

void rma_start(scope_ctx *c, void *st) {
  rma_state *s = st;
  /* Test hook: a target that takes its own window exclusively and never lets go, so the
   * origin's operations never complete, as some providers' atomics hang. */
  const char *hang = getenv("SCOPE_TEST_RMA_HANG");
  if (hang && strcmp(hang, c->test->name) == 0 && c->rank == s->k.target && s->win != MPI_WIN_NULL)
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, c->rank, 0, s->win);
  if ((s->sync == SYNC_FLUSH || s->sync == SYNC_FLUSH_LOCAL) && s->origin && s->win != MPI_WIN_NULL) {
    MPI_Win_lock(MPI_LOCK_SHARED, s->k.target, 0, s->win);
    s->locked = 1;
  }
}

void rma_open(scope_ctx *c, rma_state *s) {
  switch (s->sync) {
  case SYNC_LOCK:
    if (s->origin)
      MPI_Win_lock(MPI_LOCK_SHARED, s->k.target, 0, s->win);
    break;
  case SYNC_LOCK_ALL:
    if (s->origin)
      MPI_Win_lock_all(0, s->win);
    break;
  case SYNC_PSCW:
    if (s->origin)
      MPI_Win_start(s->peer, 0, s->win);
    else if (c->rank == s->k.target)
      MPI_Win_post(s->peer, 0, s->win);
    break;
  case SYNC_FENCE:
    MPI_Win_fence(MPI_MODE_NOPRECEDE, s->win);
    break;
  default:
    break;
  }
}

void rma_close(scope_ctx *c, rma_state *s) {
  switch (s->sync) {
  case SYNC_LOCK:
    if (s->origin)
      MPI_Win_unlock(s->k.target, s->win);
    break;
  case SYNC_LOCK_ALL:
    if (s->origin)
      MPI_Win_unlock_all(s->win);
    break;
  case SYNC_FLUSH:
  case SYNC_FLUSH_LOCAL:
    if (s->origin) {
      if (s->local)
        MPI_Win_flush_local(s->k.target, s->win);
      else
        MPI_Win_flush(s->k.target, s->win);
    }
    break;
  case SYNC_PSCW:
    if (s->origin)
      MPI_Win_complete(s->win);
    else if (c->rank == s->k.target)
      MPI_Win_wait(s->win);
    break;
  case SYNC_FENCE:
    MPI_Win_fence(MPI_MODE_NOSUCCEED, s->win);
    break;
  }
}

void rma_issue(rma_state *s, int i, char *from, char *into) {
  size_t at = rma_piece(s, i, 0);
  MPI_Aint d = s->base + s->mine + (MPI_Aint)at;
  switch (s->layout) {
  case LAYOUT_CONTIG:
    rma_call(s, from + at, into + at, d, s->count, s->base_t);
    break;
  case LAYOUT_STRIDED:
    rma_call(s, from + at, into + at, d, 1, s->type);
    break;
  case LAYOUT_VECTOR:
    for (int b = 0; b < s->blocks; b++) {
      size_t o = (size_t)b * s->gap;
      rma_call(s, from + at + o, into + at + o, d + (MPI_Aint)o, s->count, s->base_t);
    }
    break;
  }
}

void rma_iteration(scope_ctx *c, void *st) {
  rma_state *s = st;
  if (s->direct) {
    rma_flush_contig(s, c->sbuf, c->rbuf);
    return;
  }
  rma_open(c, s);
  if (s->origin)
    for (int i = 0; i < s->w; i++)
      rma_issue(s, i, c->sbuf, c->rbuf);
  rma_close(c, s);
}

void rma_local_begin(scope_ctx *c, rma_state *s) {
  if (is_passive(s->sync))
    MPI_Win_lock(MPI_LOCK_SHARED, c->rank, 0, s->win);
}

void rma_local_end(scope_ctx *c, rma_state *s) {
  if (is_passive(s->sync))
    MPI_Win_unlock(c->rank, s->win);
}

void rma_settle(scope_ctx *c, rma_state *s) {
  if (s->origin && s->local)
    MPI_Win_flush(s->k.target, s->win); /* local completion said nothing of the target */
  MPI_Barrier(c->comm);
}

size_t rma_check_pieces(const rma_state *s, const char *buf, uint64_t seed, int src, size_t *first) {
  size_t bad = 0;
  for (int i = 0; i < s->w; i++)
    for (int b = 0; b < s->blocks; b++) {
      size_t o = rma_piece(s, i, b), f = 0, n = scope_check_at(buf + o, s->blk, seed, src, o, &f);
      if (n && !bad)
        *first = o + f;
      bad += n;
    }
  return bad;
}

void rma_fill_values(char *buf, size_t n, int elem, uint64_t seed, int src) {
  for (size_t m = 0; m < n / (size_t)elem; m++) {
    double v = rma_value(seed, src, m);
    float f = (float)v;
    memcpy(buf + (size_t)elem * m, elem == 4 ? (void *)&f : (void *)&v, (size_t)elem);
  }
}

size_t rma_check_sum(const rma_state *s, const char *buf, uint64_t seed, const int *srcs, int nsrcs, size_t *first) {
  size_t bad = 0, e = (size_t)s->k.elem;
  for (int i = 0; i < s->w; i++)
    for (int b = 0; b < s->blocks; b++)
      for (size_t o = rma_piece(s, i, b), end = o + s->blk; o < end; o += e) {
        double want = 0, got;
        float f;
        for (int r = 0; r < nsrcs; r++)
          want += rma_value(seed, srcs[r], o / e);
        if (e == 4) {
          memcpy(&f, buf + o, 4);
          got = f;
        } else {
          memcpy(&got, buf + o, 8);
        }
        if (got != want) {
          if (!bad)
            *first = o;
          bad += e;
        }
      }
  return bad;
}

void rma_fill_acc(scope_ctx *c, void *st, uint64_t seed) {
  rma_state *s = st;
  if (c->rank == 0)
    rma_fill_values(c->sbuf, s->region, s->k.elem, seed, 0);
  if (c->rank != 1)
    return;
  rma_local_begin(c, s);
  rma_fill_values(s->mem, s->region, s->k.elem, seed, 1);
  rma_local_end(c, s);
}

int64_t rma_counter_start(uint64_t seed) {
  return (int64_t)(seed % 1000003u) * 1000 + 7;
}

void rma_fill_counter(scope_ctx *c, rma_state *s, uint64_t seed) {
  if (c->rank != 1)
    return;
  int64_t v = rma_counter_start(seed);
  rma_local_begin(c, s);
  memcpy(s->mem, &v, 8);
  rma_local_end(c, s);
}

/* Bad bytes of one 64-bit value against what it should be. */
static size_t check_value(const char *got, int64_t want, size_t at, size_t *first, size_t bad) {
  int64_t v;
  memcpy(&v, got, 8);
  if (v != want && !bad)
    *first = at;
  return v != want ? 8 : 0;
}

size_t rma_check_counter(scope_ctx *c, void *st, uint64_t seed, size_t *first) {
  rma_state *s = st;
  rma_settle(c, s);
  int64_t start = rma_counter_start(seed);
  size_t bad = 0;
  if (c->rank == 0)
    for (int i = 0; i < s->w; i++)
      bad += check_value(c->rbuf + 8 * (size_t)i, start + i, 8 * (size_t)i, first, bad);
  if (c->rank == 1) {
    rma_local_begin(c, s);
    bad = check_value(s->mem, start + s->w, 0, first, 0);
    rma_local_end(c, s);
  }
  return bad;
}

void rma_teardown(scope_ctx *c, void *st) {
  rma_state *s = st;
  if (s->locked)
    MPI_Win_unlock(s->k.target, s->win);
  if (s->peer != MPI_GROUP_NULL)
    MPI_Group_free(&s->peer);
  if (s->type != MPI_DATATYPE_NULL)
    MPI_Type_free(&s->type);
  if (s->win != MPI_WIN_NULL) {
    if (s->flavour == WIN_DYNAMIC && s->mem)
      MPI_Win_detach(s->win, s->mem);
    MPI_Win_free(&s->win);
  }
  if (s->own_mem)
    free(s->mem);
  free(s->compare);
  free(s);
}
