#include "buffers.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/pattern.h"

/* Off-cache slots never take more than this per rank, whatever the cache claims to be. */
#define OFFCACHE_MAX_BYTES ((size_t)4 << 30)

size_t buffers_llc_bytes(void) {
  long v = sysconf(_SC_LEVEL3_CACHE_SIZE);
  if (v <= 0)
    v = sysconf(_SC_LEVEL2_CACHE_SIZE);
  return v > 0 ? (size_t)v : (size_t)32 << 20;
}

static size_t round_page(size_t n) {
  return n ? (n + 4095) & ~(size_t)4095 : 4096;
}

int buffers_alloc(bufset *B, const scope_ctx *c, int offcache, uint64_t seed) {
  B->sstride = round_page(c->sbuf_bytes);
  B->rstride = round_page(c->rbuf_bytes);
  B->nslots = 1;
  if (offcache) {
    /* A cap on bytes, not on slots: a small message's slot pair is 8 KiB, and a large
     * last-level cache (hundreds of MiB on some virtual machines) needs many of them. */
    size_t pair = B->sstride + B->rstride, want = 2 * buffers_llc_bytes() / pair + 1;
    B->nslots = want * pair > OFFCACHE_MAX_BYTES ? OFFCACHE_MAX_BYTES / pair : want;
    if (B->nslots < 1)
      B->nslots = 1;
  }
  B->cur = 0;
  B->s = B->r = NULL;
  if (posix_memalign((void **)&B->s, 4096, B->sstride * B->nslots) ||
      posix_memalign((void **)&B->r, 4096, B->rstride * B->nslots)) {
    buffers_free(B);
    return -1;
  }
  for (size_t i = 0; i < B->nslots; i++)
    pattern_fill(B->s + i * B->sstride, c->sbuf_bytes, seed, c->rank);
  memset(B->r, 0, B->rstride * B->nslots);
  return 0;
}

void buffers_free(bufset *B) {
  free(B->s);
  free(B->r);
  B->s = B->r = NULL;
}
