#include "pattern.h"

#include <string.h>

/* A multiplicative hash of (seed, src, word index); cheap but never periodic at page or
 * power-of-two strides, unlike i & 0xff.  Byte i of the pattern is byte i % 8 of word i / 8,
 * least significant first. */
static inline uint64_t word_at(uint64_t seed, int src, size_t w) {
  uint64_t x = (seed ^ ((uint64_t)(unsigned)src << 48)) + (uint64_t)w * 0x9E3779B97F4A7C15ull;
  x ^= x >> 29;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 32;
  return x;
}

static inline uint8_t byte_at(uint64_t seed, int src, size_t i) {
  return (uint8_t)(word_at(seed, src, i >> 3) >> ((i & 7) * 8));
}

/* Word w's eight bytes in pattern order, whatever the host's byte order: the checks run a
 * word at a time (tens of MB a point), so they cost what a copy does, not eight hashes a word. */
static inline void word_bytes(uint64_t x, uint8_t out[8]) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  memcpy(out, &x, 8);
#else
  for (int k = 0; k < 8; k++)
    out[k] = (uint8_t)(x >> (8 * k));
#endif
}

void pattern_fill(void *buf, size_t n, uint64_t seed, int src) {
  uint8_t *b = buf, w8[8];
  size_t whole = n / 8;
  for (size_t w = 0; w < whole; w++) {
    word_bytes(word_at(seed, src, w), w8);
    memcpy(b + 8 * w, w8, 8);
  }
  for (size_t i = 8 * whole; i < n; i++)
    b[i] = byte_at(seed, src, i);
}

size_t pattern_check_at(const void *buf, size_t n, uint64_t seed, int src, size_t offset, size_t *first) {
  const uint8_t *b = buf;
  size_t bad = 0, i = 0;
  /* bytes up to the pattern's next word boundary, then whole words, then the tail; a word
   * that differs is recounted byte by byte, so `bad` and `first` are exact */
  for (; i < n && (offset + i) % 8; i++)
    if (b[i] != byte_at(seed, src, offset + i) && !bad++ && first)
      *first = i;
  uint8_t w8[8];
  for (; i + 8 <= n; i += 8) {
    word_bytes(word_at(seed, src, (offset + i) / 8), w8);
    if (memcmp(b + i, w8, 8) == 0)
      continue;
    for (int k = 0; k < 8; k++)
      if (b[i + k] != w8[k] && !bad++ && first)
        *first = i + k;
  }
  for (; i < n; i++)
    if (b[i] != byte_at(seed, src, offset + i) && !bad++ && first)
      *first = i;
  return bad;
}

size_t pattern_check(const void *buf, size_t n, uint64_t seed, int src, size_t *first) {
  return pattern_check_at(buf, n, seed, src, 0, first);
}

uint8_t pattern_byte(uint64_t seed, int src, size_t i) {
  return byte_at(seed, src, i);
}
