/* A minimal unit-test harness: CHECK counts, the closing line is "N passed, N failed". */
#ifndef SCOPE_UNIT_H
#define SCOPE_UNIT_H
#include <stdio.h>

static int unit_pass, unit_fail;

#define CHECK(cond, ...)                                                                                               \
  do {                                                                                                                 \
    if (cond) {                                                                                                        \
      unit_pass++;                                                                                                     \
    } else {                                                                                                           \
      unit_fail++;                                                                                                     \
      fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);                                                  \
      fprintf(stderr, __VA_ARGS__);                                                                                    \
      fputc('\n', stderr);                                                                                             \
    }                                                                                                                  \
  } while (0)

static int unit_finish(const char *suite) {
  printf("%s: %d passed, %d failed\n", suite, unit_pass, unit_fail);
  return unit_fail ? 1 : 0;
}

#endif
