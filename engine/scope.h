/* The contract between the engine and a test.  A test is one C file defining one
 * scope_test descriptor, listed once in registry.c.  The engine owns buffers, warm-up,
 * repetition, timing, validation and statistics; a test owns one iteration of its
 * operation.
 *
 * Life of a point (one size and one combination of parameter values):
 *   setup    declare needs (buffer bytes, messages per iteration, bytes credited); may skip
 *   start    optional; buffers exist now (e.g. pre-post receives); a barrier follows
 *   fill     optional; before a data check, once the engine has patterned the buffers with
 *            `seed`: copy or derive data wherever the operation reads (e.g. a one-sided
 *            target's window)
 *   prep     optional, SCOPE_TIMING_BARRIER tests: before each timed repetition, untimed (e.g.
 *            drop a file's pages from the cache)
 *   run      one iteration, called in the timed loop: no allocation, no checks, no output
 *   verify   after one untimed iteration on freshly patterned buffers: count bad bytes
 *   teardown release what setup/start took (cancel pre-posted receives) */
#ifndef SCOPE_H
#define SCOPE_H
#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#define SCOPE_MAX_PARAMS 12
#define SCOPE_ENGINE_VERSION "0.1.0"
#define SCOPE_SCHEMA_VERSION 1

/* SP_BYTES: a whole number of bytes, written as --sizes writes one size (512M, 64K) */
typedef enum { SP_INT, SP_ENUM, SP_BOOL, SP_BYTES } scope_param_type;

typedef struct {
  const char *name;
  scope_param_type type;
  const char *def;            /* default, as the user would write it */
  long min, max;              /* SP_INT and SP_BYTES range */
  const char *const *choices; /* SP_ENUM, NULL-terminated; the value is the index */
  const char *help;
} scope_param;

struct scope_test;

typedef struct scope_ctx {
  const struct scope_test *test;
  MPI_Comm comm;
  int rank, nranks;
  int node, node0, node1;   /* node ids of this rank, rank 0 and rank 1: equal ids share memory
                               (MPI_COMM_TYPE_SHARED); every rank's is never held (issue 55) */
  size_t size;              /* the swept message size in bytes */
  long p[SCOPE_MAX_PARAMS]; /* parameter values in schema order: read them with scope_param_get() */
  char *sbuf, *rbuf;        /* this iteration's buffers (rotated when off-cache) */
  /* declared by setup (defaults: size, size, 1, size) */
  size_t sbuf_bytes, rbuf_bytes;
  double ops_per_iter; /* reported time = iteration time / ops_per_iter */
  double bytes_per_op; /* bytes moved per reported time unit, for bandwidth */
  const char *skip;    /* set by setup to skip the point, with the reason */
  char note[256];      /* set by setup to tell the reader something about the point */
  struct {
    const char *name;
    double value;
  } extra[12]; /* named numbers a test reports with the point (e.g. a delay it used) */
  /* Set by verify (on rank 0) to say a failed check in the test's own words instead of a count
   * of bad bytes: NPB's verification names the value, its reference and the relative error. */
  char check_message[200];
  int nextra;
  /* Paired repetitions (window-timed tests): set by setup or start to have the engine
   * alternate two variants of the operation in one timed loop, repetition k running variant
   * k % 2; variant 0 is the reference (e.g. a non-blocking collective with nothing between
   * start and wait), variant 1 the operation measured.  Both are timed alike; the reference's
   * samples are recorded beside the point's. */
  int paired;
  int variant;
  /* Set by setup on a rank whose own time is not the operation's (a one-sided target that
   * only serves): loop timing takes each sample's slowest rank among the others; window
   * timing has it wait for each repetition's start in MPI (probing), as a rank idle in MPI. */
  int untimed;
  /* Set by setup: consecutive repetitions whose mean is one sample (window timing), so a sample
   * holds one of each case that alternates by repetition (a rotating root's full turn: nranks);
   * 0 or 1: each repetition its own sample. */
  int cycle;
  /* Set by setup where the operation synchronises the ranks itself (a barrier): OSU 7 times it
   * back to back, with no barrier between calls, and so does `--timing osu`. */
  int self_sync;
  /* Pairs timing: this step's partner (-1: this rank sits the step out), whether this rank
   * starts each round trip (the pair's lower rank), and, set by setup, whether the pairs of a
   * step are measured one at a time (isolating a link) rather than all at once, and how many
   * of the sweep's steps are measured (0: every one; K: K spread evenly, a sampled sweep). */
  int peer, pinger, one_pair_at_a_time, sample_steps;
  /* Kernel timing: this rank's phase accounts (see the phase calls below); NULL otherwise. */
  struct scope_phases *phases;
} scope_ctx;

/* How the engine times a test. */
enum {
  SCOPE_TIMING_LOOP = 0, /* back-to-back iterations, chained timestamps (point-to-point) */
  SCOPE_TIMING_WINDOW,   /* each repetition starts at an agreed global time (collectives) */
  SCOPE_TIMING_KERNEL,   /* window timing of a whole algorithm, every rank timing its phases */
  SCOPE_TIMING_BARRIER,  /* each repetition after a barrier, the slowest rank's own time: long
                          * repetitions with an untimed step (prep) between them (I/O) */
  SCOPE_TIMING_PAIRS,    /* every pair of ranks in steps of disjoint pairs (pairs.c): run is one
                          * round trip between c->rank and c->peer, timed by the pair's pinger */
};
/* Whether a test is timed per repetition across ranks (and swept over --procs). */
#define SCOPE_WINDOWED(T) ((T)->timing != SCOPE_TIMING_LOOP && (T)->timing != SCOPE_TIMING_PAIRS)
/* Whether its repetitions start at agreed times on the global clock. */
#define SCOPE_ON_CLOCK(T) (SCOPE_WINDOWED(T) && (T)->timing != SCOPE_TIMING_BARRIER)

/* Kernel timing (SCOPE §6.6-6.7): one repetition is one whole execution of an algorithm, and
 * every rank splits its time T = T_init + T_comp + T_comm + T_idle.  The run hook says which
 * phase it is in; each communication is bracketed by scope_comm_begin/end and names the ranks
 * whose entry into the same communication it waits for.  Idle is then measured, not inferred:
 * after the repetition, entry times on the global clock are exchanged and a rank's idle in a
 * communication is how long it was there before the last rank it waits for arrived (the
 * late-sender wait state of trace analysers such as Scalasca); the rest is T_comm.  Every rank
 * must make the same communications in the same order.  Outside measurement (the data checks)
 * the calls do nothing. */
enum { SCOPE_PH_INIT, SCOPE_PH_COMP, SCOPE_PH_COMM, SCOPE_PH_IDLE, SCOPE_NPHASES };
#define SCOPE_DEP_ALL (-1) /* waits for every rank of the communicator (a collective) */
#define SCOPE_MAX_DEPS 4
#define SCOPE_MAX_OPS 6
/* Time from now on counts to `phase` (SCOPE_PH_INIT or SCOPE_PH_COMP); a repetition starts in
 * SCOPE_PH_INIT. */
void scope_phase(scope_ctx *c, int phase);
/* In setup: names an operation in context (e.g. "bcast" of `bytes` bytes), whose calls are
 * reported beside the same operation's loop figure; returns its id for scope_comm_begin. */
int scope_op(scope_ctx *c, const char *name, const char *test, double bytes);
/* In setup: names a step of the computation (e.g. "fft"), whose share of T_comp is reported per
 * rank; returns its id for scope_compute. */
#define SCOPE_MAX_STEPS 6
int scope_step(scope_ctx *c, const char *name);
/* Time from now on is T_comp spent in `step` (an id; -1: in none in particular). */
void scope_compute(scope_ctx *c, int step);
/* A communication of operation `op` (an id, or -1 for none in particular) waiting for the
 * ranks `deps` (ndeps of them, or one SCOPE_DEP_ALL; 0 for none).  ndeps = SCOPE_UNMATCHED: a
 * communication only some ranks make (a one-sided get), which waits for no rank's entry: it
 * has no idle and is left out of the matching of communications across ranks. */
#define SCOPE_UNMATCHED (-1)
void scope_comm_begin(scope_ctx *c, int op, int ndeps, const int *deps);
void scope_comm_end(scope_ctx *c);

#define SCOPE_MAX_ROLES 8

typedef struct scope_test {
  const char *name;     /* level.operation, e.g. p2p.pingpong */
  const char *level;    /* SCOPE level: p2p, collective, net, node, ... */
  const char *summary;  /* one line */
  const char *measures; /* what one reported time is, e.g. "one-way latency (RTT/2)" */
  int min_ranks;
  int sized; /* swept over message sizes */
  /* Sized tests: the sizes run when --sizes is not given (e.g. "8,1M": a latency and a
   * bandwidth size), where the run-wide default would cost too much; NULL: --sizes' default. */
  const char *sizes;
  int timing; /* SCOPE_TIMING_LOOP or SCOPE_TIMING_WINDOW (then also swept over --procs) */
  /* What the front end may use the test for, e.g. "latency:MPI" (the latency test of a layer
   * in the layer table), "bandwidth:MPI", "model:hockney", "model:loggp", "model:collective",
   * "link:1" (its bandwidth crosses one link once; "link:2" both ways at once), "peer:osu_latency"
   * (what a peer benchmark of that name measures: its output imports as this test). */
  const char *roles[SCOPE_MAX_ROLES];
  const scope_param *params;
  int nparams;
  int (*setup)(scope_ctx *c, void **state);
  void (*start)(scope_ctx *c, void *state);
  void (*fill)(scope_ctx *c, void *state, uint64_t seed);
  void (*run)(scope_ctx *c, void *state);
  void (*prep)(scope_ctx *c, void *state);
  size_t (*verify)(scope_ctx *c, void *state, uint64_t seed, size_t *first_bad);
  void (*teardown)(scope_ctx *c, void *state);
  /* Optional: the bytes of memory one point needs on all its ranks together, from its
   * parameters (scope_param_get), size and nranks alone (comm is MPI_COMM_NULL: it is asked
   * before MPI starts, by `--plan`).  A test whose memory grows beyond its message buffers
   * declares it, so a problem too large for the machine is refused before launch. */
  double (*memory)(scope_ctx *c); /* may say what it counts in c->note */
  /* Optional: why the test refuses a point (a non-square process count for Cannon, too few
   * rows for the ranks), from its parameters and nranks alone, as `memory` is asked (comm is
   * MPI_COMM_NULL: `--plan` asks before MPI starts); NULL when it accepts it.  Asked before
   * setup, whose skip it becomes, so a refusal is defined once for the run and the plan. */
  const char *(*refuse)(scope_ctx *c);
  /* Optional: samples a point takes whatever the budget, where the test's own method asks for
   * them (STREAM: the best of at least 10 trials); 0: the budget rules. */
  int min_samples;
} scope_test;

/* The schema of a descriptor: `SCOPE_PARAMS(params)` sets params and their count. */
#define SCOPE_PARAMS(array) .params = (array), .nparams = (int)(sizeof(array) / sizeof((array)[0]))

extern const scope_test *const scope_registry[];

/* The value of the current point's parameter `name` (an index for enum and bool parameters).
 * Read it in setup and keep it in the test's state: it is a lookup by name. */
long scope_param_get(const scope_ctx *c, const char *name);
/* Whether the test has a parameter of that name. */
int scope_has_param(const scope_ctx *c, const char *name);

/* A user's communication pattern (--pattern FILE): messages sent concurrently. */
typedef struct {
  int src, dst;
  size_t bytes;
} scope_msg;
extern const scope_msg *scope_pattern;
extern int scope_pattern_len;
/* The directory the io tests keep their files in (--io-dir); NULL when not given. */
extern const char *scope_io_dir;

/* Send modes shared by point-to-point tests (SCOPE §6.5.3). */
enum { MODE_STANDARD, MODE_SYNC, MODE_READY, MODE_BUFFERED };
extern const char *const scope_modes_all[];
extern const char *const scope_modes_no_ready[];
extern const char *const scope_bool_choices[];
extern const char *const scope_receive_choices[];

/* Parameter entries shared by several tests, so one name means one thing everywhere. */
#define SCOPE_PARAM_MODE_ALL                                                                                           \
  { "mode", SP_ENUM, "standard", 0, 0, scope_modes_all, "send mode: standard, sync, ready or buffered" }
#define SCOPE_PARAM_MODE_NO_READY                                                                                      \
  { "mode", SP_ENUM, "standard", 0, 0, scope_modes_no_ready, "send mode: standard, sync or buffered" }
#define SCOPE_PARAM_WINDOW                                                                                             \
  { "window", SP_INT, "64", 1, 1024, NULL, "messages in flight per window (at most 16 MiB; MPI receive slots 2 MiB)" }
/* Where a window's messages land: each in its own slot (every message checked; SCOPE's
 * default), or all in one buffer (osu_bw and osu_bibw do this: with -p window=64 -p
 * receive=one the streaming tests are OSU's definition). */
#define SCOPE_PARAM_RECEIVE                                                                                            \
  {                                                                                                                    \
    "receive", SP_ENUM, "slots", 0, 0, scope_receive_choices,                                                          \
        "slots: each message of a window into its own slot; one: all into one buffer, as osu_bw"                       \
  }
/* What the ping-pongs' second rank sends back: the ping it received (so rank 0's check covers
 * both directions; SCOPE's default), or its own send buffer, as OMB's latency tests do.  With a
 * single-copy path (CMA) the echo reads lines the receiver has just written, its own buffer clean
 * ones: one cache-line state apart, measurably so at 64 KiB on some machines. */
enum { REPLY_ECHO, REPLY_OWN };
extern const char *const scope_reply_choices[];
#define SCOPE_PARAM_REPLY                                                                                              \
  {                                                                                                                    \
    "reply", SP_ENUM, "echo", 0, 0, scope_reply_choices,                                                               \
        "echo: the second rank sends back the ping it received; own: its own buffer, as OMB's latency tests"           \
  }
#define SCOPE_PARAM_SEND_BLOCKING                                                                                      \
  { "blocking", SP_BOOL, "no", 0, 1, scope_bool_choices, "blocking sends (yes) or non-blocking + waitall (no)" }
#define SCOPE_PARAM_RING                                                                                               \
  { "ring", SP_BYTES, "65536", 64, 1 << 26, NULL, "bytes in each direction's ring (messages may be larger)" }
#define SCOPE_PARAM_SOCKBUF                                                                                            \
  { "sockbuf", SP_BYTES, "4194304", 0, 1 << 30, NULL, "SO_SNDBUF and SO_RCVBUF to ask for, bytes (0: system default)" }

int scope_send(int mode, const void *buf, size_t n, int dst, int tag, MPI_Comm comm);
int scope_isend(int mode, const void *buf, size_t n, int dst, int tag, MPI_Comm comm, MPI_Request *req);
/* Attach a buffer for `msgs` buffered sends of n bytes; detach releases it. */
int scope_bsend_attach(size_t msgs, size_t n);
void scope_bsend_detach(void);
/* Cancel and complete pre-posted receives that will never be matched. */
void scope_cancel_all(MPI_Request *reqs, int n);
/* A shared-memory segment between ranks 0 and 1 (same node): rank 0 creates it, rank 1 maps
 * it, the name is unlinked at once so nothing outlives the run.  Collective over c->comm;
 * NULL on failure (on every rank). */
void *scope_shm_map(const struct scope_ctx *c, size_t bytes);
void scope_shm_unmap(void *p, size_t bytes);
/* Pin the calling thread to one cpu; returns the previous mask in *old (0 on success). */
int scope_pin(int cpu, void *old_mask, size_t mask_size);
/* A fault of the machine, not of the data (a full file system, a quota): collective over
 * c->comm, every rank agreeing.  Rank 0 writes a `fault` record ({test, kind, message, path})
 * and sets scope_faulted on every rank: the engine measures no further point, ends its run as
 * usual (its output flushed through the launcher, not cut by an abort) and exits 3; the front
 * end closes the run incomplete with the message and exits 3. */
void scope_fault(const struct scope_ctx *c, const char *kind, const char *message, const char *path);
extern int scope_faulted;
void scope_unpin(const void *old_mask, size_t mask_size);

/* The same for bytes [offset, offset + n) of that pattern. */
size_t scope_check_at(const void *buf, size_t n, uint64_t seed, int src, size_t offset, size_t *first_bad);

/* One blocking round trip of c->size bytes with `peer` under `tag`: the rank that `starts` sends
 * c->sbuf and receives into c->rbuf; the other receives into c->rbuf and sends back `reply`
 * (c->rbuf: an echo of what came).  Inline: it is the timed operation of the ping-pongs that
 * pair ranks (p2p.multipair, p2p.allpairs). */
static inline void scope_round_trip(scope_ctx *c, int peer, int starts, const char *reply, int tag) {
  if (starts) {
    MPI_Send(c->sbuf, (int)c->size, MPI_BYTE, peer, tag, c->comm);
    MPI_Recv(c->rbuf, (int)c->size, MPI_BYTE, peer, tag, c->comm, MPI_STATUS_IGNORE);
  } else {
    MPI_Recv(c->rbuf, (int)c->size, MPI_BYTE, peer, tag, c->comm, MPI_STATUS_IGNORE);
    MPI_Send(reply, (int)c->size, MPI_BYTE, peer, tag, c->comm);
  }
}

/* Bad bytes in buf against the pattern `src` would have sent with `seed`. */
size_t scope_check(const void *buf, size_t n, uint64_t seed, int src, size_t *first_bad);

#endif
