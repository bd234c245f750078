/* Events a program stamps on the global clock, written one JSON line each to a file per rank
 * (PREFIX.RANK.jsonl), for `scope import` (docs/clock-library.md has the fields).  The header
 * holds what makes every event's truth computable where it is known: the counter's tick and any
 * injected offset and drift, so that rank 0's clock read at an event's counter value is the true
 * global time of that event. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "clock_state.h"

#define EVENTS_SCHEMA 1
#define EVENT_NAME_MAX 64 /* what `scope import` reads (store/eventfiles.py) */

/* The events files this process's clocks have open, by identity (device, inode): two clocks
 * given one prefix on one rank would write one file over the other (EEXIST instead). */
typedef struct open_file {
  unsigned long long dev, ino;
  struct open_file *next;
} open_file;
static open_file *open_files;
static pthread_mutex_t open_lock = PTHREAD_MUTEX_INITIALIZER;

static int is_open(unsigned long long dev, unsigned long long ino) {
  for (open_file *f = open_files; f; f = f->next)
    if (f->dev == dev && f->ino == ino)
      return 1;
  return 0;
}

static void forget(unsigned long long dev, unsigned long long ino) {
  pthread_mutex_lock(&open_lock);
  for (open_file **f = &open_files; *f; f = &(*f)->next)
    if ((*f)->dev == dev && (*f)->ino == ino) {
      open_file *gone = *f;
      *f = gone->next;
      free(gone);
      break;
    }
  pthread_mutex_unlock(&open_lock);
}

/* Opens path for writing unless another clock of this process has it open; registers it. */
static int open_unshared(scope_clock *c, const char *path) {
  struct stat st;
  pthread_mutex_lock(&open_lock);
  int e = SCOPE_CLOCK_OK;
  open_file *f = NULL;
  if (stat(path, &st) == 0 && is_open((unsigned long long)st.st_dev, (unsigned long long)st.st_ino))
    e = SCOPE_CLOCK_EEXIST;
  else if (!(f = malloc(sizeof *f)))
    e = SCOPE_CLOCK_ENOMEM;
  else if (!(c->events = fopen(path, "w")) || fstat(fileno(c->events), &st) != 0)
    e = SCOPE_CLOCK_EIO;
  if (!e) {
    f->dev = c->ev_dev = (unsigned long long)st.st_dev;
    f->ino = c->ev_ino = (unsigned long long)st.st_ino;
    f->next = open_files;
    open_files = f;
  } else {
    free(f);
    if (c->events)
      fclose(c->events);
    c->events = NULL;
  }
  pthread_mutex_unlock(&open_lock);
  return e;
}

/* 1 to EVENT_NAME_MAX bytes of well-formed UTF-8 (no overlong form, no surrogate), no control
 * character (C0, DEL or C1): a name `scope import` takes and a terminal shows as written. */
static int name_ok(const char *s) {
  const unsigned char *p = (const unsigned char *)s;
  size_t n = strlen(s);
  if (n == 0 || n > EVENT_NAME_MAX)
    return 0;
  while (*p) {
    unsigned cp, more;
    if (*p < 0x80) {
      if (*p < 0x20 || *p == 0x7f)
        return 0;
      p++;
      continue;
    }
    if ((*p & 0xe0) == 0xc0)
      cp = *p & 0x1f, more = 1;
    else if ((*p & 0xf0) == 0xe0)
      cp = *p & 0x0f, more = 2;
    else if ((*p & 0xf8) == 0xf0)
      cp = *p & 0x07, more = 3;
    else
      return 0;
    p++;
    for (unsigned k = 0; k < more; k++, p++) {
      if ((*p & 0xc0) != 0x80)
        return 0;
      cp = (cp << 6) | (*p & 0x3f);
    }
    unsigned least = more == 1 ? 0x80 : more == 2 ? 0x800 : 0x10000;
    if (cp < least || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff) || (cp >= 0x80 && cp <= 0x9f))
      return 0;
  }
  return 1;
}

int scope_clock_events_open(scope_clock *c, const char *prefix) {
  if (!c || !prefix)
    return SCOPE_CLOCK_EINVAL;
  if (c->events)
    return SCOPE_CLOCK_ESTATE;
  size_t n = strlen(prefix) + 32;
  char *path = malloc(n);
  if (!path)
    return SCOPE_CLOCK_ENOMEM;
  snprintf(path, n, "%s.%d.jsonl", prefix, c->rank);
  int opened = open_unshared(c, path);
  free(path);
  if (opened)
    return opened;
  char host[MPI_MAX_PROCESSOR_NAME];
  int len = 0;
  MPI_Get_processor_name(host, &len);
  jw_init(&c->line);
  json_w *w = &c->line;
  jw_obj_begin(w);
  jw_kstr(w, "type", "events");
  jw_kint(w, "schema", EVENTS_SCHEMA);
  jw_kstr(w, "library", SCOPE_CLOCK_VERSION);
  jw_kint(w, "rank", c->rank);
  jw_kint(w, "size", c->size);
  jw_kstr(w, "host", host);
  jw_kstr(w, "timer", timer_name(c->kind));
  jw_knum(w, "tick_ns", c->tick_ns);
  jw_kstr(w, "method", c->method->name);
  jw_kstr(w, "clock_domain", c->per_rank ? "rank" : "host");
  jw_kint(w, "clock_of", c->leader);
  jw_kint(w, "depth", c->depth);
  jw_kbool(w, "truth_known", c->truth_known);
  jw_knum(w, "injected_offset_ns", c->inj_offset_ns);
  jw_knum(w, "injected_drift", c->inj_drift);
  jw_knum(w, "injected_base_ns", c->inj_base_ns);
  jw_knum(w, "sync_s", c->cost_s);
  jw_knum(w, "bound_z", CM_Z);
  jw_obj_end(w);
  int bad = jw_emit(w, c->events);
  jw_reset(w);
  c->nevents = 0;
  return bad ? SCOPE_CLOCK_EIO : SCOPE_CLOCK_OK;
}

int scope_clock_event(scope_clock *c, const char *name) {
  if (!c || !name)
    return SCOPE_CLOCK_EINVAL;
  uint64_t ticks = timer_read_inline(c->kind); /* the stamp first: the checks and formatting are not the event */
  if (!name_ok(name))
    return SCOPE_CLOCK_EINVAL;
  if (!c->events)
    return SCOPE_CLOCK_ESTATE;
  double g = scope_clock_to_global_ns(c, scl_local_ns(c, ticks));
  json_w *w = &c->line;
  jw_obj_begin(w);
  jw_kstr(w, "type", "event");
  jw_kstr(w, "name", name);
  jw_knum(w, "t_ns", g);
  jw_knum(w, "bound_ns", scope_clock_bound_ns(c, g));
  jw_kint(w, "ticks", (long long)ticks);
  jw_kint(w, "sync", c->syncs);
  jw_obj_end(w);
  /* buffered: an event costs a formatted line, not a write; the file is whole once closed */
  int bad = w->failed || fwrite(w->buf, 1, w->len, c->events) != w->len || fputc('\n', c->events) == EOF;
  jw_reset(w);
  c->nevents++;
  return bad ? SCOPE_CLOCK_EIO : SCOPE_CLOCK_OK;
}

int scope_clock_events_close(scope_clock *c) {
  if (!c)
    return SCOPE_CLOCK_EINVAL;
  if (!c->events)
    return SCOPE_CLOCK_ESTATE;
  int bad = fclose(c->events) != 0;
  c->events = NULL;
  forget(c->ev_dev, c->ev_ino);
  jw_free(&c->line);
  return bad ? SCOPE_CLOCK_EIO : SCOPE_CLOCK_OK;
}
