#include "json.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void jw_init(json_w *w) {
  memset(w, 0, sizeof *w);
}
void jw_free(json_w *w) {
  free(w->buf);
  memset(w, 0, sizeof *w);
}
void jw_reset(json_w *w) {
  w->len = 0;
  w->need_comma = 0;
  w->failed = 0;
}

static void put(json_w *w, const char *s, size_t n) {
  if (w->failed)
    return;
  if (w->len + n + 1 > w->cap) {
    size_t cap = w->cap ? w->cap : 4096;
    while (cap < w->len + n + 1)
      cap *= 2;
    char *b = realloc(w->buf, cap);
    if (!b) {
      w->failed = 1;
      return;
    }
    w->buf = b;
    w->cap = cap;
  }
  memcpy(w->buf + w->len, s, n);
  w->len += n;
  w->buf[w->len] = 0;
}
static void puts_(json_w *w, const char *s) {
  put(w, s, strlen(s));
}

static void sep(json_w *w) {
  if (w->need_comma)
    put(w, ",", 1);
  w->need_comma = 1;
}

void jw_obj_begin(json_w *w) {
  sep(w);
  put(w, "{", 1);
  w->need_comma = 0;
}
void jw_obj_end(json_w *w) {
  put(w, "}", 1);
  w->need_comma = 1;
}
void jw_arr_begin(json_w *w) {
  sep(w);
  put(w, "[", 1);
  w->need_comma = 0;
}
void jw_arr_end(json_w *w) {
  put(w, "]", 1);
  w->need_comma = 1;
}

static void quoted(json_w *w, const char *s) {
  put(w, "\"", 1);
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    char esc[8];
    switch (*p) {
    case '"':
      puts_(w, "\\\"");
      break;
    case '\\':
      puts_(w, "\\\\");
      break;
    case '\n':
      puts_(w, "\\n");
      break;
    case '\r':
      puts_(w, "\\r");
      break;
    case '\t':
      puts_(w, "\\t");
      break;
    default:
      if (*p < 0x20) {
        snprintf(esc, sizeof esc, "\\u%04x", *p);
        puts_(w, esc);
      } else {
        put(w, (const char *)p, 1);
      }
    }
  }
  put(w, "\"", 1);
}

void jw_key(json_w *w, const char *key) {
  sep(w);
  quoted(w, key);
  put(w, ":", 1);
  w->need_comma = 0;
}
void jw_str(json_w *w, const char *s) {
  sep(w);
  if (s)
    quoted(w, s);
  else
    puts_(w, "null");
}
void jw_num(json_w *w, double v) {
  sep(w);
  if (!isfinite(v)) {
    puts_(w, "null");
    return;
  }
  char b[40];
  /* The shortest of 15, 16 or 17 significant digits that reads back as the same double, so a
   * stored figure is the measured one bit for bit (a byte count above 10^9 lost its last digits
   * at %.9g).  %g drops trailing zeros, so 1.5 stays "1.5" and an integral value is written
   * as an integer up to 10^17. */
  for (int digits = 15; digits <= 17; digits++) {
    snprintf(b, sizeof b, "%.*g", digits, v);
    if (strtod(b, NULL) == v)
      break;
  }
  puts_(w, b);
}
void jw_int(json_w *w, long long v) {
  sep(w);
  char b[32];
  snprintf(b, sizeof b, "%lld", v);
  puts_(w, b);
}
void jw_bool(json_w *w, int v) {
  sep(w);
  puts_(w, v ? "true" : "false");
}
void jw_null(json_w *w) {
  sep(w);
  puts_(w, "null");
}

void jw_kstr(json_w *w, const char *k, const char *v) {
  jw_key(w, k);
  jw_str(w, v);
}
void jw_knum(json_w *w, const char *k, double v) {
  jw_key(w, k);
  jw_num(w, v);
}
void jw_kint(json_w *w, const char *k, long long v) {
  jw_key(w, k);
  jw_int(w, v);
}
void jw_kbool(json_w *w, const char *k, int v) {
  jw_key(w, k);
  jw_bool(w, v);
}

int jw_emit(json_w *w, FILE *out) {
  if (w->failed)
    return -1;
  put(w, "\n", 1);
  size_t n = fwrite(w->buf, 1, w->len, out);
  int rc = fflush(out);
  jw_reset(w);
  return n == 0 || rc != 0 ? -1 : 0;
}
