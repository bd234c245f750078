/* Test hooks read from the environment, where more than one part of the engine needs the same
 * one.  Each stands in for a reading of the machine, so a test checks a rule that depends on
 * the machine without the machine's cost. */
#ifndef SCOPE_TESTHOOK_H
#define SCOPE_TESTHOOK_H
#include <stddef.h>
#include <stdlib.h>

/* SCOPE_TEST_LLC=BYTES: the last-level cache, wherever the engine reads it (--offcache's slots,
 * the canary's copy, the context's llc_bytes, node.stream's 4x rule); 0 where unset.  The
 * rules scale with the cache, and on a VM that reports the host's (480 MiB here) a test of
 * them would fill GiBs. */
static inline size_t testhook_llc_bytes(void) {
  const char *s = getenv("SCOPE_TEST_LLC");
  return s ? (size_t)strtoull(s, NULL, 10) : 0;
}
#endif
