/* Parallel I/O (SCOPE App. E, after bonnie: write, read and rewrite of a file in blocks of a
 * known size) on MPI-IO.  One repetition is one pass over this rank's part of the file: the
 * `size` swept is the block, each call moves one block, and the time is the slowest rank's
 * (SCOPE_TIMING_BARRIER), so the bandwidth is the whole file over the pass.
 *
 *   io.write    a fresh file (truncated before each pass, untimed) written block by block,
 *               MPI_File_sync before the clock stops: the data is on the device, not in cache
 *   io.read     the file read block by block; cache=evict (default) drops its pages before each
 *               pass, so the device is read, not memory
 *   io.rewrite  each block read, dirtied and written back in place, then MPI_File_sync
 *
 * The file is shared (rank r's part is the r-th contiguous segment, IOR's segmented layout) or
 * one per process; calls are independent or collective (_all); offsets explicit (_at) or the
 * individual file pointer, after IMB-IO's naming.  Every block carries its index in its first
 * 8 bytes and the engine's pattern after it, so a block in the wrong place is caught. */
#ifndef SCOPE_IO_H
#define SCOPE_IO_H
#include "../scope.h"

enum { IO_WRITE, IO_READ, IO_REWRITE };

#define IO_PARAMS                                                                                                      \
  {                                                                                                                    \
      "file",                                                                                                          \
      SP_ENUM,                                                                                                         \
      "shared",                                                                                                        \
      0,                                                                                                               \
      0,                                                                                                               \
      io_file_choices,                                                                                                 \
      "shared: one file, a segment per rank; per_process: a file each"},                                               \
      {"calls",                                                                                                        \
       SP_ENUM,                                                                                                        \
       "independent",                                                                                                  \
       0,                                                                                                              \
       0,                                                                                                              \
       io_calls_choices,                                                                                               \
       "independent (MPI_File_write) or collective (MPI_File_write_all) calls"},                                       \
      {"offsets",                                                                                                      \
       SP_ENUM,                                                                                                        \
       "explicit",                                                                                                     \
       0,                                                                                                              \
       0,                                                                                                              \
       io_offsets_choices,                                                                                             \
       "explicit (MPI_File_write_at) or the individual file pointer (MPI_File_seek + MPI_File_write)"},                \
      {"total",                                                                                                        \
       SP_BYTES,                                                                                                       \
       "268435456",                                                                                                    \
       4096,                                                                                                           \
       1L << 40,                                                                                                       \
       NULL,                                                                                                           \
       "bytes of the file(s) in all, split evenly over the ranks"},                                                    \
  {                                                                                                                    \
    "cache", SP_ENUM, "evict", 0, 0, io_cache_choices,                                                                 \
        "evict: drop the file's pages from the page cache before each read pass; keep: leave them"                     \
  }

extern const char *const io_file_choices[], *const io_calls_choices[], *const io_offsets_choices[],
                                                                           *const io_cache_choices[];

int io_setup(scope_ctx *c, void **st, int op);
void io_start(scope_ctx *c, void *st);
void io_fill(scope_ctx *c, void *st, uint64_t seed);
void io_prep(scope_ctx *c, void *st);
void io_run(scope_ctx *c, void *st);
size_t io_verify(scope_ctx *c, void *st, uint64_t seed, size_t *first_bad);
void io_teardown(scope_ctx *c, void *st);

#define SCOPE_IO(ID, NAME, OP, SUMMARY, MEASURES, ...)                                                                 \
  static const scope_param params[] = {IO_PARAMS};                                                                     \
  static int setup(scope_ctx *c, void **st) {                                                                          \
    return io_setup(c, st, OP);                                                                                        \
  }                                                                                                                    \
  const scope_test test_##ID = {.name = NAME,                                                                          \
                                .level = "io",                                                                         \
                                .summary = SUMMARY,                                                                    \
                                .measures = MEASURES,                                                                  \
                                .min_ranks = 1,                                                                        \
                                .sized = 1,                                                                            \
                                .timing = SCOPE_TIMING_BARRIER,                                                        \
                                .roles = {__VA_ARGS__},                                                                \
                                SCOPE_PARAMS(params),                                                                  \
                                .setup = setup,                                                                        \
                                .start = io_start,                                                                     \
                                .fill = io_fill,                                                                       \
                                .prep = io_prep,                                                                       \
                                .run = io_run,                                                                         \
                                .verify = io_verify,                                                                   \
                                .teardown = io_teardown}
#endif
