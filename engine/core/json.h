/* A minimal JSON writer for the record stream: one object per line, NaN and infinities as
 * null, strings escaped.  Builds into a growable buffer so a record is written with one
 * fwrite and flushed whole. */
#ifndef SCOPE_JSON_H
#define SCOPE_JSON_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef struct {
  char *buf;
  size_t len, cap;
  int need_comma; /* a value was written at the current nesting level */
  int failed;
} json_w;

void jw_init(json_w *w);
void jw_free(json_w *w);
void jw_reset(json_w *w);
void jw_obj_begin(json_w *w);
void jw_obj_end(json_w *w);
void jw_arr_begin(json_w *w);
void jw_arr_end(json_w *w);
void jw_key(json_w *w, const char *key); /* the value follows */
void jw_str(json_w *w, const char *s);
void jw_num(json_w *w, double v); /* NaN/inf -> null */
void jw_int(json_w *w, long long v);
void jw_bool(json_w *w, int v);
void jw_null(json_w *w);

/* key/value shorthands */
void jw_kstr(json_w *w, const char *k, const char *v);
void jw_knum(json_w *w, const char *k, double v);
void jw_kint(json_w *w, const char *k, long long v);
void jw_kbool(json_w *w, const char *k, int v);

/* Writes the buffer plus a newline and flushes; returns 0 on success. */
int jw_emit(json_w *w, FILE *out);

#endif
