/* p2p.pingpong with threads (-p threads=N -p sender_threads=M), as osu_latency_mt: under
 * MPI_THREAD_MULTIPLE, rank 1 serves pings with N threads, each receiving whatever ping comes
 * next (any tag) and echoing it with its tag; rank 0 pings with M threads at once, thread t
 * with tag MT_TAG0 + t.  One iteration is one ping-pong by each of rank 0's M threads (its
 * main thread among them), started together and ended when the last reply is in, so the time
 * reported (the iteration's, halved) is a thread's latency while M ping-pongs share the MPI.
 *
 * Rank 1's main thread takes no part in the pings: its run returns once as many pings as it
 * has been called for have been served, so its loop keeps pace with rank 0's (it is untimed;
 * the figure is rank 0's).  It waits asleep, looking every 5 ms, as osu_latency_mt's main
 * thread sleeps in pthread_join: a thread spinning beside the serving ones would take a core
 * from them, and one waking often moves them.  Measured against osu_latency_mt (2 serving
 * threads and the pinging rank on 2 cores, 6 alternating launches): looking every 0.5 ms read
 * 8.6-31 us at 64 KiB where OMB read 8.0-8.4; every 5 ms 8.2-8.3 us (8 B: 2.25-2.27 against
 * 2.18-2.25); every 20 ms no closer, and each chunk's end waits longer for it.  Rank 0's helper threads spin on the
 * counters between iterations with sched_yield, as idle threads of an MPI code would wait; more threads than cores make
 * every figure a figure of sharing (the engine's oversubscription warning does not see threads). Teardown sends each
 * serving thread a stop message, then joins it. */
#ifndef SCOPE_PINGPONG_MT_H
#define SCOPE_PINGPONG_MT_H
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#include "../scope.h"

#define MT_MAX 64
#define MT_STOP 3
#define MT_TAG0 10

typedef struct mt_team mt_team;
typedef struct {
  mt_team *team;
  int id;    /* thread t of its rank (rank 0: t >= 1; rank 1: t >= 0) */
  char *buf; /* where it receives (its own when several pings may be in flight) */
  pthread_t th;
} mt_thread;

struct mt_team {
  scope_ctx *c;
  int n;                /* threads started on this rank */
  size_t size;          /* bytes a ping */
  atomic_long go, done; /* rank 0: iterations asked, and pings answered by the helpers */
  atomic_long served;   /* rank 1: pings echoed */
  long calls;           /* rank 1: its run's calls */
  int senders;          /* rank 0's threads: pings an iteration */
  const char *reply;    /* rank 1, reply=own: what the serving threads send back (else the ping) */
  mt_thread th[MT_MAX];
};

/* Rank 1: echo each ping with its own tag until told to stop. */
static void *mt_serve(void *arg) {
  mt_thread *t = arg;
  mt_team *T = t->team;
  for (;;) {
    MPI_Status st;
    MPI_Recv(t->buf, (int)T->size, MPI_BYTE, 0, MPI_ANY_TAG, T->c->comm, &st);
    if (st.MPI_TAG == MT_STOP)
      return NULL;
    MPI_Send(T->reply ? T->reply : t->buf, (int)T->size, MPI_BYTE, 0, st.MPI_TAG, T->c->comm);
    atomic_fetch_add(&T->served, 1);
  }
}

static void mt_ping(mt_team *T, int id, const char *sbuf, char *rbuf) {
  MPI_Send(sbuf, (int)T->size, MPI_BYTE, 1, MT_TAG0 + id, T->c->comm);
  MPI_Recv(rbuf, (int)T->size, MPI_BYTE, 1, MT_TAG0 + id, T->c->comm, MPI_STATUS_IGNORE);
}

/* Rank 0's helper thread: one ping-pong each time the main thread starts an iteration. */
static void *mt_send(void *arg) {
  mt_thread *t = arg;
  mt_team *T = t->team;
  for (long seen = 0;;) {
    long go;
    while ((go = atomic_load(&T->go)) == seen)
      sched_yield();
    if (go < 0)
      return NULL;
    seen = go;
    mt_ping(T, t->id, T->c->sbuf, t->buf);
    atomic_fetch_add(&T->done, 1);
  }
}

/* In start: the team of this rank (rank 0: sender_threads - 1 helpers; rank 1: threads). */
static int mt_start(scope_ctx *c, mt_team *T, int senders, int servers) {
  T->c = c;
  T->senders = senders;
  T->size = c->size;
  atomic_init(&T->go, 0);
  atomic_init(&T->done, 0);
  atomic_init(&T->served, 0);
  T->n = c->rank == 0 ? senders - 1 : c->rank == 1 ? servers : 0;
  for (int i = 0; i < T->n; i++) {
    mt_thread *t = &T->th[i];
    t->team = T;
    t->id = c->rank == 0 ? i + 1 : i;
    /* one ping in flight at a time (one sender thread): the serving threads share a buffer, as
     * osu_latency_mt's do; several: each its own */
    t->buf = i > 0 && c->rank == 1 && senders == 1 ? T->th[0].buf : malloc(c->size ? c->size : 1);
    if (!t->buf || pthread_create(&t->th, NULL, c->rank == 0 ? mt_send : mt_serve, t)) {
      T->n = i;
      return -1;
    }
  }
  return 0;
}

/* One iteration: rank 0 pings from every thread at once; rank 1 waits for its share served. */
static void mt_run(scope_ctx *c, mt_team *T) {
  if (c->rank == 0) {
    long want = atomic_load(&T->done) + T->n;
    atomic_fetch_add(&T->go, 1);
    mt_ping(T, 0, c->sbuf, c->rbuf);
    while (atomic_load(&T->done) < want)
      sched_yield();
  } else if (c->rank == 1) {
    long want = ++T->calls * T->senders;
    struct timespec nap = {0, 5000000};
    while (atomic_load(&T->served) < want)
      nanosleep(&nap, NULL);
  }
}

/* In teardown: rank 0 stops its helpers and then rank 1's servers (one stop message each). */
static void mt_stop(scope_ctx *c, mt_team *T, int servers) {
  if (c->rank == 0) {
    atomic_store(&T->go, -1);
    for (int i = 0; i < T->n; i++)
      pthread_join(T->th[i].th, NULL);
    for (int i = 0; i < servers; i++)
      MPI_Send(NULL, 0, MPI_BYTE, 1, MT_STOP, c->comm);
  } else {
    for (int i = 0; i < T->n; i++)
      pthread_join(T->th[i].th, NULL);
  }
  for (int i = 0; i < T->n; i++)
    if (i == 0 || T->th[i].buf != T->th[0].buf)
      free(T->th[i].buf);
  T->n = 0;
}

#endif
