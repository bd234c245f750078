/* The option table and everything it drives (see options.h). */
#include "options.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const timer_names[] = {"tsc", "clock_monotonic_raw", "mpi_wtime", NULL};
static const char *const timing_names[] = {"window", "barrier", "osu", NULL};
static const char *const order_names[] = {"shuffled", "listed", NULL};
static const char *const loop_names[] = {"scope", "osu", NULL};
/* the names of core/clockmodel.c's cm_methods, in its order (a unit test holds them equal) */
const char *const opt_clock_methods[] = {"tree", "linear", NULL};
static const char *const clock_domain_names[] = {"host", "rank", NULL};
/* in MPI_THREAD_* order, so the index is the level */
const char *const opt_thread_levels[] = {"single", "funneled", "serialized", "multiple", NULL};

/* Largest whole number a JSON reader keeps exactly (2^53): seeds and counts stay below it. */
#define WHOLE_MAX 9007199254740992.0

const opt_spec opt_table[OPT_COUNT] = {
    [OPT_TESTS] = {"tests", OPT_TEXT, "p2p.*", .help = "names or glob patterns, comma separated"},
    [OPT_SIZES] = {"sizes", OPT_TEXT, "0-4M", .run = 1,
                   .help = "message sizes: 0-4M, 8,64,1K, 1K-1M:x4, 0-4K:+512 (K, M, G binary)"},
    [OPT_PARAM] = {"param", OPT_LIST, .run = 1, .alias = 'p',
                   .help = "sweep a test parameter, NAME=V1,V2 (repeatable; see --list)"},
    [OPT_PRECISION] = {"precision", OPT_REAL, "0.01", 1e-5, 1.0, .setting = "precision", .run = 1,
                       .help = "target relative half-width of the median's 95% CI (0.01 = +/-1%)"},
    [OPT_BUDGET] = {"budget", OPT_REAL, "1", 1e-3, 86400, .setting = "budget_s", .run = 1,
                    .help = "seconds per point at most, warm-up included"},
    [OPT_MIN_COUNT] = {"min-count", OPT_INT, "20", 1, 1e8, .setting = "min_count", .run = 1, .not_above = OPT_MAX_COUNT,
                       .help = "samples per point at least"},
    [OPT_MAX_COUNT] = {"max-count", OPT_INT, "200000", 1, 1e8, .setting = "max_count", .run = 1,
                       .help = "samples per point at most"},
    [OPT_WARMUP_MAX] = {"warmup-max", OPT_INT, "20000", 2, 1e8, .setting = "warmup_max", .run = 1,
                        .help = "warm-up iterations at most"},
    [OPT_MIN_TIME] = {"min-time", OPT_REAL, "0.01", 0, 3600, .setting = "min_time_s", .run = 1,
                      .help = "measured seconds per point at least (within --budget), so a point spans several "
                              "scheduler ticks"},
    [OPT_ORDER] = {"order", OPT_CHOICE, "shuffled", .choices = order_names, .setting = "order", .run = 1,
                   .help = "visit the points in a fresh random order each launch (as SKaMPI and ReproMPI do), "
                           "or as listed"},
    [OPT_LAUNCH] = {"launch", OPT_INT, "1", 1, 1e6, .setting = "launch",
                    .help = "this launch's number among replicate launches (scope run --launches sets it)"},
    [OPT_EARLIER_LAUNCHES] = {"earlier-launches", OPT_LIST,
                              .help =
                                  "INDEX=MEDIAN/CI[:MEDIAN/CI...],...: each point's medians (us) and CI half-widths "
                                  "in the launches before this one, so a point whose launches differ stops once "
                                  "its own error is small beside that spread (scope run --launches sets it)"},
    [OPT_OFFCACHE] = {"offcache", OPT_FLAG, .setting = "offcache", .run = 1,
                      .help = "cycle buffers through twice the last-level cache"},
    [OPT_TIMER] = {"timer", OPT_CHOICE, NULL, .choices = timer_names, .run = 1,
                   .help = "force a timer (default: the best one found)"},
    [OPT_SEED] = {"seed", OPT_INT, NULL, 0, WHOLE_MAX, .run = 1, .help = "seed of the data patterns"},
    [OPT_OUTPUT] = {"output", OPT_PATH, .help = "records to this file instead of standard output"},
    [OPT_NO_SAMPLES] = {"no-samples", OPT_FLAG, .setting = "samples", .inverted = 1, .run = 1,
                        .help = "leave raw samples out of point records"},
    [OPT_NO_CANARY] = {"no-canary", OPT_FLAG, .setting = "canary", .inverted = 1, .run = 1,
                       .help = "leave out the machine probes at each launch's start and end (~0.1 s each): "
                               "the run cannot then tell a change of the machine from one of its configuration"},
    [OPT_TIMING] = {"timing", OPT_CHOICE, "window", .choices = timing_names, .run = 1,
                    .help =
                        "collectives: start at agreed global times (window), after a barrier (the slowest rank's own "
                        "time), or as OSU 7 (each rank's call between barriers, timed by MPI_Wtime; the mean "
                        "over ranks, whose mean is OMB's figure)"},
    [OPT_LOOP] = {"loop", OPT_CHOICE, "scope", .choices = loop_names, .setting = "loop", .run = 1,
                  .help = "point-to-point and one-sided: SCOPE's loop (one timestamp a sample, batched when short) or "
                          "OSU 7's (two MPI_Wtime reads inside every iteration, never batched; compare its mean)"},
    [OPT_THREAD_LEVEL] = {"thread-level", OPT_CHOICE, "single", .choices = opt_thread_levels, .setting = "thread_level",
                          .run = 1,
                          .help =
                              "the thread level MPI is asked for (MPI_Init_thread); threads in a test need multiple, "
                              "and a level above single may cost every call something: compare the two"},
    [OPT_PROCS] =
        {"procs", OPT_COUNTS, "all", .run = 1,
         .help = "window-timed tests: process counts to sweep, e.g. 2,4,8, 1,all (all: the run's ranks), pow2 or all"},
    [OPT_SYNC_SPAN] = {"sync-span", OPT_REAL, "0.05", 0.001, 60, .setting = "sync_span_s", .run = 1,
                       .help = "global clock: seconds one round of pairs spans (its drift is fitted over them)"},
    [OPT_SYNC_BOUND] = {"sync-bound", OPT_REAL, "1000", 1, 1e9, .setting = "sync_bound_ns", .run = 1,
                        .help = "global clock: re-synchronise when its error bound would pass this many ns by the "
                                "next point, the drift's share of it is at least half, and the last synchronisation "
                                "took at most a twentieth of the time since"},
    [OPT_CLOCK] = {"clock", OPT_CHOICE, "tree", .choices = opt_clock_methods, .setting = "clock", .run = 1,
                   .help = "global clock across hosts: a binomial tree of disjoint pairs, ceil(log2 H) rounds "
                           "(HCA2/HCA3), or the reference with each host in turn (SKaMPI's linear method)"},
    [OPT_CLOCK_DOMAIN] = {"clock-domain", OPT_CHOICE, "host", .choices = clock_domain_names, .setting = "clock_domain",
                          .run = 1,
                          .help = "global clock: ranks on one kernel share its counter (host), or every rank is "
                                  "synchronised as if on a host of its own (rank), to measure the cross-host method "
                                  "where the truth is known"},
    [OPT_WARM] = {"warm", OPT_REAL, "0.2", 0, 60, .setting = "warm_s", .run = 1,
                  .help = "seconds at most every rank runs busy before the first point on the global clock, "
                          "until its core runs steadily (its cores, and a VM's vCPUs, at speed)"},
    [OPT_PATTERN] = {"pattern", OPT_PATH, .run = 1,
                     .help = "p2p.pattern: a file of 'SOURCE DESTINATION SIZE' lines, sent concurrently"},
    [OPT_IO_DIR] = {"io-dir", OPT_PATH, .run = 1,
                    .help = "io tests: the directory their files go in (scope run makes a fresh one inside it)"},
    [OPT_TEST_SIZES] = {"test-sizes", OPT_LIST, .run = 1,
                        .help = "sizes for some tests, TESTS=SIZES (e.g. 'io.*=1M'; repeatable), the others --sizes"},
    [OPT_LIST_TESTS] = {"list", OPT_ACTION, .help = "list tests and their parameters (with --json: and options)"},
    [OPT_PLAN] = {"plan", OPT_INT, NULL, 1, 1 << 24,
                  .help = "check a run of N ranks with these options and print its points as JSON Lines "
                          "(tests, parameter values, sizes, process counts, memory), without starting MPI"},
    [OPT_JSON] = {"json", OPT_FLAG, .help = "with --list or --version: JSON Lines"},
    [OPT_TIMERS] = {"timers", OPT_ACTION, .help = "probe the timers and exit"},
    [OPT_CVARS] = {"cvars", OPT_TEXT, .help = "the MPI's control variables named PREFIX... (MPI_T), as JSON, and exit"},
    [OPT_VERSION] = {"version", OPT_ACTION, .help = "print the version (and the MPI library's) and exit"},
    [OPT_HELP] = {"help", OPT_ACTION, .help = "this text"},
};

static opt_value values[OPT_COUNT];

static int launcher_rank_is_zero(void) {
  const char *vars[] = {"PMI_RANK", "PMIX_RANK", "OMPI_COMM_WORLD_RANK", "SLURM_PROCID", NULL};
  for (int i = 0; vars[i]; i++) {
    const char *v = getenv(vars[i]);
    if (v)
      return strcmp(v, "0") == 0;
  }
  return 1;
}

void opt_die(const char *fmt, ...) {
  if (launcher_rank_is_zero()) {
    va_list ap;
    va_start(ap, fmt);
    fputs("scope-engine: error: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
  }
  exit(2);
}

/* "all", "pow2", or a list of counts in which "all" stands for the run's ranks (1,all: one
 * rank, then every rank). */
static int check_counts(const char *s) {
  if (strcmp(s, "pow2") == 0)
    return 0;
  for (const char *p = s; *p;) {
    char *e;
    errno = 0;
    long v = strncmp(p, "all", 3) == 0 ? (e = (char *)p + 3, 1) : strtol(p, &e, 10);
    if (e == p || errno || v < 1 || v > 1 << 24 || (*e && *e != ','))
      return -1;
    p = *e ? e + 1 : e;
    if (*e && !*p)
      return -1;
  }
  return *s ? 0 : -1;
}

int opt_check(opt_id id, const char *text, opt_value *out, char *err, size_t errlen) {
  const opt_spec *o = &opt_table[id];
  char *e;
  errno = 0;
  switch (o->kind) {
  case OPT_INT:
  case OPT_REAL: {
    /* Whole numbers are compared as integers: as doubles, 2^53 + 1 would pass a 2^53 bound. */
    long long iv = o->kind == OPT_INT ? strtoll(text, &e, 10) : 0;
    double v = o->kind == OPT_INT ? (double)iv : strtod(text, &e);
    int out_of_range =
        o->kind == OPT_INT ? iv < (long long)o->min || iv > (long long)o->max : !(v >= o->min && v <= o->max);
    if (e == text || *e || errno || out_of_range) {
      if (o->kind == OPT_INT)
        snprintf(err, errlen, "--%s expects a whole number from %lld to %lld, got '%s'", o->name, (long long)o->min,
                 (long long)o->max, text);
      else
        snprintf(err, errlen, "--%s expects a number from %.15g to %.15g, got '%s'", o->name, o->min, o->max, text);
      return -1;
    }
    out->num = v;
    break;
  }
  case OPT_CHOICE:
    for (int i = 0; o->choices[i]; i++)
      if (strcmp(text, o->choices[i]) == 0) {
        out->index = i;
        out->text = o->choices[i];
        return 0;
      }
    {
      size_t l = (size_t)snprintf(err, errlen, "--%s expects one of", o->name);
      for (int i = 0; o->choices[i] && l < errlen; i++)
        l += (size_t)snprintf(err + l, errlen - l, "%s %s", i ? "," : "", o->choices[i]);
      if (l < errlen)
        snprintf(err + l, errlen - l, "; got '%s'", text);
    }
    return -1;
  case OPT_COUNTS:
    if (check_counts(text)) {
      snprintf(err, errlen,
               "--%s expects all, pow2, or process counts >= 1 separated by commas (all among them), got '%s'", o->name,
               text);
      return -1;
    }
    break;
  default:
    break;
  }
  out->text = text;
  return 0;
}

void opt_parse(int argc, char **argv) {
  struct option lo[OPT_COUNT + 1];
  int n = 0;
  char err[256];
  for (int i = 1; i < OPT_COUNT; i++) {
    const opt_spec *o = &opt_table[i];
    int has_arg = o->kind == OPT_FLAG || o->kind == OPT_ACTION ? no_argument : required_argument;
    lo[n++] = (struct option){o->name, has_arg, NULL, i};
    if (o->def && opt_check((opt_id)i, o->def, &values[i], err, sizeof err))
      opt_die("internal: default of --%s: %s", o->name, err);
  }
  lo[n] = (struct option){0, 0, 0, 0};
  int ch;
  opterr = 0;
  optind = 1;
  while ((ch = getopt_long(argc, argv, "", lo, NULL)) != -1) {
    if (ch <= 0 || ch >= OPT_COUNT)
      opt_die("unknown option '%s' (see --help)", argv[optind - 1]);
    opt_value *v = &values[ch];
    const opt_spec *o = &opt_table[ch];
    v->given = 1;
    if (o->kind == OPT_LIST) {
      if (v->nlist == OPT_LIST_MAX)
        opt_die("at most %d --%s options", OPT_LIST_MAX, o->name);
      v->list[v->nlist++] = optarg;
    } else if (o->kind != OPT_FLAG && o->kind != OPT_ACTION && opt_check((opt_id)ch, optarg, v, err, sizeof err)) {
      opt_die("%s", err);
    }
  }
  if (optind < argc)
    opt_die("unexpected argument '%s' (see --help)", argv[optind]);
  for (int i = 1; i < OPT_COUNT; i++) {
    opt_id top = opt_table[i].not_above;
    if (top != OPT_NONE && values[i].text && values[top].text && values[i].num > values[top].num)
      opt_die("--%s (%s) is larger than --%s (%s)", opt_table[i].name, values[i].text, opt_table[top].name,
              values[top].text);
  }
}

const opt_value *opt_get(opt_id id) {
  return &values[id];
}
double opt_num(opt_id id) {
  return values[id].num;
}
const char *opt_text(opt_id id) {
  return values[id].text;
}
int opt_given(opt_id id) {
  return values[id].given;
}

static const char *const kind_names[] = {"flag", "int", "real", "text", "path", "choice", "counts", "list", "action"};

void opt_usage(void) {
  puts("usage: scope-engine [options]");
  for (int i = 1; i < OPT_COUNT; i++) {
    const opt_spec *o = &opt_table[i];
    char head[64];
    int arg = o->kind != OPT_FLAG && o->kind != OPT_ACTION;
    snprintf(head, sizeof head, "--%s%s", o->name, arg ? " V" : "");
    printf("  %-18s %s", head, o->help);
    if (o->kind == OPT_INT)
      printf(" [%lld..%lld]", (long long)o->min, (long long)o->max);
    else if (o->kind == OPT_REAL)
      printf(" [%.15g..%.15g]", o->min, o->max);
    if (o->def)
      printf(" (default %s)", o->def);
    putchar('\n');
  }
}

void opt_publish(json_w *w, void (*emit)(json_w *)) {
  for (int i = 1; i < OPT_COUNT; i++) {
    const opt_spec *o = &opt_table[i];
    jw_obj_begin(w);
    jw_kstr(w, "type", "option");
    jw_kstr(w, "name", o->name);
    jw_kstr(w, "kind", kind_names[o->kind]);
    jw_key(w, "default");
    jw_str(w, o->def);
    if (o->kind == OPT_INT) { /* exact: scope run --help shows the very bounds the plan enforces */
      jw_kint(w, "min", (long long)o->min);
      jw_kint(w, "max", (long long)o->max);
    } else if (o->kind == OPT_REAL) {
      jw_knum(w, "min", o->min);
      jw_knum(w, "max", o->max);
    }
    if (o->choices) {
      jw_key(w, "choices");
      jw_arr_begin(w);
      for (int j = 0; o->choices[j]; j++)
        jw_str(w, o->choices[j]);
      jw_arr_end(w);
    }
    jw_kbool(w, "run", o->run);
    if (o->alias) {
      char a[2] = {o->alias, 0};
      jw_kstr(w, "alias", a);
    }
    if (o->not_above != OPT_NONE)
      jw_kstr(w, "not_above", opt_table[o->not_above].name);
    jw_kstr(w, "help", o->help);
    jw_obj_end(w);
    emit(w);
  }
}

void opt_write_settings(json_w *w) {
  for (int i = 1; i < OPT_COUNT; i++) {
    const opt_spec *o = &opt_table[i];
    if (!o->setting)
      continue;
    if (o->kind == OPT_FLAG)
      jw_kbool(w, o->setting, o->inverted ? !values[i].given : values[i].given);
    else if (o->kind == OPT_INT)
      jw_kint(w, o->setting, (long long)values[i].num);
    else if (o->kind == OPT_CHOICE) /* the choice's name: "shuffled", not its index */
      jw_kstr(w, o->setting, values[i].text);
    else
      jw_knum(w, o->setting, values[i].num);
  }
}

void opt_write_values(json_w *w) {
  for (int i = 1; i < OPT_COUNT; i++) {
    const opt_spec *o = &opt_table[i];
    const opt_value *v = &values[i];
    if (!o->run || (!v->given && !o->def && o->kind != OPT_FLAG && o->kind != OPT_LIST))
      continue;
    jw_key(w, o->name);
    if (o->kind == OPT_FLAG)
      jw_bool(w, v->given);
    else if (o->kind == OPT_INT)
      jw_int(w, (long long)v->num);
    else if (o->kind == OPT_REAL)
      jw_num(w, v->num);
    else if (o->kind == OPT_LIST) {
      jw_arr_begin(w);
      for (int k = 0; k < v->nlist; k++)
        jw_str(w, v->list[k]);
      jw_arr_end(w);
    } else
      jw_str(w, v->text);
  }
}
