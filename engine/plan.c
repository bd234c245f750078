/* The plan of a run, before MPI starts (see plan.h). */
#include "plan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json.h"
#include "options.h"

#define PLAN_MAX_PROCS 64

/* What needs the run's size: the pattern's ranks, each test's minimum, the --procs counts. */
static void check_size(int nranks, const scope_test **sel, int nsel, int pattern_max_rank) {
  if (pattern_max_rank >= nranks)
    opt_die("pattern file '%s' names rank %d but the run has %d ranks (run with -n %d or more)", opt_text(OPT_PATTERN),
            pattern_max_rank, nranks, pattern_max_rank + 1);
  char names[512] = "";
  size_t len = 0;
  int need = 0, short_of = 0;
  for (int t = 0; t < nsel; t++)
    if (sel[t]->min_ranks > nranks) {
      len += (size_t)snprintf(names + len, len < sizeof names ? sizeof names - len : 0, "%s%s", short_of ? ", " : "",
                              sel[t]->name);
      need = sel[t]->min_ranks > need ? sel[t]->min_ranks : need;
      short_of++;
    }
  if (short_of)
    opt_die("%s need%s at least %d ranks; this run has %d (run with -n %d)", names, short_of == 1 ? "s" : "", need,
            nranks, need);
  const char *procs = opt_text(OPT_PROCS);
  int low = 0, windowed = 0;
  for (int t = 0; t < nsel; t++)
    if (SCOPE_WINDOWED(sel[t])) {
      low = !windowed || sel[t]->min_ranks < low ? sel[t]->min_ranks : low;
      windowed = 1;
    }
  if (!windowed || strcmp(procs, "all") == 0 || strcmp(procs, "pow2") == 0)
    return;
  int any_usable = 0; /* the option table has checked the list's form */
  for (const char *p = procs; *p;) {
    char *e;
    long v = strncmp(p, "all", 3) == 0 ? (e = (char *)p + 3, nranks) : strtol(p, &e, 10);
    if (v > nranks)
      opt_die("--procs %ld is more than the run's %d ranks (run with -n %ld, or list counts up to %d)", v, nranks, v,
              nranks);
    any_usable |= v >= low;
    p = *e ? e + 1 : e;
  }
  if (!any_usable)
    opt_die("--procs %s: every count is below %d, the fewest ranks these tests use", procs, low);
}

static void write_value(json_w *w, const scope_param *p, long v) {
  if (p->type == SP_INT || p->type == SP_BYTES)
    jw_int(w, v);
  else if (p->type == SP_BOOL)
    jw_bool(w, (int)v);
  else
    jw_str(w, p->choices[v]);
}

/* The most memory any point of the test needs (its descriptor's hook), with that point. */
static void write_memory(json_w *w, const scope_test *T, const test_values *tv, const int *procs, int nprocs) {
  if (!T->memory) {
    jw_key(w, "memory_bytes");
    jw_null(w);
    return;
  }
  scope_ctx c = {.test = T, .comm = MPI_COMM_NULL}, worst = c;
  double most = -1;
  long ncomb = sel_combos(T, tv), nsz = T->sized ? tv->nsizes : 1;
  for (long comb = 0; comb < ncomb; comb++)
    for (int pi = 0; pi < nprocs; pi++)
      for (long si = 0; si < nsz; si++) {
        sel_combo(T, tv, comb, c.p);
        c.nranks = procs[pi];
        c.size = T->sized ? (size_t)tv->sizes[si] : 0;
        c.note[0] = '\0';
        double m = T->memory(&c);
        if (m > most) {
          most = m;
          worst = c;
        }
      }
  jw_knum(w, "memory_bytes", most);
  jw_kstr(w, "memory_note", worst.note);
  jw_key(w, "memory_point");
  jw_obj_begin(w);
  if (T->sized)
    jw_kint(w, "size", (long long)worst.size);
  jw_kint(w, "procs", worst.nranks);
  for (int k = 0; k < T->nparams; k++) {
    jw_key(w, T->params[k].name);
    write_value(w, &T->params[k], worst.p[k]);
  }
  jw_obj_end(w);
}

/* The points the test refuses (its descriptor's hook), each with the reason: a kernel asked
 * for a process count or size it cannot run, said before anything starts.  At most
 * PLAN_MAX_REFUSED are listed; `refused_points` counts them all. */
#define PLAN_MAX_REFUSED 32
static void write_refused(json_w *w, const scope_test *T, const test_values *tv, const int *procs, int nprocs) {
  if (!T->refuse)
    return;
  scope_ctx c = {.test = T, .comm = MPI_COMM_NULL};
  long ncomb = sel_combos(T, tv), count = 0;
  jw_key(w, "refused");
  jw_arr_begin(w);
  for (long comb = 0; comb < ncomb; comb++)
    for (int pi = 0; pi < nprocs; pi++) {
      sel_combo(T, tv, comb, c.p);
      c.nranks = procs[pi];
      const char *why = T->refuse(&c);
      if (!why || count++ >= PLAN_MAX_REFUSED)
        continue;
      jw_obj_begin(w);
      jw_kint(w, "procs", procs[pi]);
      jw_key(w, "params");
      jw_obj_begin(w);
      for (int k = 0; k < T->nparams; k++) {
        jw_key(w, T->params[k].name);
        write_value(w, &T->params[k], c.p[k]);
      }
      jw_obj_end(w);
      jw_kstr(w, "reason", why);
      jw_obj_end(w);
    }
  jw_arr_end(w);
  jw_kint(w, "refused_points", count);
}

static long write_test(json_w *w, int nranks, const scope_test *T, const test_values *tv) {
  int procs[PLAN_MAX_PROCS], nprocs = sel_procs(opt_text(OPT_PROCS), T, nranks, procs, PLAN_MAX_PROCS);
  long points = sel_combos(T, tv) * (T->sized ? tv->nsizes : 1) * nprocs;
  jw_obj_begin(w);
  jw_kstr(w, "type", "planned");
  jw_kstr(w, "test", T->name);
  jw_kint(w, "points", points);
  jw_key(w, "params");
  jw_obj_begin(w);
  for (int k = 0; k < T->nparams; k++) {
    jw_key(w, T->params[k].name);
    jw_arr_begin(w);
    for (int i = 0; i < tv->n[k]; i++)
      write_value(w, &T->params[k], tv->v[k][i]);
    jw_arr_end(w);
  }
  jw_obj_end(w);
  if (T->sized) {
    jw_key(w, "sizes");
    jw_arr_begin(w);
    for (long i = 0; i < tv->nsizes; i++)
      jw_int(w, (long long)tv->sizes[i]);
    jw_arr_end(w);
  }
  jw_key(w, "procs");
  jw_arr_begin(w);
  for (int i = 0; i < nprocs; i++)
    jw_int(w, procs[i]);
  jw_arr_end(w);
  if (tv->rejected[0])
    jw_kstr(w, "rejected", tv->rejected);
  write_memory(w, T, tv, procs, nprocs);
  write_refused(w, T, tv, procs, nprocs);
  jw_obj_end(w);
  return points;
}

int plan_print(int nranks, const scope_test **sel, const test_values *tv, int nsel, int pattern_max_rank) {
  check_size(nranks, sel, nsel, pattern_max_rank);
  json_w w;
  jw_init(&w);
  long total = 0;
  for (int t = 0; t < nsel; t++) {
    total += write_test(&w, nranks, sel[t], &tv[t]);
    jw_emit(&w, stdout);
  }
  jw_obj_begin(&w);
  jw_kstr(&w, "type", "plan");
  jw_kint(&w, "ranks", nranks);
  jw_kint(&w, "points", total);
  jw_key(&w, "options");
  jw_obj_begin(&w);
  opt_write_values(&w);
  jw_obj_end(&w);
  jw_obj_end(&w);
  jw_emit(&w, stdout);
  jw_free(&w);
  return fflush(stdout) == 0 ? 0 : 3;
}
