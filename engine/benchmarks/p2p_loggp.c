/* LogGP parameters by the PRTT method of Netgauge (Hoefler, Lichei, Rehm, "Low-Overhead
 * LogGP Parameter Assessment for Modern Interconnection Networks", IPDPS 2007).
 *
 * PRTT(n, d, s): rank 0 sends n messages of s bytes, waiting d after each send returns;
 * rank 1 answers the last with an empty message.  One iteration is one PRTT.
 *   pattern=rtt      PRTT(1, 0, s)
 *   pattern=burst    PRTT(n, 0, s)      -> (PRTT(n,0,s) - PRTT(1,0,s)) / (n-1) = g + (s-1) G
 *   pattern=delayed  PRTT(n, d, s) with d = PRTT(1, 0, s), measured first (untimed) and
 *                    reported as extra.d_us -> (PRTT(n,d,s) - PRTT(1,0,s)) / (n-1) - d = o
 * The parameters themselves are fitted by the front end (scope/analysis/loggp.py). */
#include <stdlib.h>

#include "../core/stats.h"
#include "../core/timer.h"
#include "../scope.h"

enum { PAT_RTT, PAT_BURST, PAT_DELAYED };

static const char *const patterns[] = {"rtt", "burst", "delayed", NULL};

static const scope_param params[] = {
    {"pattern", SP_ENUM, "rtt", 0, 0, patterns, "rtt = PRTT(1,0,s), burst = PRTT(n,0,s), delayed = PRTT(n,d,s)"},
    {"n", SP_INT, "16", 2, 1024, NULL, "messages per burst"},
};

typedef struct {
  int k;          /* messages per iteration */
  uint64_t delay; /* ticks to wait after each send */
} state;

static int setup(scope_ctx *c, void **st) {
  state *s = calloc(1, sizeof *s);
  if (!s)
    return -1;
  s->k = scope_param_get(c, "pattern") == PAT_RTT ? 1 : (int)scope_param_get(c, "n");
  c->ops_per_iter = 1;
  c->bytes_per_op = (double)s->k * (double)c->size;
  *st = s;
  return 0;
}

static void one_prtt(scope_ctx *c, int k, uint64_t delay) {
  if (c->rank == 0) {
    for (int i = 0; i < k; i++) {
      MPI_Send(c->sbuf, (int)c->size, MPI_BYTE, 1, 0, c->comm);
      if (delay && i + 1 < k) {
        uint64_t t0 = timer_now();
        while (timer_now() - t0 < delay)
          ;
      }
    }
    MPI_Recv(NULL, 0, MPI_BYTE, 1, 1, c->comm, MPI_STATUS_IGNORE);
  } else if (c->rank == 1) {
    for (int i = 0; i < k; i++)
      MPI_Recv(c->rbuf, (int)c->size, MPI_BYTE, 0, 0, c->comm, MPI_STATUS_IGNORE);
    MPI_Send(NULL, 0, MPI_BYTE, 0, 1, c->comm);
  }
}

/* d = PRTT(1, 0, s), the median of 51 untimed round trips, so d exceeds g + (s-1) G. */
static void start(scope_ctx *c, void *st) {
  state *s = st;
  if (scope_param_get(c, "pattern") != PAT_DELAYED)
    return;
  enum { N = 51 };
  double t[N];
  for (int i = 0; i < 5; i++)
    one_prtt(c, 1, 0);
  for (int i = 0; i < N; i++) {
    uint64_t t0 = timer_now();
    one_prtt(c, 1, 0);
    t[i] = (double)(timer_now() - t0);
  }
  stats_sort(t, N);
  uint64_t d = (uint64_t)t[N / 2];
  MPI_Bcast(&d, 1, MPI_UINT64_T, 0, c->comm);
  s->delay = d;
  c->extra[0].name = "d_us";
  c->extra[0].value = (double)d * timer_tick_ns() * 1e-3;
  c->nextra = 1;
}

static void run(scope_ctx *c, void *st) {
  state *s = st;
  one_prtt(c, s->k, s->delay);
}

static size_t verify(scope_ctx *c, void *st, uint64_t seed, size_t *first) {
  (void)st;
  return c->rank == 1 ? scope_check(c->rbuf, c->size, seed, 0, first) : 0;
}

static void teardown(scope_ctx *c, void *st) {
  (void)c;
  free(st);
}

const scope_test test_p2p_loggp = {
    .name = "p2p.loggp",
    .level = "p2p",
    .summary = "parametrised round trips PRTT(n,d,s) for the LogGP parameters L, o, g, G (Netgauge's method)",
    .measures = "one parametrised round trip PRTT(n,d,s)",
    .min_ranks = 2,
    .sized = 1,
    .roles = {"model:loggp", "link:1"},
    SCOPE_PARAMS(params),
    .setup = setup,
    .start = start,
    .run = run,
    .verify = verify,
    .teardown = teardown,
};
