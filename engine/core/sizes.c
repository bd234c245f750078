#include "sizes.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static void too_large(const char *s, const char *end, unsigned long long max, char *err, size_t errlen) {
  if (max == SIZES_MAX_BYTES)
    snprintf(err, errlen, "size '%.*s' is larger than 1 GiB", (int)(end - s), s);
  else
    snprintf(err, errlen, "size '%.*s' is larger than %llu bytes", (int)(end - s), s, max);
}

static int parse_size(const char *s, const char *end, unsigned long long max, unsigned long long *v, char *err,
                      size_t errlen) {
  while (s < end && isspace((unsigned char)*s))
    s++;
  while (end > s && isspace((unsigned char)end[-1]))
    end--;
  if (s == end) {
    snprintf(err, errlen, "empty size");
    return -1;
  }
  if (*s == '-') {
    snprintf(err, errlen, "negative size '%.*s'", (int)(end - s), s);
    return -1;
  }
  const char *p = s;
  unsigned long long x = 0;
  while (p < end && isdigit((unsigned char)*p)) {
    x = x * 10 + (unsigned long long)(*p - '0');
    if (x > max * 2) {
      too_large(s, end, max, err, errlen);
      return -1;
    }
    p++;
  }
  if (p == s) {
    snprintf(err, errlen, "'%.*s' is not a size (expected e.g. 64, 8K, 4MiB)", (int)(end - s), s);
    return -1;
  }
  size_t sl = (size_t)(end - p);
  char suf[8] = {0};
  if (sl >= sizeof suf) {
    snprintf(err, errlen, "unknown unit in '%.*s' (use K, M or G)", (int)(end - s), s);
    return -1;
  }
  memcpy(suf, p, sl);
  unsigned long long mult;
  if (sl == 0 || strcasecmp(suf, "B") == 0)
    mult = 1;
  else if (strcasecmp(suf, "K") == 0 || strcasecmp(suf, "Ki") == 0 || strcasecmp(suf, "KiB") == 0)
    mult = 1ull << 10;
  else if (strcasecmp(suf, "M") == 0 || strcasecmp(suf, "Mi") == 0 || strcasecmp(suf, "MiB") == 0)
    mult = 1ull << 20;
  else if (strcasecmp(suf, "G") == 0 || strcasecmp(suf, "Gi") == 0 || strcasecmp(suf, "GiB") == 0)
    mult = 1ull << 30;
  else if (strcasecmp(suf, "KB") == 0 || strcasecmp(suf, "MB") == 0 || strcasecmp(suf, "GB") == 0) {
    snprintf(err, errlen, "'%.*s' is ambiguous: write %lluK (2^10 multiples) or the byte count", (int)(end - s), s, x);
    return -1;
  } else {
    snprintf(err, errlen, "unknown unit in '%.*s' (use K, M or G)", (int)(end - s), s);
    return -1;
  }
  if (x > max / mult) {
    too_large(s, end, max, err, errlen);
    return -1;
  }
  x *= mult;
  *v = x;
  return 0;
}

static int add(unsigned long long *out, size_t max_out, size_t *n, unsigned long long v, char *err, size_t errlen) {
  if (*n >= max_out) {
    snprintf(err, errlen, "more than %zu sizes", max_out);
    return -1;
  }
  out[(*n)++] = v;
  return 0;
}

static int cmp_ull(const void *a, const void *b) {
  unsigned long long x = *(const unsigned long long *)a, y = *(const unsigned long long *)b;
  return (x > y) - (x < y);
}

long sizes_parse(const char *spec, unsigned long long *out, size_t max_out, char *err, size_t errlen) {
  size_t n = 0;
  const char *p = spec;
  if (!spec || !*spec) {
    snprintf(err, errlen, "empty size list");
    return -1;
  }
  while (1) {
    const char *comma = strchr(p, ',');
    const char *end = comma ? comma : p + strlen(p);
    const char *dash = memchr(p, '-', (size_t)(end - p));
    const char *lead = p;
    while (lead < end && isspace((unsigned char)*lead))
      lead++;
    if (dash == lead)
      dash = NULL; /* a leading '-' is a negative number, reported by parse_size */
    if (!dash) {
      unsigned long long v;
      if (parse_size(p, end, SIZES_MAX_BYTES, &v, err, errlen) || add(out, max_out, &n, v, err, errlen))
        return -1;
    } else {
      const char *colon = memchr(dash, ':', (size_t)(end - dash));
      const char *hi_end = colon ? colon : end;
      unsigned long long lo, hi, step = 0;
      double factor = 2.0;
      if (parse_size(p, dash, SIZES_MAX_BYTES, &lo, err, errlen) ||
          parse_size(dash + 1, hi_end, SIZES_MAX_BYTES, &hi, err, errlen))
        return -1;
      if (lo > hi) {
        snprintf(err, errlen, "range '%.*s' runs backwards", (int)(end - p), p);
        return -1;
      }
      if (colon) {
        const char *st = colon + 1;
        if (st < end && (*st == 'x' || *st == 'X' || *st == '*')) {
          char buf[32] = {0}, *e;
          size_t l = (size_t)(end - st - 1);
          if (l >= sizeof buf)
            l = sizeof buf - 1;
          memcpy(buf, st + 1, l);
          factor = strtod(buf, &e);
          if (e == buf || *e || !(factor > 1.0)) {
            snprintf(err, errlen, "step '%.*s' needs a factor above 1, e.g. x4", (int)(end - st), st);
            return -1;
          }
        } else if (st < end && *st == '+') {
          if (parse_size(st + 1, end, SIZES_MAX_BYTES, &step, err, errlen))
            return -1;
          if (step == 0) {
            snprintf(err, errlen, "step '+0' never advances");
            return -1;
          }
        } else {
          snprintf(err, errlen, "step '%.*s' must be xFACTOR or +SIZE", (int)(end - st), st);
          return -1;
        }
      }
      unsigned long long v = lo;
      if (step) {
        for (; v <= hi; v += step)
          if (add(out, max_out, &n, v, err, errlen))
            return -1;
      } else {
        if (v == 0) {
          if (add(out, max_out, &n, 0, err, errlen))
            return -1;
          v = 1;
        }
        while (v <= hi) {
          if (add(out, max_out, &n, v, err, errlen))
            return -1;
          unsigned long long next = (unsigned long long)((double)v * factor);
          v = next > v ? next : v + 1;
        }
      }
    }
    if (!comma)
      break;
    p = comma + 1;
  }
  qsort(out, n, sizeof *out, cmp_ull);
  size_t u = 0;
  for (size_t i = 0; i < n; i++)
    if (u == 0 || out[i] != out[u - 1])
      out[u++] = out[i];
  return (long)u;
}

int sizes_parse_one(const char *text, unsigned long long max, unsigned long long *v, char *err, size_t errlen) {
  return parse_size(text, text + strlen(text), max, v, err, errlen);
}
