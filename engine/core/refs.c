#include "refs.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static int grow(void **p, long *cap, long need, size_t size) {
  if (need <= *cap)
    return 0;
  long c = *cap ? *cap : 16;
  while (c < need)
    c *= 2;
  void *q = realloc(*p, (size_t)c * size);
  if (!q)
    return -1;
  *p = q;
  *cap = c;
  return 0;
}

static int add_point(refs_list *L, long index) {
  if (grow((void **)&L->points, &L->cap, L->n + 1, sizeof *L->points))
    return -1;
  L->points[L->n++] = (struct refs_point){index, L->nvals, 0};
  return 0;
}

static int add_value(refs_list *L, double median, double ci_rel) {
  if (grow((void **)&L->vals, &L->capvals, L->nvals + 1, sizeof *L->vals))
    return -1;
  L->vals[L->nvals++] = (launch_ref){median, ci_rel};
  L->points[L->n - 1].count++;
  return 0;
}

int refs_parse(refs_list *L, const char *item, char *err, size_t errlen) {
  const char *p = item;
  while (*p) {
    char *end;
    long index = strtol(p, &end, 10);
    if (end == p || *end != '=' || index < 0) {
      snprintf(err, errlen, "expected INDEX=MEDIAN/CI[:MEDIAN/CI...], got '%.60s'", p);
      return -1;
    }
    if (add_point(L, index))
      goto nomem;
    p = end;
    do {
      double m = strtod(p + 1, &end);
      if (end == p + 1 || *end != '/' || !(m > 0) || !isfinite(m)) {
        snprintf(err, errlen, "point %ld: a median is a positive number followed by /CI", index);
        return -1;
      }
      const char *q = end + 1;
      double c = strtod(q, &end);
      if (end == q || !(c >= 0) || !isfinite(c) || (*end && *end != ':' && *end != ',')) {
        snprintf(err, errlen, "point %ld: a CI half-width is a number of 0 or more", index);
        return -1;
      }
      if (add_value(L, m, c))
        goto nomem;
      p = end;
    } while (*p == ':');
    if (*p == ',')
      p++;
  }
  return 0;
nomem:
  snprintf(err, errlen, "out of memory");
  return -1;
}

launch_refs *refs_by_point(const refs_list *L, long npoints, char *err, size_t errlen) {
  launch_refs *at = calloc((size_t)(npoints > 0 ? npoints : 1), sizeof *at);
  if (!at) {
    snprintf(err, errlen, "out of memory");
    return NULL;
  }
  for (long i = 0; i < L->n; i++) {
    const struct refs_point *p = &L->points[i];
    if (p->index >= npoints) {
      snprintf(err, errlen, "names point %ld, the plan has %ld", p->index, npoints);
      free(at);
      return NULL;
    }
    at[p->index] = (launch_refs){p->count, L->vals + p->first};
  }
  return at;
}

void refs_free(refs_list *L) {
  free(L->points);
  free(L->vals);
  *L = (refs_list){0};
}
