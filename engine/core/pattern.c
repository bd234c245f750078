#include "pattern.h"

static inline uint8_t byte_at(uint64_t seed, int src, size_t i) {
  /* A multiplicative hash of (seed, src, word index); cheap but never periodic at page or
   * power-of-two strides, unlike i & 0xff. */
  uint64_t x = (seed ^ ((uint64_t)(unsigned)src << 48)) + (uint64_t)(i >> 3) * 0x9E3779B97F4A7C15ull;
  x ^= x >> 29;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 32;
  return (uint8_t)(x >> ((i & 7) * 8));
}

void pattern_fill(void *buf, size_t n, uint64_t seed, int src) {
  uint8_t *b = buf;
  for (size_t i = 0; i < n; i++)
    b[i] = byte_at(seed, src, i);
}

size_t pattern_check(const void *buf, size_t n, uint64_t seed, int src, size_t *first) {
  const uint8_t *b = buf;
  size_t bad = 0;
  for (size_t i = 0; i < n; i++)
    if (b[i] != byte_at(seed, src, i)) {
      if (!bad && first)
        *first = i;
      bad++;
    }
  return bad;
}

uint8_t pattern_byte(uint64_t seed, int src, size_t i) {
  return byte_at(seed, src, i);
}

size_t pattern_check_at(const void *buf, size_t n, uint64_t seed, int src, size_t offset, size_t *first) {
  const uint8_t *b = buf;
  size_t bad = 0;
  for (size_t i = 0; i < n; i++)
    if (b[i] != byte_at(seed, src, offset + i)) {
      if (!bad && first)
        *first = i;
      bad++;
    }
  return bad;
}
