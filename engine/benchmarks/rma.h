/* What the one-sided tests share (rma.c): a window over the target's memory in one of three
 * flavours, the layout of one operation, and the synchronisation that completes the
 * operations of an iteration.
 *
 * In the point-to-point tests rank 0 is the origin and rank 1 the target; in rma.hotspot every
 * rank but 0 is an origin and rank 0 the target.  An iteration is `window` operations, each to
 * (or from) its own region of the target's window, then one completion: a window of one is the
 * latency of one operation, a larger one a bandwidth (as OSU's put/get _latency and _bw).
 * The synchronisation modes and what the time covers:
 *   lock         lock(shared, target); ops; unlock          remote completion, epoch included
 *   lock_all     lock_all; ops; unlock_all                  remote completion, epoch included
 *   flush        ops; flush(target)   (one lock held)       remote completion
 *   flush_local  ops; flush_local(target) (one lock held)   local completion: the origin buffer
 *                                                           may be reused, the data need not have
 *                                                           arrived (a put timed at the sender)
 *   pscw         start; ops; complete  /  post; wait        generalised active target
 *   fence        fence; ops; fence (all ranks)              active target
 * `completion=local|remote` turns flush into flush_local and back; the epoch-closing modes
 * complete remotely by definition, so local completion with them is a skip.
 * Layouts (ARMCI's, `004_...`): contig, one block of `size` bytes; strided, `blocks` pieces of
 * size/blocks bytes every `stride` pieces, one operation with a vector datatype at both ends
 * (ARMCI_PutS over MPI, as ARMCI-MPI does it); vector, the same pieces as separate operations
 * (ARMCI_PutV's list of pieces).
 * Passive modes leave the target out of the operation; it reaches the engine's next collective
 * at once and waits there, which is where MPICH makes progress for it. */
#ifndef SCOPE_RMA_H
#define SCOPE_RMA_H
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../core/pattern.h"
#include "../scope.h"

enum { SYNC_LOCK, SYNC_LOCK_ALL, SYNC_FLUSH, SYNC_FLUSH_LOCAL, SYNC_PSCW, SYNC_FENCE };
enum { WIN_CREATE, WIN_ALLOCATE, WIN_DYNAMIC };
enum { LAYOUT_CONTIG, LAYOUT_STRIDED, LAYOUT_VECTOR };
enum { COMPLETION_AUTO, COMPLETION_LOCAL, COMPLETION_REMOTE };
enum { RMA_PUT, RMA_GET, RMA_ACC, RMA_GET_ACC };

extern const char *const rma_sync_choices[];
extern const char *const rma_win_choices[];
extern const char *const rma_layout_choices[];
extern const char *const rma_completion_choices[];
extern const char *const rma_type_choices[];

#define RMA_PARAM_SYNC                                                                                                 \
  { "sync", SP_ENUM, "flush", 0, 0, rma_sync_choices, "how an iteration's operations complete (see docs/rma.md)" }
#define RMA_PARAM_WIN                                                                                                  \
  {                                                                                                                    \
    "win", SP_ENUM, "allocate", 0, 0, rma_win_choices,                                                                 \
        "window flavour: MPI_Win_create, MPI_Win_allocate or MPI_Win_create_dynamic"                                   \
  }
#define RMA_PARAM_WINDOW                                                                                               \
  { "window", SP_INT, "1", 1, 1024, NULL, "operations per iteration before their completion (1: latency)" }
#define RMA_PARAM_COMPLETION                                                                                           \
  {                                                                                                                    \
    "completion", SP_ENUM, "auto", 0, 0, rma_completion_choices,                                                       \
        "auto: what sync completes; local: until the origin buffer is reusable; remote: until the data is at the "     \
        "target"                                                                                                       \
  }
#define RMA_PARAM_TYPE                                                                                                 \
  {                                                                                                                    \
    "type", SP_ENUM, "double", 0, 0, rma_type_choices,                                                                 \
        "element summed: double, or float (as osu_acc_latency -T mpi_float)"                                           \
  }
#define RMA_PARAMS RMA_PARAM_SYNC, RMA_PARAM_WIN, RMA_PARAM_WINDOW, RMA_PARAM_COMPLETION
#define RMA_LAYOUT_PARAMS                                                                                              \
  {"layout", SP_ENUM, "contig", 0, 0, rma_layout_choices, "contig, strided (one vector datatype) or vector (a list)"}, \
      {"blocks", SP_INT, "8", 1, 4096, NULL, "strided and vector: pieces one operation's size is cut into"}, {         \
    "stride", SP_INT, "2", 1, 64, NULL, "strided and vector: piece starts this many piece lengths apart"               \
  }

/* What a test asks of the shared setup. */
typedef struct {
  int what;   /* RMA_PUT, RMA_GET, RMA_ACC or RMA_GET_ACC */
  int elem;   /* bytes of one element: 1 (MPI_BYTE), 8 (MPI_DOUBLE; the accumulates' default) or 4
               * (MPI_FLOAT, an accumulate's type=float) */
  int target; /* the target rank: 1 (the other rank of a pair) or 0 (hotspot: all to one) */
  int atomic; /* 8-byte atomics: every operation of a window on one counter per origin */
} rma_kind;

typedef struct {
  MPI_Win win;
  MPI_Group peer; /* pscw: the other side (the target, or on the target every origin) */
  char *mem;      /* the window's memory on this rank */
  int own_mem;    /* mem came from malloc (create, dynamic) */
  MPI_Aint base;  /* dynamic: the target's address of mem, as the origins use it */
  rma_kind k;
  int sync, flavour, w, locked, local, origin; /* origin: this rank issues operations */
  int layout, blocks;
  int direct;          /* an origin of the flush modes with contiguous operations: rma_iteration's short path */
  int count;           /* elements of one piece (blk / elem), worked out once */
  size_t blk, gap;     /* bytes of a piece; bytes from one piece's start to the next */
  size_t span;         /* bytes one operation's pieces cover */
  size_t region;       /* bytes of the target's window one origin uses: w * span */
  MPI_Aint mine;       /* this origin's first byte in the target's window */
  MPI_Datatype type;   /* strided: the pieces of one operation as one datatype */
  MPI_Datatype base_t; /* MPI_BYTE, MPI_DOUBLE or MPI_FLOAT */
  size_t bytes;        /* this rank's window memory */
  uint64_t busy_ticks; /* rma.get target=busy: the target's compute slice per iteration */
  int64_t next;        /* rma.cas: the value the counter holds before this iteration */
  int64_t *compare;    /* rma.cas: the values each operation expects */
} rma_state;

/* The `setup` of every one-sided test: reads the shared parameters by name, sizes buffers and
 * the window, creates it on every rank of c->comm; -1 when out of memory.  Sizes the layout
 * cannot cut, and modes that contradict each other, are skips with the reason; a flavour the
 * MPI refuses too. */
int rma_setup(scope_ctx *c, void **st, rma_kind k);
/* The `start` hook: one lock held over the whole measurement for the flush modes. */
void rma_start(scope_ctx *c, void *st);
void rma_teardown(scope_ctx *c, void *st);

/* The synchronisation that opens an iteration, and the one that completes it. */
void rma_open(scope_ctx *c, rma_state *s);
void rma_close(scope_ctx *c, rma_state *s);
/* Operation i of an iteration: origin data at `from` (and results at `into` for get and
 * get-accumulate), laid out as the operation's pieces. */
void rma_issue(rma_state *s, int i, char *from, char *into);
/* One iteration (a `run` hook): open, an origin's window of operations, close. */
void rma_iteration(scope_ctx *c, void *st);

/* The target's own access to its window memory, outside any operation of the origins: a
 * shared lock on itself (compatible with the origins' shared locks of the flush modes) makes
 * the memory agree with what their completed operations wrote.  Active-target modes are
 * synchronised already by their closing call. */
void rma_local_begin(scope_ctx *c, rma_state *s);
void rma_local_end(scope_ctx *c, rma_state *s);
/* Before checking the target: operations completed only locally are completed remotely. */
void rma_settle(scope_ctx *c, rma_state *s);

/* Byte offset of piece b of operation i within a region laid out as the operations are. */
static inline size_t rma_piece(const rma_state *s, int i, int b) {
  return (size_t)i * s->span + (size_t)b * s->gap;
}

/* One MPI call moving `count` of `type` between `from`/`into` and target displacement d. */
static inline void rma_call(const rma_state *s, char *from, char *into, MPI_Aint d, int count, MPI_Datatype type) {
  int t = s->k.target;
  switch (s->k.what) {
  case RMA_PUT:
    MPI_Put(from, count, type, t, d, count, type, s->win);
    break;
  case RMA_GET:
    MPI_Get(into, count, type, t, d, count, type, s->win);
    break;
  case RMA_ACC:
    MPI_Accumulate(from, count, type, t, d, count, type, MPI_SUM, s->win);
    break;
  case RMA_GET_ACC:
    MPI_Get_accumulate(from, count, type, into, count, type, t, d, count, type, MPI_SUM, s->win);
    break;
  }
}

/* The origin's iteration with one lock held and contiguous operations (the default, and OSU's
 * latency and bandwidth loops): the operations and the flush with nothing decided or called in
 * between.  Issue 52: the general path (open, issue, piece, call, close: five calls) cost about
 * 5 ns an iteration more than OSU's loop, 5 % of an 8 B put on one node. */
static inline void rma_flush_contig(const rma_state *s, char *from, char *into) {
  MPI_Aint d = s->base + s->mine;
  for (int i = 0; i < s->w; i++) {
    size_t at = (size_t)i * s->span;
    rma_call(s, from + at, into + at, d + (MPI_Aint)at, s->count, s->base_t);
  }
  if (s->local)
    MPI_Win_flush_local(s->k.target, s->win);
  else
    MPI_Win_flush(s->k.target, s->win);
}

/* Bad bytes of `buf` against the pattern of `src`, over the pieces only (gaps are not the
 * operation's); the pattern's offsets are those of the region. */
size_t rma_check_pieces(const rma_state *s, const char *buf, uint64_t seed, int src, size_t *first);

/* The accumulate tests' data: element m of an origin's doubles and of the target's window,
 * small integers from the pattern so sums are exact. */
static inline double rma_value(uint64_t seed, int src, size_t m) {
  return (double)pattern_byte(seed, src, m);
}
/* Writes those values over n bytes, as doubles (elem 8) or floats (elem 4). */
void rma_fill_values(char *buf, size_t n, int elem, uint64_t seed, int src);
/* Elements of the pieces where buf differs from want(m) = sum of the listed sources' values;
 * bad bytes are counted per element's bytes. */
size_t rma_check_sum(const rma_state *s, const char *buf, uint64_t seed, const int *srcs, int nsrcs, size_t *first);

/* The accumulates' `fill`: known values on both sides, the origin's addends and the target's
 * starting values (rma.acc, rma.get_acc). */
void rma_fill_acc(scope_ctx *c, void *st, uint64_t seed);
/* The atomics' counter (rma.fetch_op, rma.cas): where it starts for a seed; `fill` sets it at
 * the target; the check wants the fetched values start, start + 1, ... and the counter at
 * start + window. */
int64_t rma_counter_start(uint64_t seed);
void rma_fill_counter(scope_ctx *c, rma_state *s, uint64_t seed);
size_t rma_check_counter(scope_ctx *c, void *st, uint64_t seed, size_t *first);

/* A one-sided test's descriptor: origin rank 0 (or every rank, rma.hotspot), two ranks. */
#define SCOPE_RMA(ID, NAME, SUMMARY, MEASURES, SIZED, TIMING, FILL, RUN, VERIFY, ...)                                  \
  const scope_test test_##ID = {.name = NAME,                                                                          \
                                .level = "rma",                                                                        \
                                .summary = SUMMARY,                                                                    \
                                .measures = MEASURES,                                                                  \
                                .min_ranks = 2,                                                                        \
                                .sized = SIZED,                                                                        \
                                .timing = TIMING,                                                                      \
                                .roles = {__VA_ARGS__},                                                                \
                                SCOPE_PARAMS(params),                                                                  \
                                .setup = setup,                                                                        \
                                .start = rma_start,                                                                    \
                                .fill = FILL,                                                                          \
                                .run = RUN,                                                                            \
                                .verify = VERIFY,                                                                      \
                                .teardown = rma_teardown}

#endif
