/* Events a program stamps on the global clock, written one JSON line each to a file per rank
 * (PREFIX.RANK.jsonl), for `scope import` (docs/clock-library.md has the fields).  The header
 * holds what makes every event's truth computable where it is known: the counter's tick and any
 * injected offset and drift, so that rank 0's clock read at an event's counter value is the true
 * global time of that event. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock_state.h"

#define EVENTS_SCHEMA 1

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
  c->events = fopen(path, "w");
  free(path);
  if (!c->events)
    return SCOPE_CLOCK_EIO;
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
  uint64_t ticks = timer_read_inline(c->kind); /* the stamp first: the formatting is not the event */
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
  jw_free(&c->line);
  return bad ? SCOPE_CLOCK_EIO : SCOPE_CLOCK_OK;
}
