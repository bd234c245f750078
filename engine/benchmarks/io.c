/* The io level's shared implementation (see io.h). */
#include "io.h"

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/pattern.h"

const char *const io_file_choices[] = {"shared", "per_process", NULL};
const char *const io_calls_choices[] = {"independent", "collective", NULL};
const char *const io_offsets_choices[] = {"explicit", "individual", NULL};
const char *const io_cache_choices[] = {"evict", "keep", NULL};
enum { FILE_SHARED, FILE_PER_PROCESS };
enum { CALLS_INDEPENDENT, CALLS_COLLECTIVE };
enum { OFFSETS_EXPLICIT, OFFSETS_INDIVIDUAL };
enum { CACHE_EVICT, CACHE_KEEP };

/* A rewritten block's index is flipped by this mark, so a block that was read but never
 * written back is caught. */
#define REWRITE_MARK 0x5a5a5a5a5a5a5a5aull
/* Calls per pass at most: beyond, a pass times the calls rather than the device. */
#define IO_MAX_CALLS 65536
#define STAMP 8 /* bytes of a block's index at its head */

typedef struct {
  int op, file, calls, offsets, cache;
  long blocks;      /* this rank's blocks (every rank has as many) */
  MPI_Offset base;  /* byte offset of this rank's first block in its file */
  long first_block; /* global index of this rank's first block */
  MPI_Comm fcomm;   /* the communicator the file is opened on */
  MPI_File fh;
  int err; /* the first MPI-IO error of any call on this rank (files return errors, MPI 4.1 §14.7) */
  char path[4096];
} io_state;

/* Keeps a call's error: the timed passes cannot stop to look, verify (untimed) does. */
static void note(io_state *s, int err) {
  if (err != MPI_SUCCESS && !s->err)
    s->err = err;
}

int io_setup(scope_ctx *c, void **st, int op) {
  io_state *s = calloc(1, sizeof *s);
  *st = s;
  if (!s) {
    c->skip = "out of memory";
    return 0;
  }
  s->op = op;
  s->file = (int)scope_param_get(c, "file");
  s->calls = (int)scope_param_get(c, "calls");
  s->offsets = (int)scope_param_get(c, "offsets");
  s->cache = (int)scope_param_get(c, "cache");
  long total = scope_param_get(c, "total");
  s->fh = MPI_FILE_NULL;
  s->fcomm = s->file == FILE_SHARED ? c->comm : MPI_COMM_SELF;
  if (!scope_io_dir) {
    c->skip = "no directory for the file: give --io-dir (scope run gives one)";
    return 0;
  }
  if (c->size < STAMP) {
    c->skip = "a block of at least 8 bytes (each carries its index)";
    return 0;
  }
  if (s->calls == CALLS_COLLECTIVE && s->file == FILE_PER_PROCESS) {
    c->skip = "collective calls need a shared file (on a file per process they are each rank's own)";
    return 0;
  }
  s->blocks = (long)((size_t)total / (size_t)c->nranks / c->size);
  if (s->blocks < 1) {
    c->skip = "the file is smaller than one block per rank: raise -p total or lower the block size";
    return 0;
  }
  if (s->blocks > IO_MAX_CALLS) {
    c->skip = "more than 65536 calls per rank and pass: raise the block size or lower -p total";
    return 0;
  }
  s->base = s->file == FILE_SHARED ? (MPI_Offset)c->rank * s->blocks * (MPI_Offset)c->size : 0;
  s->first_block = s->file == FILE_SHARED ? (long)c->rank * s->blocks : 0;
  if (s->file == FILE_SHARED)
    snprintf(s->path, sizeof s->path, "%s/scope-io.shared", scope_io_dir);
  else
    snprintf(s->path, sizeof s->path, "%s/scope-io.%d", scope_io_dir, c->rank);
  c->sbuf_bytes = c->rbuf_bytes = c->size;
  c->ops_per_iter = 1;
  c->bytes_per_op = (double)s->blocks * (double)c->size * c->nranks;
  snprintf(c->note, sizeof c->note, "%ld blocks per rank, %s file%s, %s, page cache %s", s->blocks,
           s->file == FILE_SHARED ? "one shared" : "a", s->file == FILE_SHARED ? "" : " per process",
           io_calls_choices[s->calls],
           op == IO_WRITE            ? "not read"
           : s->cache == CACHE_EVICT ? "evicted"
                                     : "kept");
  return 0;
}

void io_start(scope_ctx *c, void *st) {
  io_state *s = st;
  (void)c;
  int err = MPI_File_open(s->fcomm, s->path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &s->fh);
  if (err != MPI_SUCCESS) {
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(err, msg, &len);
    fprintf(stderr, "scope-engine: cannot open %s: %s\n", s->path, msg);
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
}

static void stamp(char *block, uint64_t index) {
  memcpy(block, &index, sizeof index);
}

/* One block at block number k of this rank, in or out, by the parameters' kind of call. */
static void io_block(io_state *s, char *buf, int count, long k, int out) {
  MPI_Offset at = s->base + (MPI_Offset)k * count;
  int coll = s->calls == CALLS_COLLECTIVE, expl = s->offsets == OFFSETS_EXPLICIT;
  if (out) {
    if (expl)
      note(s, (coll ? MPI_File_write_at_all : MPI_File_write_at)(s->fh, at, buf, count, MPI_BYTE, MPI_STATUS_IGNORE));
    else
      note(s, (coll ? MPI_File_write_all : MPI_File_write)(s->fh, buf, count, MPI_BYTE, MPI_STATUS_IGNORE));
  } else {
    if (expl)
      note(s, (coll ? MPI_File_read_at_all : MPI_File_read_at)(s->fh, at, buf, count, MPI_BYTE, MPI_STATUS_IGNORE));
    else
      note(s, (coll ? MPI_File_read_all : MPI_File_read)(s->fh, buf, count, MPI_BYTE, MPI_STATUS_IGNORE));
  }
}

/* The file as the write pass leaves it, whatever the op: a read or rewrite pass needs it. */
static void write_pass(scope_ctx *c, io_state *s) {
  if (s->offsets == OFFSETS_INDIVIDUAL)
    MPI_File_seek(s->fh, s->base, MPI_SEEK_SET);
  for (long k = 0; k < s->blocks; k++) {
    stamp(c->sbuf, (uint64_t)(s->first_block + k));
    io_block(s, c->sbuf, (int)c->size, k, 1);
  }
  note(s, MPI_File_sync(s->fh));
}

/* Drop this rank's part of the file from the page cache: its pages are clean after the sync,
 * and a clean page DONTNEED names is dropped (Linux), so the next read goes to the device. */
static void evict(const scope_ctx *c, const io_state *s) {
  int fd = open(s->path, O_RDONLY);
  if (fd < 0)
    return;
  posix_fadvise(fd, (off_t)s->base, (off_t)(s->blocks * (long)c->size), POSIX_FADV_DONTNEED);
  close(fd);
}

void io_fill(scope_ctx *c, void *st, uint64_t seed) {
  io_state *s = st;
  (void)seed;
  if (s->op != IO_WRITE) {
    write_pass(c, s);
    if (s->cache == CACHE_EVICT)
      evict(c, s);
  }
}

void io_prep(scope_ctx *c, void *st) {
  io_state *s = st;
  if (s->op == IO_WRITE)
    note(s, MPI_File_set_size(s->fh, 0)); /* a fresh file each pass, as bonnie creates one */
  else if (s->cache == CACHE_EVICT)
    evict(c, s);
}

void io_run(scope_ctx *c, void *st) {
  io_state *s = st;
  if (s->op == IO_WRITE) {
    write_pass(c, s);
    return;
  }
  if (s->offsets == OFFSETS_INDIVIDUAL)
    MPI_File_seek(s->fh, s->base, MPI_SEEK_SET);
  for (long k = 0; k < s->blocks; k++) {
    io_block(s, c->rbuf, (int)c->size, k, 0);
    if (s->op == IO_REWRITE) {
      uint64_t idx;
      memcpy(&idx, c->rbuf, sizeof idx);
      stamp(c->rbuf, idx ^ REWRITE_MARK); /* dirty the block, as bonnie does */
      if (s->offsets == OFFSETS_INDIVIDUAL)
        MPI_File_seek(s->fh, -(MPI_Offset)c->size, MPI_SEEK_CUR);
      io_block(s, c->rbuf, (int)c->size, k, 1);
    }
  }
  if (s->op == IO_REWRITE)
    note(s, MPI_File_sync(s->fh));
}

/* An error of the file system during a pass is a fault of the machine, not bad data: the
 * first failing rank's error, in the MPI's words, ends the job (a full disk once read as "bad
 * bytes" and a complete run). */
static int check_faults(scope_ctx *c, io_state *s) {
  int who = s->err ? c->rank : INT_MAX, first = INT_MAX;
  MPI_Allreduce(&who, &first, 1, MPI_INT, MPI_MIN, c->comm);
  if (first == INT_MAX)
    return 0;
  char what[MPI_MAX_ERROR_STRING] = "";
  int info[2] = {0, 0}; /* the error's class, and whether the words say the disk is full */
  if (c->rank == first) {
    int len = 0;
    MPI_Error_string(s->err, what, &len);
    MPI_Error_class(s->err, &info[0]);
    info[1] = strstr(what, "No space") || strstr(what, "no space") || info[0] == MPI_ERR_NO_SPACE;
  }
  MPI_Bcast(what, sizeof what, MPI_CHAR, first, c->comm);
  MPI_Bcast(info, 2, MPI_INT, first, c->comm);
  const char *kind = info[1] ? "no_space" : info[0] == MPI_ERR_QUOTA ? "quota" : "io";
  char *last = strrchr(what, '\n'); /* an error stack: its last line is the most specific */
  last = last ? last + 1 : what;
  char msg[MPI_MAX_ERROR_STRING + 4300];
  if (info[1])
    snprintf(msg, sizeof msg, "no space left on the file system of %s (rank %d writing %s)", scope_io_dir, first,
             s->path);
  else
    snprintf(msg, sizeof msg, "%s on %s (rank %d, %s)", last, scope_io_dir, first, s->path);
  scope_fault(c, kind, msg, scope_io_dir);
  return 1;
}

/* Bad bytes of block k as read into buf: its index (flipped once by a rewrite), then the
 * pattern; *first: the first bad byte's offset in the block. */
static size_t check_block(const scope_ctx *c, const io_state *s, const char *buf, long k, uint64_t seed,
                          size_t *first) {
  uint64_t idx, want = (uint64_t)(s->first_block + k) ^ (s->op == IO_REWRITE ? REWRITE_MARK : 0);
  memcpy(&idx, buf, sizeof idx);
  size_t after = 0, bad = pattern_check_at(buf + STAMP, c->size - STAMP, seed, c->rank, STAMP, &after);
  *first = idx != want ? 0 : after;
  return bad + (idx != want ? STAMP : 0);
}

/* The block the pass read last (io.read), then every block of this rank's part read back. */
size_t io_verify(scope_ctx *c, void *st, uint64_t seed, size_t *first_bad) {
  io_state *s = st;
  *first_bad = 0;
  if (check_faults(c, s))
    return 0; /* a fault, not bad data: the run ends after this point */
  size_t bad = 0, first = 0;
  if (s->op == IO_READ && (bad = check_block(c, s, c->rbuf, s->blocks - 1, seed, &first)))
    *first_bad = (size_t)(s->blocks - 1) * c->size + first;
  for (long k = 0; k < s->blocks; k++) {
    MPI_File_read_at(s->fh, s->base + (MPI_Offset)k * (MPI_Offset)c->size, c->rbuf, (int)c->size, MPI_BYTE,
                     MPI_STATUS_IGNORE);
    size_t here = check_block(c, s, c->rbuf, k, seed, &first);
    if (here && !bad)
      *first_bad = (size_t)k * c->size + first;
    bad += here;
  }
  return bad;
}

void io_teardown(scope_ctx *c, void *st) {
  io_state *s = st;
  if (s->fh != MPI_FILE_NULL) {
    MPI_File_close(&s->fh);
    if (s->file == FILE_PER_PROCESS || c->rank == 0)
      MPI_File_delete(s->path, MPI_INFO_NULL);
  }
  free(s);
}
