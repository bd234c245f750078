/* A user's pattern (MPIBench): every (source, destination, size) line of --pattern FILE is
 * sent at once, each with a tag of its own so exactly the listed messages match.  Timed in
 * windows on the global clock; every received message is checked against its sender's data. */
#include "coll.h"

static int setup(scope_ctx *c, void **st) {
  if (!scope_pattern) {
    c->skip = "no pattern: give one with --pattern FILE (lines 'SOURCE DESTINATION SIZE')";
    return coll_setup_state(c, st, NULL);
  }
  size_t send_max = 0, recv_total = 0, total = 0;
  for (int i = 0; i < scope_pattern_len; i++) {
    const scope_msg *m = &scope_pattern[i];
    if (m->src >= c->nranks || m->dst >= c->nranks) {
      c->skip = "the pattern names ranks beyond this process count";
      return coll_setup_state(c, st, NULL);
    }
    total += m->bytes;
    if (m->src == c->rank && m->bytes > send_max)
      send_max = m->bytes;
    if (m->dst == c->rank)
      recv_total += m->bytes;
  }
  c->sbuf_bytes = send_max;
  c->rbuf_bytes = recv_total;
  c->bytes_per_op = (double)total;
  c->extra[0].name = "messages";
  c->extra[0].value = scope_pattern_len;
  c->extra[1].name = "bytes";
  c->extra[1].value = (double)total;
  c->nextra = 2;
  return coll_setup_state(c, st, NULL);
}

static void run(scope_ctx *c, void *st) {
  (void)st;
  MPI_Request req[2 * 256];
  int n = 0;
  size_t at = 0;
  for (int i = 0; i < scope_pattern_len; i++) {
    const scope_msg *m = &scope_pattern[i];
    if (m->dst == c->rank) {
      MPI_Irecv(c->rbuf + at, (int)m->bytes, MPI_BYTE, m->src, 100 + i, c->comm, &req[n++]);
      at += m->bytes;
    }
    if (m->src == c->rank)
      MPI_Isend(c->sbuf, (int)m->bytes, MPI_BYTE, m->dst, 100 + i, c->comm, &req[n++]);
    if (n >= 2 * 256 - 2) { /* more than fits in flight here: complete these first */
      MPI_Waitall(n, req, MPI_STATUSES_IGNORE);
      n = 0;
    }
  }
  MPI_Waitall(n, req, MPI_STATUSES_IGNORE);
}

static size_t verify(scope_ctx *c, void *st, uint64_t seed, size_t *first) {
  (void)st;
  size_t bad = 0, at = 0;
  for (int i = 0; i < scope_pattern_len; i++) {
    const scope_msg *m = &scope_pattern[i];
    if (m->dst == c->rank) {
      bad += scope_check(c->rbuf + at, m->bytes, seed, m->src, first);
      at += m->bytes;
    }
  }
  return bad;
}

const scope_test test_p2p_pattern = {
    .name = "p2p.pattern",
    .level = "p2p",
    .summary = "a user's pattern: the (source, destination, size) lines of --pattern FILE, all at once",
    .measures = "global completion time (last exit - common start)",
    .min_ranks = 2,
    .sized = 0,
    .timing = SCOPE_TIMING_WINDOW,
    .roles = {"link:1"},
    .setup = setup,
    .run = run,
    .verify = verify,
    .teardown = coll_free,
};
