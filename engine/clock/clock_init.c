/* The library's entry and exit: the timer chosen as the engine chooses it, the spin to a steady
 * core, the first synchronisation; the clock freed. */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "../core/warm.h"
#include "clock_state.h"

static double mpi_wtime(void) {
  return MPI_Wtime();
}

/* MPI_Wtime as the timer module reads it: the process's one setting, made once, so threads that
 * each make a clock do not write it at once. */
static pthread_once_t wtime_once = PTHREAD_ONCE_INIT;
static void set_wtime(void) {
  timer_set_wtime(mpi_wtime, MPI_Wtick());
}

timer_kind scl_choose_timer(MPI_Comm comm, const char *name, int per_rank, timer_info info[TIMER_COUNT]) {
  pthread_once(&wtime_once, set_wtime);
  timer_probe(info);
  /* Ranks of one node read the same counter: calibrate it once (the node's first rank) and
   * share the tick, so their clocks agree and a preempted calibration spin cannot make an
   * oversubscribed rank's clock drift against its neighbours'. */
  if (!per_rank) { /* per rank: each its own, as on its own host */
    MPI_Comm node_comm;
    MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node_comm);
    MPI_Bcast(&info[TIMER_TSC].tick_ns, 1, MPI_DOUBLE, 0, node_comm);
    MPI_Comm_free(&node_comm);
  }
  int chosen = (int)timer_best(info);
#ifdef SCOPE_SIM
  /* under SimGrid every rank is a thread of one process on the host: the host's counters time
   * the host, only MPI_Wtime reads the simulated clock */
  chosen = TIMER_MPI;
  name = NULL;
#endif
  timer_kind asked = name ? timer_by_name(name) : TIMER_COUNT;
  if (asked < TIMER_FAKE && info[asked].available)
    chosen = (int)asked;
  MPI_Bcast(&chosen, 1, MPI_INT, 0, comm);
  int have = info[chosen].available, all_have;
  MPI_Allreduce(&have, &all_have, 1, MPI_INT, MPI_LAND, comm);
  if (!all_have)
    chosen = TIMER_CLOCK; /* heterogeneous nodes: fall back to what every rank has */
  return (timer_kind)chosen;
}

static int known_timer(const char *name) {
  return timer_by_name(name) < TIMER_FAKE;
}

/* Options in their domains: a known timer and method, spans finite and at most a minute. */
static int options_valid(const scope_clock_options *o) {
  if (!o)
    return 1;
  return (!o->timer || known_timer(o->timer)) && (!o->method || cm_method_named(o->method)) && o->span_s >= 0 &&
         o->span_s <= 60 && isfinite(o->warm_s) && o->warm_s <= 60;
}

int scope_clock_init(MPI_Comm comm, const scope_clock_options *o, scope_clock **out) {
  int up = 0, down = 0;
  MPI_Initialized(&up);
  if (up)
    MPI_Finalized(&down);
  if (!up || down || comm == MPI_COMM_NULL)
    return SCOPE_CLOCK_EINVAL; /* no communicator to agree over */
  /* collective: every rank learns whether any rank's arguments were bad, so none waits on it */
  int mine = out != NULL && options_valid(o), all = 0;
  if (MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_LAND, comm) != MPI_SUCCESS)
    return SCOPE_CLOCK_EMPI;
  if (!all)
    return SCOPE_CLOCK_EINVAL;
  timer_info info[TIMER_COUNT];
  timer_kind k = scl_choose_timer(comm, o ? o->timer : NULL, o && o->per_rank, info);
  int e = scl_open(comm, 1, k, info[k].tick_ns, o, out);
  if (e)
    return e;
#ifndef SCOPE_SIM /* a simulated core has no speed to reach */
  double warm = !o || o->warm_s == 0 ? 0.2 : o->warm_s;
  if (warm > 0)
    warm_spin(warm, timer_wall_s);
#endif
  return scope_clock_sync(*out);
}

const char *scope_clock_timer(const scope_clock *c) {
  return c ? timer_name(c->kind) : NULL;
}

int scope_clock_finalize(scope_clock **cp) {
  if (!cp || !*cp)
    return SCOPE_CLOCK_EINVAL;
  scope_clock *c = *cp;
  int e = c->events ? scope_clock_events_close(c) : SCOPE_CLOCK_OK;
  if (c->leaders != MPI_COMM_NULL)
    MPI_Comm_free(&c->leaders);
  if (c->domain != MPI_COMM_NULL)
    MPI_Comm_free(&c->domain);
  if (c->own_comm)
    MPI_Comm_free(&c->comm);
  free(c->history);
  free(c);
  *cp = NULL;
  return e;
}

const char *scope_clock_version(void) {
  return SCOPE_CLOCK_VERSION;
}

const char *scope_clock_strerror(int code) {
  switch (code < 0 ? -code : code) {
  case SCOPE_CLOCK_OK:
    return "no error";
  case SCOPE_CLOCK_EINVAL:
    return "an argument out of its domain (a NULL clock or communicator, an unknown timer or method, a span "
           "past 60 s, an event name that is empty, over 64 bytes, not UTF-8 or holds a control character, MPI "
           "not initialised or already finalised) on this rank or another";
  case SCOPE_CLOCK_ENOMEM:
    return "out of memory";
  case SCOPE_CLOCK_EIO:
    return "the events file could not be opened or written";
  case SCOPE_CLOCK_ESTATE:
    return "called in the wrong state (events not open, or opened twice)";
  case SCOPE_CLOCK_EEXIST:
    return "another clock of this process writes that events file (give each clock its own prefix)";
  case SCOPE_CLOCK_EMPI:
    return "an MPI call failed: the communicator is not usable";
  default:
    return "unknown error";
  }
}
