#include "buffers.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/pattern.h"
#include "core/testhook.h"

/* Off-cache slots never take more than this per rank, whatever the cache claims to be. */
#define OFFCACHE_MAX_BYTES ((size_t)4 << 30)

size_t buffers_llc_bytes(void) {
  size_t fake = testhook_llc_bytes();
  if (fake)
    return fake;
  long v = sysconf(_SC_LEVEL3_CACHE_SIZE);
  if (v <= 0)
    v = sysconf(_SC_LEVEL2_CACHE_SIZE);
  return v > 0 ? (size_t)v : (size_t)32 << 20;
}

static size_t round_page(size_t n) {
  return n ? (n + 4095) & ~(size_t)4095 : 4096;
}

/* A point's freed blocks are kept for the next point: otherwise every large point maps fresh
 * pages and faults them in (14 ms for a 28 MiB stream window here), time its budget pays for
 * outside the timed loop.  A request no kept block fits frees them all first, so the peak
 * stays what one point needs. */
#define KEPT_BLOCKS 2
static struct {
  char *p;
  size_t bytes;
} kept[KEPT_BLOCKS];

static void drop_kept(void) {
  for (int i = 0; i < KEPT_BLOCKS; i++) {
    free(kept[i].p);
    kept[i].p = NULL;
  }
}

/* The smallest kept block of at least `bytes`, or a fresh one; *cap gets its size. */
static char *take(size_t bytes, size_t *cap) {
  int best = -1;
  for (int i = 0; i < KEPT_BLOCKS; i++)
    if (kept[i].p && kept[i].bytes >= bytes && (best < 0 || kept[i].bytes < kept[best].bytes))
      best = i;
  if (best >= 0) {
    char *p = kept[best].p;
    *cap = kept[best].bytes;
    kept[best].p = NULL;
    return p;
  }
  drop_kept();
  void *p = NULL;
  *cap = bytes;
  return posix_memalign(&p, 4096, bytes) ? NULL : p;
}

static void keep(char *p, size_t bytes) {
  if (!p)
    return;
  int slot = 0;
  for (int i = 1; i < KEPT_BLOCKS; i++)
    if (!kept[i].p || (kept[slot].p && kept[i].bytes < kept[slot].bytes))
      slot = i;
  if (kept[slot].p && kept[slot].bytes >= bytes) {
    free(p);
    return;
  }
  free(kept[slot].p);
  kept[slot].p = p;
  kept[slot].bytes = bytes;
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
  B->s = take(B->sstride * B->nslots, &B->scap);
  B->r = B->s ? take(B->rstride * B->nslots, &B->rcap) : NULL;
  if (!B->s || !B->r) {
    buffers_free(B);
    drop_kept();
    return -1;
  }
  for (size_t i = 0; i < B->nslots; i++)
    pattern_fill(B->s + i * B->sstride, c->sbuf_bytes, seed, c->rank);
  memset(B->r, 0, B->rstride * B->nslots);
  return 0;
}

void buffers_free(bufset *B) {
  keep(B->s, B->scap);
  keep(B->r, B->rcap);
  B->s = B->r = NULL;
}

void buffers_release(void) {
  drop_kept();
}
