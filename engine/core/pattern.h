/* Data patterns for validation: every byte depends on a seed, the sending rank and its
 * offset, so truncation, shifts, stale data and crossed messages are all caught. */
#ifndef SCOPE_PATTERN_H
#define SCOPE_PATTERN_H
#include <stddef.h>
#include <stdint.h>

void pattern_fill(void *buf, size_t n, uint64_t seed, int src);
/* Number of bytes that differ from the expected pattern; *first gets the first bad offset. */
size_t pattern_check(const void *buf, size_t n, uint64_t seed, int src, size_t *first);

/* The same for bytes [offset, offset + n) of what `src` would have sent. */
size_t pattern_check_at(const void *buf, size_t n, uint64_t seed, int src, size_t offset, size_t *first);
/* Byte i of the pattern (for references computed from other ranks' data). */
uint8_t pattern_byte(uint64_t seed, int src, size_t i);

/* An index in [0, n) drawn from byte i of the pattern: where a check samples a result. */
static inline size_t pattern_index(uint64_t seed, int src, size_t i, size_t n) {
  return (size_t)pattern_byte(seed, src, i) * n / 256;
}

#endif
