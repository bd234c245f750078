/* Where SCOPE's `--osu osu_put_latency` differs from OSU's loop (issue 52): one MPI_Put and
 * an MPI_Win_flush an iteration, under one shared lock, on an MPI_Win_allocate window, with
 * MPI_Wtime read before and after each (OSU 7.4's latency loop); rank 1 waits in a barrier.
 *
 *   bare_put MODE SIZE ITERS     mean us an iteration (both reads included), one JSON line
 *
 * MODE plain: the loop written out, as OSU writes it.
 * MODE harness: the same operations reached as the engine reaches them since issue 52's short
 * path (a test's run function through a pointer, its state in a struct, the short path's flag
 * tested, the put's kind chosen by switch, the completion by flag, the buffer slot advanced,
 * each iteration's second read kept in an array touched beforehand), so the difference of the
 * two is what the harness costs an iteration. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  MPI_Win win;
  char *from;
  int count, target, what, layout, sync, direct, local, n; /* n: elements of a put, blk / elem */
  size_t blk, elem, slot, nslots;
} op_state;

static void issue(op_state *s) {
  MPI_Aint at = (MPI_Aint)(s->slot * s->blk);
  switch (s->layout) {
  case 0:
    switch (s->what) {
    case 0:
      MPI_Put(s->from + at, (int)(s->blk / s->elem), MPI_BYTE, s->target, at, (int)(s->blk / s->elem), MPI_BYTE,
              s->win);
      break;
    default:
      break;
    }
    break;
  default:
    break;
  }
}

static void iteration(void *st) {
  op_state *s = st;
  if (s->direct) { /* the engine's rma_flush_contig */
    MPI_Aint d = (MPI_Aint)(s->slot * s->blk);
    for (int i = 0; i < s->count; i++)
      switch (s->what) {
      case 0:
        MPI_Put(s->from + d, s->n, MPI_BYTE, s->target, d, s->n, MPI_BYTE, s->win);
        break;
      default:
        break;
      }
    if (s->local)
      MPI_Win_flush_local(s->target, s->win);
    else
      MPI_Win_flush(s->target, s->win);
    return;
  }
  for (int i = 0; i < s->count; i++)
    issue(s);
  switch (s->sync) {
  case 2:
    MPI_Win_flush(s->target, s->win);
    break;
  default:
    break;
  }
}

static volatile double sink;

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (argc != 4) {
    if (rank == 0)
      fprintf(stderr, "usage: bare_put plain|harness SIZE ITERS\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  int harness = strcmp(argv[1], "harness") == 0;
  int size = atoi(argv[2]), iters = atoi(argv[3]), skip = iters / 100;
  char *base = NULL;
  MPI_Win win;
  /* BARE_PUT_ORIGIN_BYTES=0: the origin's own part of the window empty, as the engine's is */
  const char *ob = getenv("BARE_PUT_ORIGIN_BYTES");
  MPI_Win_allocate(rank == 0 && ob ? atoi(ob) : size, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
  char *sbuf = malloc((size_t)size + 1);
  memset(sbuf, 1, (size_t)size + 1);
  double *reads = malloc(sizeof *reads * (size_t)iters);
  memset(reads, 0, sizeof *reads * (size_t)iters); /* touched before the loop, as the engine's */
  op_state s = {win, sbuf, 1, 1, 0, 0, 2, 1, 0, size, (size_t)size, 1, 0, 1};
  void (*run)(void *) = iteration;
  double t_start = 0, t_end = 0;
  if (rank == 0) {
    MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
    if (!harness) {
      for (int i = 0; i < skip + iters; i++) {
        if (i == skip)
          t_start = MPI_Wtime();
        if (i >= skip)
          sink = MPI_Wtime();
        MPI_Put(sbuf, size, MPI_CHAR, 1, 0, size, MPI_CHAR, win);
        MPI_Win_flush(1, win);
        if (i >= skip)
          sink = MPI_Wtime();
      }
      t_end = MPI_Wtime();
    } else {
      for (int i = 0; i < skip; i++)
        run(&s);
      t_start = MPI_Wtime();
      for (int i = 0; i < iters; i++) {
        if (s.nslots > 1)
          s.slot = s.slot + 1 == s.nslots ? 0 : s.slot + 1;
        run(&s);
        sink = MPI_Wtime();
        reads[i] = MPI_Wtime();
      }
      t_end = reads[iters - 1];
    }
    MPI_Win_unlock(1, win);
  }
  /* BARE_PUT_TARGET=reduce: rank 1 waits in a reduction of every iteration's time to rank 0,
   * as the engine's ranks meet after a chunk, instead of OSU's barrier */
  if (getenv("BARE_PUT_TARGET") && strcmp(getenv("BARE_PUT_TARGET"), "reduce") == 0) {
    double *all = rank == 0 ? malloc(sizeof *all * (size_t)iters) : NULL;
    MPI_Reduce(reads, all, iters, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    free(all);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0)
    printf("{\"mode\": \"%s\", \"size\": %d, \"iterations\": %d, \"mean_us\": %.5f}\n", argv[1], size, iters,
           (t_end - t_start) * 1e6 / iters);
  free(reads);
  free(sbuf);
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
