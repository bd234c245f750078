/* A lock-free single-producer single-consumer byte ring in shared memory: the user-level
 * channel of ParaStation2's "HAL" layer.  Producer and consumer poll; the data path has no
 * system call and no lock, only a release store of the head after the copy and an acquire
 * load on the other side.  Messages are framed with an 8-byte length, so an empty message
 * still signals, and longer messages than the ring stream through it in pieces. */
#ifndef SCOPE_RING_H
#define SCOPE_RING_H
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "../scope.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define cpu_relax() _mm_pause()
#else
#define cpu_relax() ((void)0)
#endif

typedef struct {
  _Alignas(64) _Atomic uint64_t head; /* bytes written, by the producer */
  _Alignas(64) _Atomic uint64_t tail; /* bytes read, by the consumer */
  _Alignas(64) char data[];
} ring_t;

static inline size_t ring_bytes(size_t cap) {
  return sizeof(ring_t) + cap;
}

static inline void ring_write(ring_t *r, size_t cap, const char *src, size_t n) {
  uint64_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
  while (n) {
    uint64_t tail = atomic_load_explicit(&r->tail, memory_order_acquire);
    size_t free_ = cap - (size_t)(head - tail);
    if (!free_) {
      cpu_relax();
      continue;
    }
    size_t k = n < free_ ? n : free_, at = (size_t)(head % cap), first = cap - at < k ? cap - at : k;
    memcpy(r->data + at, src, first);
    memcpy(r->data, src + first, k - first);
    head += k;
    atomic_store_explicit(&r->head, head, memory_order_release);
    src += k;
    n -= k;
  }
}

static inline void ring_read(ring_t *r, size_t cap, char *dst, size_t n) {
  uint64_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
  while (n) {
    uint64_t head = atomic_load_explicit(&r->head, memory_order_acquire);
    size_t avail = (size_t)(head - tail);
    if (!avail) {
      cpu_relax();
      continue;
    }
    size_t k = n < avail ? n : avail, at = (size_t)(tail % cap), first = cap - at < k ? cap - at : k;
    memcpy(dst, r->data + at, first);
    memcpy(dst + first, r->data, k - first);
    tail += k;
    atomic_store_explicit(&r->tail, tail, memory_order_release);
    dst += k;
    n -= k;
  }
}

static inline void ring_send(ring_t *r, size_t cap, const char *buf, size_t n) {
  uint64_t len = n;
  ring_write(r, cap, (const char *)&len, sizeof len);
  ring_write(r, cap, buf, n);
}

/* Returns the length the sender framed; reads at most `max` bytes of it into buf. */
static inline size_t ring_recv(ring_t *r, size_t cap, char *buf, size_t max) {
  uint64_t len;
  ring_read(r, cap, (char *)&len, sizeof len);
  ring_read(r, cap, buf, len < max ? (size_t)len : max);
  return (size_t)len;
}

/* Two rings, 0->1 and 1->0, in one segment shared by ranks 0 and 1. */
typedef struct {
  void *seg;
  size_t seg_bytes, cap;
  ring_t *to1, *to0;
} ring_pair;

static inline const char *ring_pair_open(scope_ctx *c, ring_pair *p, size_t cap) {
  if (c->nranks < 2 || c->node0 != c->node1)
    return "ranks 0 and 1 are on different nodes: a shared-memory channel does not apply";
  p->cap = cap;
  size_t one = (ring_bytes(cap) + 4095) & ~(size_t)4095;
  p->seg_bytes = 2 * one;
  p->seg = scope_shm_map(c, p->seg_bytes);
  if (!p->seg)
    return "cannot create a shared-memory segment (is /dev/shm mounted and writable?)";
  if (c->rank < 2) {
    p->to1 = (ring_t *)p->seg;
    p->to0 = (ring_t *)((char *)p->seg + one);
  }
  if (c->rank == 0) {
    atomic_store(&p->to1->head, 0);
    atomic_store(&p->to1->tail, 0);
    atomic_store(&p->to0->head, 0);
    atomic_store(&p->to0->tail, 0);
  }
  MPI_Barrier(c->comm);
  return NULL;
}

#endif
