/* The record writers (see records.h and docs/records.md). */
#include "records.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "core/stats.h"
#include "mpit.h"
#include "phases.h"
#ifdef SCOPE_HAVE_BLAS
#include <cblas.h>
#endif
#include "options.h"
#include "select.h"

#ifndef SCOPE_MPICC
#define SCOPE_MPICC "unknown"
#endif

static json_w g_w;
static FILE *g_out;
static int g_rank;
static rec_counts g_counts;
static size_t g_unread; /* bytes written since rank 0 last paused for the reader */

void rec_open(FILE *out, int rank) {
  jw_init(&g_w);
  g_out = out;
  g_rank = rank;
}

void rec_close(void) {
  if (g_out && g_out != stdout)
    fclose(g_out);
  jw_free(&g_w);
}

json_w *rec_writer(void) {
  return &g_w;
}

const rec_counts *rec_counted(void) {
  return &g_counts;
}

void rec_emit(void) {
  g_unread += g_w.len;
  if (g_rank == 0 && jw_emit(&g_w, g_out) != 0) {
    fprintf(stderr, "scope-engine: error: cannot write records: %s\n", strerror(errno));
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
  jw_reset(&g_w);
}

static void emit_to(json_w *w) {
  (void)w;
  rec_emit();
}

/* ---------------------------------------------------------------- the registry */

static void write_param_spec(const scope_param *p) {
  jw_obj_begin(&g_w);
  jw_kstr(&g_w, "name", p->name);
  /* a size in bytes is an int to a reader of the records, which says how it may be written */
  jw_kstr(&g_w, "type", p->type == SP_INT || p->type == SP_BYTES ? "int" : p->type == SP_BOOL ? "bool" : "enum");
  jw_kstr(&g_w, "default", p->def);
  if (p->type == SP_INT || p->type == SP_BYTES) {
    jw_kint(&g_w, "min", p->min);
    jw_kint(&g_w, "max", p->max);
    if (p->type == SP_BYTES)
      jw_kbool(&g_w, "bytes", 1);
  } else {
    jw_key(&g_w, "choices");
    jw_arr_begin(&g_w);
    for (int j = 0; p->choices[j]; j++)
      jw_str(&g_w, p->choices[j]);
    jw_arr_end(&g_w);
  }
  jw_kstr(&g_w, "help", p->help);
  jw_obj_end(&g_w);
}

static void write_test_spec(const scope_test *T) {
  jw_obj_begin(&g_w);
  jw_kstr(&g_w, "type", "test");
  jw_kint(&g_w, "schema", SCOPE_SCHEMA_VERSION);
  jw_kstr(&g_w, "name", T->name);
  jw_kstr(&g_w, "level", T->level);
  jw_kstr(&g_w, "summary", T->summary);
  jw_kstr(&g_w, "measures", T->measures);
  jw_kint(&g_w, "min_ranks", T->min_ranks);
  jw_kbool(&g_w, "sized", T->sized);
  if (T->sizes) /* its own sizes when --sizes is not given */
    jw_kstr(&g_w, "default_sizes", T->sizes);
  static const char *const timings[] = {"loop", "window", "kernel", "barrier", "pairs"};
  jw_kstr(&g_w, "timing", timings[T->timing]);
  jw_key(&g_w, "roles");
  jw_arr_begin(&g_w);
  for (int r = 0; r < SCOPE_MAX_ROLES && T->roles[r]; r++)
    jw_str(&g_w, T->roles[r]);
  jw_arr_end(&g_w);
  jw_key(&g_w, "params");
  jw_arr_begin(&g_w);
  for (int k = 0; k < T->nparams; k++)
    write_param_spec(&T->params[k]);
  jw_arr_end(&g_w);
  jw_obj_end(&g_w);
}

void rec_test_list(int as_json) {
  if (!as_json) {
    for (int i = 0; scope_registry[i]; i++) {
      const scope_test *T = scope_registry[i];
      printf("%-16s %s\n", T->name, T->summary);
      for (int k = 0; k < T->nparams; k++) {
        char dom[256];
        sel_describe_domain(&T->params[k], dom, sizeof dom);
        printf("  %-14s %s [default %s; %s]\n", T->params[k].name, T->params[k].help, T->params[k].def, dom);
      }
    }
    return;
  }
  rec_open(stdout, 0);
  for (int i = 0; scope_registry[i]; i++) {
    write_test_spec(scope_registry[i]);
    rec_emit();
  }
  opt_publish(&g_w, emit_to);
  jw_free(&g_w);
}

/* ---------------------------------------------------------------- context and timers */

static void write_timer(const timer_info *ti) {
  jw_obj_begin(&g_w);
  jw_kstr(&g_w, "name", ti->name);
  jw_kbool(&g_w, "available", ti->available);
  if (!ti->available) {
    jw_kstr(&g_w, "why_unavailable", ti->why_unavailable);
  } else {
    jw_knum(&g_w, "tick_ns", ti->tick_ns);
    jw_knum(&g_w, "resolution_ns", ti->resolution_ns);
    jw_knum(&g_w, "overhead_ns", ti->overhead_ns);
    jw_knum(&g_w, "reported_tick_ns", ti->reported_tick_ns);
  }
  jw_obj_end(&g_w);
}

static void write_timers(const timer_info *ti) {
  jw_key(&g_w, "all");
  jw_arr_begin(&g_w);
  for (int k = 0; k < TIMER_FAKE; k++)
    write_timer(&ti[k]);
  jw_arr_end(&g_w);
}

void rec_timers(const timer_info *ti, int best, const char *mpi_library) {
  if (g_rank != 0)
    return;
  jw_obj_begin(&g_w);
  jw_kstr(&g_w, "type", "timers");
  jw_kint(&g_w, "schema", SCOPE_SCHEMA_VERSION);
  jw_kstr(&g_w, "best", ti[best].name);
  jw_kstr(&g_w, "mpi_library", mpi_library);
  write_timers(ti);
  jw_obj_end(&g_w);
  rec_emit();
}

static const char *const env_prefixes[] = {"MPIR_CVAR_",  "MPICH_", "UCX_",      "FI_",          "OMPI_MCA_",
                                           "I_MPI_",      "HYDRA_", "SLURM_JOB", "SLURM_NTASKS", "SLURM_CPUS",
                                           "SLURM_TASKS", "OMP_",   "SCOPE_",    "OPENBLAS_",    NULL};
extern char **environ;

static void write_env(void) {
  jw_key(&g_w, "env");
  jw_obj_begin(&g_w);
  for (char **e = environ; *e; e++)
    for (int p = 0; env_prefixes[p]; p++) {
      const char *eq = strchr(*e, '=');
      if (eq && strncmp(*e, env_prefixes[p], strlen(env_prefixes[p])) == 0) {
        char key[256];
        snprintf(key, sizeof key, "%.*s", (int)(eq - *e), *e);
        jw_kstr(&g_w, key, eq + 1);
        break;
      }
    }
  jw_obj_end(&g_w);
}

static void write_placement(const run_context *rc) {
  jw_key(&g_w, "placement");
  jw_arr_begin(&g_w);
  for (int r = 0; r < rc->nranks; r++) {
    const rank_info *ri = &rc->ranks[r];
    jw_obj_begin(&g_w);
    jw_kint(&g_w, "rank", r);
    jw_kstr(&g_w, "host", ri->host);
    jw_kint(&g_w, "node", ri->node);
    jw_kint(&g_w, "cpu", ri->cpu);
    jw_kstr(&g_w, "netns", ri->netns);
    jw_kint(&g_w, "cores", ri->cores);
    jw_kint(&g_w, "cpus_allowed", ri->allowed);
    jw_obj_end(&g_w);
  }
  jw_arr_end(&g_w);
}

static void write_settings(const run_context *rc) {
  jw_key(&g_w, "settings");
  jw_obj_begin(&g_w);
  opt_write_settings(&g_w);
  jw_knum(&g_w, "warmup_tol", rc->rep->warmup_tol);
  jw_knum(&g_w, "batch_factor", rc->rep->batch_factor);
  jw_key(&g_w, "sizes");
  jw_arr_begin(&g_w);
  for (long i = 0; i < rc->nsizes; i++)
    jw_int(&g_w, (long long)rc->sizes[i]);
  jw_arr_end(&g_w);
  const opt_value *ts = opt_get(OPT_TEST_SIZES);
  jw_key(&g_w, "test_sizes");
  jw_arr_begin(&g_w);
  for (int i = 0; i < ts->nlist; i++)
    jw_str(&g_w, ts->list[i]);
  jw_arr_end(&g_w);
  jw_key(&g_w, "tests");
  jw_arr_begin(&g_w);
  for (int t = 0; t < rc->nsel; t++)
    jw_str(&g_w, rc->sel[t]->name);
  jw_arr_end(&g_w);
  jw_obj_end(&g_w);
}

void rec_context(const run_context *rc) {
  if (g_rank != 0)
    return;
  const timer_info *sel = &rc->timers[rc->timer];
  jw_obj_begin(&g_w);
  jw_kstr(&g_w, "type", "context");
  jw_kint(&g_w, "schema", SCOPE_SCHEMA_VERSION);
  jw_kstr(&g_w, "started_utc", rc->started_utc);
  jw_key(&g_w, "engine");
  jw_obj_begin(&g_w);
  jw_kstr(&g_w, "version", SCOPE_ENGINE_VERSION);
  jw_kstr(&g_w, "compiler", __VERSION__);
  jw_kstr(&g_w, "mpicc", SCOPE_MPICC);
  jw_key(&g_w, "blas"); /* node.dgemm's library, or null when built without one */
#ifdef SCOPE_HAVE_BLAS
  jw_str(&g_w, scipy_openblas_get_config());
#else
  jw_str(&g_w, NULL);
#endif
  jw_obj_end(&g_w);
  jw_key(&g_w, "mpi");
  jw_obj_begin(&g_w);
  jw_kstr(&g_w, "library", rc->mpi_library);
  jw_kstr(&g_w, "standard", rc->mpi_standard);
  jw_kstr(&g_w, "thread_level", opt_thread_levels[rc->thread_level]); /* provided */
  mpit_write_transport(&g_w);
  jw_obj_end(&g_w);
  jw_kint(&g_w, "ranks", rc->nranks);
  write_placement(rc);
  context_write_nodes(&g_w, rc);
  jw_kbool(&g_w, "oversubscribed", rc->oversubscribed);
  jw_key(&g_w, "progress_throttle");
  jw_str(&g_w, getenv("MPIR_CVAR_CH4_PROGRESS_THROTTLE"));
  jw_key(&g_w, "timer");
  jw_obj_begin(&g_w);
  jw_kstr(&g_w, "selected", sel->name);
  jw_knum(&g_w, "tick_ns", sel->tick_ns);
  jw_knum(&g_w, "overhead_ns", sel->overhead_ns);
  jw_knum(&g_w, "resolution_ns", sel->resolution_ns);
  write_timers(rc->timers);
  jw_obj_end(&g_w);
  jw_kint(&g_w, "seed", (long long)rc->seed);
  jw_kint(&g_w, "llc_bytes", (long long)buffers_llc_bytes());
  write_settings(rc);
  jw_key(&g_w, "argv");
  jw_arr_begin(&g_w);
  for (int i = 0; i < rc->argc; i++)
    jw_str(&g_w, rc->argv[i]);
  jw_arr_end(&g_w);
  write_env();
  jw_obj_end(&g_w);
  rec_emit();
}

void rec_warning(const char *kind, const char *message, const char *hint) {
  if (g_rank != 0)
    return;
  jw_obj_begin(&g_w);
  jw_kstr(&g_w, "type", "warning");
  jw_kstr(&g_w, "kind", kind);
  jw_kstr(&g_w, "message", message);
  jw_kstr(&g_w, "hint", hint);
  jw_obj_end(&g_w);
  rec_emit();
}

/* ---------------------------------------------------------------- plan and end */

void rec_plan(const plan_entry *tests, int ntests, long total, double budget_s) {
  if (g_rank != 0)
    return;
  jw_obj_begin(&g_w);
  jw_kstr(&g_w, "type", "plan");
  jw_key(&g_w, "tests");
  jw_arr_begin(&g_w);
  for (int t = 0; t < ntests; t++) {
    jw_obj_begin(&g_w);
    jw_kstr(&g_w, "test", tests[t].test);
    jw_kint(&g_w, "points", tests[t].points);
    jw_obj_end(&g_w);
  }
  jw_arr_end(&g_w);
  jw_kint(&g_w, "points", total);
  jw_knum(&g_w, "budget_s", budget_s);
  jw_obj_end(&g_w);
  rec_emit();
}

void rec_end(double seconds) {
  if (g_rank != 0)
    return;
  jw_obj_begin(&g_w);
  jw_kstr(&g_w, "type", "end");
  jw_kstr(&g_w, "status", g_counts.errors ? "errors" : "ok");
  jw_kint(&g_w, "points", g_counts.points);
  jw_kint(&g_w, "errors", g_counts.errors);
  jw_kint(&g_w, "skips", g_counts.skips);
  jw_knum(&g_w, "seconds", seconds);
  jw_obj_end(&g_w);
  rec_emit();
}

/* ---------------------------------------------------------------- points, skips, errors */

static void write_params(const scope_test *T, const scope_ctx *c) {
  jw_key(&g_w, "params");
  jw_obj_begin(&g_w);
  if (T->sized)
    jw_kint(&g_w, "size", (long long)c->size);
  if (SCOPE_WINDOWED(T))
    jw_kint(&g_w, "procs", c->nranks);
  for (int k = 0; k < T->nparams; k++) {
    const scope_param *p = &T->params[k];
    jw_key(&g_w, p->name);
    if (p->type == SP_INT || p->type == SP_BYTES)
      jw_int(&g_w, c->p[k]);
    else if (p->type == SP_BOOL)
      jw_bool(&g_w, (int)c->p[k]);
    else
      jw_str(&g_w, p->choices[c->p[k]]);
  }
  jw_obj_end(&g_w);
}

static void record_head(const char *type, const rec_where *at) {
  jw_obj_begin(&g_w);
  jw_kstr(&g_w, "type", type);
  jw_kstr(&g_w, "test", at->test->name);
  jw_kint(&g_w, "index", at->index);
  jw_kint(&g_w, "points", at->npoints);
  if (at->c)
    write_params(at->test, at->c);
}

/* skip and error records: the same shape, a different type and text field. */
static void record_event(const char *type, const char *key, const rec_where *at, const char *text) {
  if (g_rank != 0)
    return;
  record_head(type, at);
  jw_kstr(&g_w, key, text);
  jw_obj_end(&g_w);
  rec_emit();
}

void rec_pairs(const rec_where *at, const pairs_step *ps) {
  if (g_rank != 0)
    return;
  record_head("pairs", at);
  jw_kint(&g_w, "step", ps->step);
  jw_kint(&g_w, "steps", ps->steps);
  jw_kstr(&g_w, "mode", ps->one_at_a_time ? "serial" : "parallel");
  jw_knum(&g_w, "seconds", ps->seconds);
  jw_knum(&g_w, "slice_s", ps->slice_s);
  static const char *const cols[PAIR_COLS] = {"a", "b", "n", "median_us", "ci_lo_us", "ci_hi_us", "min_us"};
  for (int j = 0; j < PAIR_COLS; j++) {
    jw_key(&g_w, cols[j]);
    jw_arr_begin(&g_w);
    for (int i = 0; i < ps->npairs; i++) {
      double v = ps->rows[i * PAIR_COLS + j];
      if (j < 3)
        jw_int(&g_w, (long long)v);
      else
        jw_num(&g_w, v);
    }
    jw_arr_end(&g_w);
  }
  jw_obj_end(&g_w);
  rec_emit();
  rec_settle(64u << 10);
}

void rec_skip(const rec_where *at, const char *reason) {
  g_counts.skips++;
  record_event("skip", "reason", at, reason);
}

void rec_error(const rec_where *at, const char *message) {
  g_counts.errors++;
  record_event("error", "message", at, message);
}

static void write_stats(const stats_summary *s, double k) {
  jw_key(&g_w, "stats");
  jw_obj_begin(&g_w);
  const struct {
    const char *key;
    double v;
  } q[] = {{"min", s->min}, {"median", s->median}, {"mean", s->mean},   {"sd", s->sd},
           {"max", s->max}, {"p5", s->p5},         {"p25", s->p25},     {"p75", s->p75},
           {"p95", s->p95}, {"p99", s->p99},       {"ci_lo", s->ci_lo}, {"ci_hi", s->ci_hi}};
  for (size_t i = 0; i < sizeof q / sizeof q[0]; i++)
    jw_knum(&g_w, q[i].key, q[i].v * k);
  jw_knum(&g_w, "ci_rel", s->ci_rel);
  jw_obj_end(&g_w);
}

/* After records into a pipe, rank 0 sleeps while the front end reads and stores them (about
 * 10 ns a byte, msgspec and SQLite) before the next point is measured: on a machine with no
 * idle core the reader, and the launcher's processes that forward the output, would otherwise
 * take their share from a rank in the next point's first milliseconds, and a mean (OMB's
 * settings read the mean) moves with them: osu_barrier's loop, 1,000 calls of 0.25 us, read
 * up to 40 % above its median into a pipe and within 5 % into a file.  The other ranks wait
 * in the next collective; into a file nobody reads at once, no pause. */
void rec_settle(size_t at_least) {
  struct stat st;
  if (g_rank != 0 || g_unread < at_least || !g_out || fstat(fileno(g_out), &st) != 0 || !S_ISFIFO(st.st_mode))
    return;
  double ns = 1e6 + 10.0 * (double)g_unread;
  struct timespec t = {(time_t)(ns / 1e9), (long)fmod(ns, 1e9)};
  nanosleep(&t, NULL);
  g_unread = 0;
}

void rec_point(const point_result *p) {
  g_counts.points++;
  if (g_rank != 0)
    return;
  const scope_ctx *c = p->at.c;
  const rep_state *r = &p->m->rs;
  const stats_summary *s = &r->summary;
  double k = 1e-3 / c->ops_per_iter; /* ns per iteration -> us per reported operation */
  record_head("point", &p->at);
  /* Barrier timing has no common start: what a sample is differs from the descriptor's. */
  int barrier = p->m->w.active ? p->m->w.barrier : WINDOWED_ON_CLOCK;
  jw_kstr(&g_w, "measures",
          barrier == WINDOWED_OSU && c->self_sync
              ? "mean over ranks of each rank's own time, calls back to back (OSU 7)"
          : barrier == WINDOWED_OSU ? "mean over ranks of each rank's own time, a barrier after each call (OSU 7)"
          : barrier                 ? "slowest rank's own time, each repetition after a barrier"
                                    : p->at.test->measures);
  jw_kstr(&g_w, "unit", "us");
  jw_kint(&g_w, "count", (long long)s->n);
  jw_kint(&g_w, "batch", (long long)r->batch);
  jw_knum(&g_w, "ops_per_iter", c->ops_per_iter);
  jw_knum(&g_w, "bytes_per_op", c->bytes_per_op);
  jw_key(&g_w, "warmup");
  jw_obj_begin(&g_w);
  jw_kint(&g_w, "iterations", (long long)r->warm_n);
  jw_knum(&g_w, "seconds", r->warm_s);
  jw_kbool(&g_w, "converged", r->warm_converged);
  jw_obj_end(&g_w);
  jw_kstr(&g_w, "stop", rep_stop_name(r->stop));
  jw_knum(&g_w, "precision", rep_target(r)); /* the target this launch measured to */
  if (r->set.earlier.n)                      /* ... knowing this many launches before it (rep_target) */
    jw_kint(&g_w, "earlier_launches", r->set.earlier.n);
  if (r->gave_up) {
    /* what the budget made this point give up: its interval is wider than asked */
    jw_key(&g_w, "gave_up");
    jw_arr_begin(&g_w);
    for (int bit = 1; bit <= REP_GAVE_LAST; bit <<= 1)
      if (r->gave_up & bit)
        jw_str(&g_w, rep_gave_up_name(bit));
    jw_arr_end(&g_w);
  }
  jw_knum(&g_w, "seconds", p->seconds);
  jw_kint(&g_w, "page_faults", p->m->faults); /* in the measured chunks, the most of any rank */
  jw_kint(&g_w, "validated", p->validated);
  if (c->note[0])
    jw_kstr(&g_w, "note", c->note);
  if (c->nextra) {
    jw_key(&g_w, "extra");
    jw_obj_begin(&g_w);
    for (int i = 0; i < c->nextra; i++)
      jw_knum(&g_w, c->extra[i].name, c->extra[i].value);
    jw_obj_end(&g_w);
  }
  jw_key(&g_w, "buffers");
  jw_obj_begin(&g_w);
  jw_kint(&g_w, "slots", (long long)p->buffers->nslots);
  jw_kint(&g_w, "send_bytes", (long long)c->sbuf_bytes);
  jw_kint(&g_w, "recv_bytes", (long long)c->rbuf_bytes);
  jw_obj_end(&g_w);
  write_stats(s, k);
  /* bytes per microsecond is MB/s (10^6 bytes/s) */
  jw_key(&g_w, "bandwidth_MBps");
  jw_obj_begin(&g_w);
  jw_knum(&g_w, "median", c->bytes_per_op / (s->median * k));
  jw_knum(&g_w, "ci_lo", c->bytes_per_op / (s->ci_hi * k));
  jw_knum(&g_w, "ci_hi", c->bytes_per_op / (s->ci_lo * k));
  jw_knum(&g_w, "max", c->bytes_per_op / (s->min * k));
  jw_obj_end(&g_w);
  if (p->m->w.active)
    rec_write_window(&g_w, &p->m->w);
  mpit_write_point(&g_w);
  if (c->paired)
    rec_write_reference(&g_w, &p->m->w, k, p->samples);
  if (c->phases)
    phases_write(c->phases, &g_w);
  if (p->samples) {
    jw_key(&g_w, "samples");
    jw_arr_begin(&g_w);
    for (size_t i = 0; i < r->n; i++)
      jw_num(&g_w, r->samples[i] * k);
    jw_arr_end(&g_w);
  }
  jw_obj_end(&g_w);
  rec_emit();
  rec_settle(64u << 10); /* a point record of samples; small ones wait for the next pause */
}
