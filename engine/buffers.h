/* A point's buffers: page-aligned send and receive slots, one pair normally, or enough pairs
 * to cycle through twice the last-level cache with --offcache, so every iteration starts
 * with its buffers out of cache. */
#ifndef SCOPE_BUFFERS_H
#define SCOPE_BUFFERS_H
#include <stddef.h>
#include <stdint.h>

#include "scope.h"

typedef struct {
  char *s, *r;
  size_t sstride, rstride, nslots, cur;
  size_t scap, rcap; /* bytes of the blocks behind s and r (a kept block may be larger) */
} bufset;

size_t buffers_llc_bytes(void);
/* 0, or -1 (nothing left allocated) when memory is short. */
int buffers_alloc(bufset *B, const scope_ctx *c, int offcache, uint64_t seed);
/* The blocks go back to a small store the next point takes from (buffers.c). */
void buffers_free(bufset *B);
/* Frees what the store keeps (at the end of the run). */
void buffers_release(void);

static inline void buffers_slot(bufset *B, scope_ctx *c, size_t k) {
  B->cur = k;
  c->sbuf = B->s + k * B->sstride;
  c->rbuf = B->r + k * B->rstride;
}

static inline void buffers_next(bufset *B, scope_ctx *c) {
  if (B->nslots > 1)
    buffers_slot(B, c, B->cur + 1 == B->nslots ? 0 : B->cur + 1);
}

#endif
