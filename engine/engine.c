/* The SCOPE engine: runs the selected tests over sizes and parameter combinations and writes
 * versioned JSON Lines records (docs/records.md) from rank 0, one flushed line per record.
 * Human messages go to stderr only. */
#include <errno.h>
#include <fnmatch.h>
#include <getopt.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "core/json.h"
#include "core/pattern.h"
#include "core/rep.h"
#include "core/sizes.h"
#include "core/stats.h"
#include "core/timer.h"
#include "gclock.h"
#include "scope.h"

#ifndef SCOPE_MPICC
#define SCOPE_MPICC "unknown"
#endif

#define MAX_ASSIGN 16
#define MAX_VALUES 32

typedef struct {
  char name[64];
  char *values; /* comma list as given */
} assignment;

typedef struct {
  const char *tests;
  const char *sizes;
  assignment assign[MAX_ASSIGN];
  int nassign;
  rep_settings rep;
  int offcache;
  const char *timer;
  unsigned long long seed;
  int seed_set;
  const char *output;
  int samples;
  int barrier_timing;   /* collectives: barrier-based instead of window-based starts */
  const char *procs;    /* collectives: process counts, "all", "pow2" or a list */
  const char *pattern;  /* p2p.pattern: the message file */
  double sync_span_s;   /* global clock: span of one synchronisation */
  double sync_bound_ns; /* re-synchronise when the predicted error passes this */
  int list, list_json, timers_only, version;
  int argc;
  char **argv;
} options;

/* Parameter values of one test: the values asked for each schema entry. */
typedef struct {
  long v[SCOPE_MAX_PARAMS][MAX_VALUES];
  int n[SCOPE_MAX_PARAMS];
  char rejected[256]; /* values asked that this test does not accept */
} test_values;

static int g_rank = 0, g_nranks = 1;
static FILE *g_out = NULL;
static json_w g_w;
static int g_errors = 0, g_skips = 0, g_points = 0;
static int *g_node = NULL; /* node id of every rank */
static int g_pattern_max_rank = -1;

/* ---------------------------------------------------------------- messages */

static int launcher_rank_is_zero(void) {
  const char *vars[] = {"PMI_RANK", "PMIX_RANK", "OMPI_COMM_WORLD_RANK", "SLURM_PROCID", NULL};
  for (int i = 0; vars[i]; i++) {
    const char *v = getenv(vars[i]);
    if (v)
      return strcmp(v, "0") == 0;
  }
  return 1;
}

/* An argument error before MPI is up: one line from one rank, exit 2. */
static void die_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die_usage(const char *fmt, ...) {
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

/* Lines "SRC DST SIZE" (size with K/M/G); '#' starts a comment.  Checked before MPI starts;
 * ranks beyond the run are checked once the run's size is known. */
static void load_pattern(const char *path) {
  FILE *f = fopen(path, "r");
  if (!f)
    die_usage("cannot read pattern file '%s': %s", path, strerror(errno));
  static scope_msg msgs[4096];
  char line[512];
  int n = 0, lineno = 0;
  while (fgets(line, sizeof line, f)) {
    lineno++;
    char *hash = strchr(line, '#');
    if (hash)
      *hash = 0;
    char a[64], b[64], sz[64], extra[8];
    int k = sscanf(line, "%63s %63s %63s %7s", a, b, sz, extra);
    if (k <= 0)
      continue;
    char *e1, *e2, err[128];
    long src = strtol(a, &e1, 10), dst = strtol(b, &e2, 10);
    unsigned long long bytes[1];
    if (k != 3 || *e1 || *e2 || src < 0 || dst < 0)
      die_usage("%s line %d: expected 'SOURCE DESTINATION SIZE' (ranks >= 0), got '%s'", path, lineno,
                strtok(line, "\n"));
    if (sizes_parse(sz, bytes, 1, err, sizeof err) != 1)
      die_usage("%s line %d: bad size '%s': %s", path, lineno, sz, err);
    if (src == dst)
      die_usage("%s line %d: rank %ld sends to itself", path, lineno, src);
    if (n == 4096)
      die_usage("%s: more than 4096 messages", path);
    msgs[n++] = (scope_msg){(int)src, (int)dst, (size_t)bytes[0]};
    if (src > g_pattern_max_rank)
      g_pattern_max_rank = (int)src;
    if (dst > g_pattern_max_rank)
      g_pattern_max_rank = (int)dst;
  }
  fclose(f);
  if (!n)
    die_usage("pattern file '%s' has no messages", path);
  scope_pattern = msgs;
  scope_pattern_len = n;
}

static void emit(void) {
  if (g_rank == 0 && jw_emit(&g_w, g_out) != 0) {
    fprintf(stderr, "scope-engine: error: cannot write records: %s\n", strerror(errno));
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
  jw_reset(&g_w);
}

/* ---------------------------------------------------------------- options */

static void usage(void) {
  puts("usage: scope-engine [options]\n"
       "  --list [--json]        list tests and their parameters\n"
       "  --tests LIST           names or glob patterns, comma separated (default p2p.*)\n"
       "  --sizes SPEC           e.g. 0-4M, 8,64,1K, 1K-1M:x4, 0-4K:+512 (default 0-4M)\n"
       "  --param NAME=V1,V2     sweep a test parameter (repeatable)\n"
       "  --precision F          target relative half-width of the median's 95% CI (0.01)\n"
       "  --budget S             seconds per point, warm-up included (1.0)\n"
       "  --min-count N          samples per point at least (20)\n"
       "  --max-count N          samples per point at most (200000)\n"
       "  --warmup-max N         warm-up iterations at most (20000)\n"
       "  --offcache             cycle buffers through twice the last-level cache\n"
       "  --timer NAME           tsc, clock_monotonic_raw or mpi_wtime (default: best)\n"
       "  --seed N               seed of the data patterns\n"
       "  --output FILE          records to FILE instead of stdout\n"
       "  --no-samples           leave raw samples out of point records\n"
       "  --timing window|barrier  collectives: starts at agreed global times (default) or after a barrier\n"
       "  --procs LIST           collectives: process counts, e.g. 2,4,8, pow2 or all (default all)\n"
       "  --sync-span S          global clock: seconds one synchronisation spans (0.2)\n"
       "  --sync-bound NS        re-synchronise when the clock's predicted error passes this (1000)\n"
       "  --pattern FILE         p2p.pattern: lines 'SOURCE DESTINATION SIZE', sent concurrently\n"
       "  --timers               probe the timers and exit\n"
       "  --version");
}

static double parse_double(const char *opt, const char *s, double lo, double hi) {
  char *e;
  errno = 0;
  double v = strtod(s, &e);
  if (e == s || *e || errno || !(v >= lo && v <= hi))
    die_usage("%s expects a number from %g to %g, got '%s'", opt, lo, hi, s);
  return v;
}

static long parse_long(const char *opt, const char *s, long lo, long hi) {
  char *e;
  errno = 0;
  long v = strtol(s, &e, 10);
  if (e == s || *e || errno || v < lo || v > hi)
    die_usage("%s expects a whole number from %ld to %ld, got '%s'", opt, lo, hi, s);
  return v;
}

static void parse_options(int argc, char **argv, options *o) {
  memset(o, 0, sizeof *o);
  o->tests = "p2p.*";
  o->sizes = "0-4M";
  o->samples = 1;
  o->procs = "all";
  o->sync_span_s = 0.2;
  o->sync_bound_ns = 1000;
  o->argc = argc;
  o->argv = argv;
  rep_defaults(&o->rep);
  enum {
    O_LIST = 256,
    O_JSON,
    O_TESTS,
    O_SIZES,
    O_PARAM,
    O_PREC,
    O_BUDGET,
    O_MIN,
    O_MAX,
    O_WMAX,
    O_OFF,
    O_TIMER,
    O_SEED,
    O_OUT,
    O_NOSAMP,
    O_TIMERS,
    O_VERSION,
    O_HELP,
    O_TIMING,
    O_PROCS,
    O_SPAN,
    O_BOUND,
    O_PATTERN
  };
  static const struct option lo[] = {{"pattern", required_argument, 0, O_PATTERN},
                                     {"timing", required_argument, 0, O_TIMING},
                                     {"procs", required_argument, 0, O_PROCS},
                                     {"sync-span", required_argument, 0, O_SPAN},
                                     {"sync-bound", required_argument, 0, O_BOUND},
                                     {"list", no_argument, 0, O_LIST},
                                     {"json", no_argument, 0, O_JSON},
                                     {"tests", required_argument, 0, O_TESTS},
                                     {"sizes", required_argument, 0, O_SIZES},
                                     {"param", required_argument, 0, O_PARAM},
                                     {"precision", required_argument, 0, O_PREC},
                                     {"budget", required_argument, 0, O_BUDGET},
                                     {"min-count", required_argument, 0, O_MIN},
                                     {"max-count", required_argument, 0, O_MAX},
                                     {"warmup-max", required_argument, 0, O_WMAX},
                                     {"offcache", no_argument, 0, O_OFF},
                                     {"timer", required_argument, 0, O_TIMER},
                                     {"seed", required_argument, 0, O_SEED},
                                     {"output", required_argument, 0, O_OUT},
                                     {"no-samples", no_argument, 0, O_NOSAMP},
                                     {"timers", no_argument, 0, O_TIMERS},
                                     {"version", no_argument, 0, O_VERSION},
                                     {"help", no_argument, 0, O_HELP},
                                     {0, 0, 0, 0}};
  int ch;
  opterr = 0;
  while ((ch = getopt_long(argc, argv, "", lo, NULL)) != -1) {
    switch (ch) {
    case O_LIST:
      o->list = 1;
      break;
    case O_JSON:
      o->list_json = 1;
      break;
    case O_TESTS:
      o->tests = optarg;
      break;
    case O_SIZES:
      o->sizes = optarg;
      break;
    case O_PARAM: {
      const char *eq = strchr(optarg, '=');
      if (!eq || eq == optarg || !eq[1] || (size_t)(eq - optarg) >= sizeof o->assign[0].name)
        die_usage("--param expects NAME=VALUE[,VALUE...], got '%s'", optarg);
      if (o->nassign == MAX_ASSIGN)
        die_usage("at most %d --param options", MAX_ASSIGN);
      assignment *a = &o->assign[o->nassign++];
      memcpy(a->name, optarg, (size_t)(eq - optarg));
      a->name[eq - optarg] = 0;
      a->values = (char *)eq + 1;
      break;
    }
    case O_PREC:
      o->rep.precision = parse_double("--precision", optarg, 1e-5, 1.0);
      break;
    case O_BUDGET:
      o->rep.budget_s = parse_double("--budget", optarg, 1e-3, 86400.0);
      break;
    case O_MIN:
      o->rep.min_count = (size_t)parse_long("--min-count", optarg, 1, 100000000);
      break;
    case O_MAX:
      o->rep.max_count = (size_t)parse_long("--max-count", optarg, 1, 100000000);
      break;
    case O_WMAX:
      o->rep.warmup_max = (size_t)parse_long("--warmup-max", optarg, 2, 100000000);
      break;
    case O_OFF:
      o->offcache = 1;
      break;
    case O_TIMER:
      o->timer = optarg;
      if (timer_by_name(optarg) >= TIMER_FAKE)
        die_usage("unknown timer '%s' (choose tsc, clock_monotonic_raw or mpi_wtime)", optarg);
      break;
    case O_SEED:
      o->seed = strtoull(optarg, NULL, 0);
      o->seed_set = 1;
      break;
    case O_OUT:
      o->output = optarg;
      break;
    case O_NOSAMP:
      o->samples = 0;
      break;
    case O_TIMERS:
      o->timers_only = 1;
      break;
    case O_VERSION:
      o->version = 1;
      break;
    case O_HELP:
      usage();
      exit(0);
    case O_TIMING:
      if (strcmp(optarg, "window") && strcmp(optarg, "barrier"))
        die_usage("--timing expects window or barrier, got '%s'", optarg);
      o->barrier_timing = strcmp(optarg, "barrier") == 0;
      break;
    case O_PROCS:
      o->procs = optarg;
      break;
    case O_PATTERN:
      o->pattern = optarg;
      break;
    case O_SPAN:
      o->sync_span_s = parse_double("--sync-span", optarg, 0.001, 60);
      break;
    case O_BOUND:
      o->sync_bound_ns = parse_double("--sync-bound", optarg, 1, 1e9);
      break;
    default:
      die_usage("unknown option '%s' (see --help)", argv[optind - 1]);
    }
  }
  if (optind < argc)
    die_usage("unexpected argument '%s' (see --help)", argv[optind]);
  if (o->rep.min_count > o->rep.max_count)
    die_usage("--min-count (%zu) is larger than --max-count (%zu)", o->rep.min_count, o->rep.max_count);
}

/* ---------------------------------------------------------------- tests and parameters */

static int count_tests(void) {
  int n = 0;
  while (scope_registry[n])
    n++;
  return n;
}

static void valid_names(char *buf, size_t len) {
  buf[0] = 0;
  for (int i = 0; scope_registry[i]; i++) {
    strncat(buf, i ? ", " : "", len - strlen(buf) - 1);
    strncat(buf, scope_registry[i]->name, len - strlen(buf) - 1);
  }
}

/* Fills sel[] with the selected tests in registry order; every list item must match one. */
static int select_tests(const char *spec, const scope_test **sel) {
  int total = count_tests(), nsel = 0;
  int chosen[256] = {0};
  char *copy = strdup(spec), *save = NULL;
  for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    while (*tok == ' ')
      tok++;
    int hit = 0;
    for (int i = 0; i < total; i++)
      if (fnmatch(tok, scope_registry[i]->name, 0) == 0)
        chosen[i] = hit = 1;
    if (!hit) {
      char names[2048];
      valid_names(names, sizeof names);
      die_usage("unknown test '%s' (valid: %s)", tok, names);
    }
  }
  free(copy);
  for (int i = 0; i < total; i++)
    if (chosen[i])
      sel[nsel++] = scope_registry[i];
  return nsel;
}

static int parse_value(const scope_param *p, const char *s, long *out) {
  if (p->type == SP_INT) {
    char *e;
    long v = strtol(s, &e, 10);
    if (e == s || *e || v < p->min || v > p->max)
      return -1;
    *out = v;
    return 0;
  }
  if (p->type == SP_BOOL) {
    const char *yes[] = {"yes", "true", "1", "on"}, *no[] = {"no", "false", "0", "off"};
    for (int i = 0; i < 4; i++) {
      if (strcasecmp(s, yes[i]) == 0)
        return *out = 1, 0;
      if (strcasecmp(s, no[i]) == 0)
        return *out = 0, 0;
    }
    return -1;
  }
  for (long i = 0; p->choices[i]; i++)
    if (strcasecmp(s, p->choices[i]) == 0)
      return *out = i, 0;
  return -1;
}

static void describe_domain(const scope_param *p, char *buf, size_t len) {
  if (p->type == SP_INT) {
    snprintf(buf, len, "a whole number from %ld to %ld", p->min, p->max);
  } else if (p->type == SP_BOOL) {
    snprintf(buf, len, "yes or no");
  } else {
    buf[0] = 0;
    for (int i = 0; p->choices[i]; i++) {
      strncat(buf, i ? ", " : "one of ", len - strlen(buf) - 1);
      strncat(buf, p->choices[i], len - strlen(buf) - 1);
    }
  }
}

/* Resolves the --param assignments for every selected test.  A name no selected test has, or
 * a value no selected test accepts, is an error; a value only some tests accept is recorded
 * as rejected for the others and reported in a skip record. */
static void resolve_params(const options *o, const scope_test **sel, int nsel, test_values *tv) {
  for (int a = 0; a < o->nassign; a++) {
    int known = 0;
    for (int t = 0; t < nsel; t++)
      for (int k = 0; k < sel[t]->nparams; k++)
        known |= strcmp(sel[t]->params[k].name, o->assign[a].name) == 0;
    if (!known)
      die_usage("no selected test has a parameter '%s' (see scope list)", o->assign[a].name);
  }
  for (int t = 0; t < nsel; t++) {
    const scope_test *T = sel[t];
    memset(&tv[t], 0, sizeof tv[t]);
    for (int k = 0; k < T->nparams; k++) {
      const scope_param *p = &T->params[k];
      const assignment *as = NULL;
      for (int a = 0; a < o->nassign; a++)
        if (strcmp(o->assign[a].name, p->name) == 0)
          as = &o->assign[a];
      if (!as) {
        if (parse_value(p, p->def, &tv[t].v[k][0]))
          die_usage("internal: default '%s' of %s.%s is invalid", p->def, T->name, p->name);
        tv[t].n[k] = 1;
        continue;
      }
      char *copy = strdup(as->values), *save = NULL;
      for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        long v;
        if (parse_value(p, tok, &v) == 0) {
          if (tv[t].n[k] == MAX_VALUES)
            die_usage("at most %d values for parameter '%s'", MAX_VALUES, p->name);
          tv[t].v[k][tv[t].n[k]++] = v;
          continue;
        }
        /* Accepted by another selected test?  Then only this one skips it. */
        int elsewhere = 0;
        for (int u = 0; u < nsel; u++)
          for (int j = 0; j < sel[u]->nparams; j++) {
            long dummy;
            if (u != t && strcmp(sel[u]->params[j].name, p->name) == 0 &&
                parse_value(&sel[u]->params[j], tok, &dummy) == 0)
              elsewhere = 1;
          }
        if (!elsewhere) {
          char dom[256];
          describe_domain(p, dom, sizeof dom);
          die_usage("parameter %s=%s is not valid for %s: expected %s", p->name, tok, T->name, dom);
        }
        size_t l = strlen(tv[t].rejected);
        snprintf(tv[t].rejected + l, sizeof tv[t].rejected - l, "%s%s=%s", l ? ", " : "", p->name, tok);
      }
      free(copy);
    }
  }
}

/* Process counts for window-timed tests: "all" (this run's ranks), "pow2" (2, 4, ... and
 * all), or a list; counts above the run's ranks or below the test's minimum are dropped. */
static int procs_list(const char *spec, const scope_test *T, int *out) {
  int n = 0;
  if (T->timing != SCOPE_TIMING_WINDOW || strcmp(spec, "all") == 0) {
    out[n++] = g_nranks;
    return n;
  }
  if (strcmp(spec, "pow2") == 0) {
    for (int p = 2; p < g_nranks && n < 30; p *= 2)
      if (p >= T->min_ranks)
        out[n++] = p;
    out[n++] = g_nranks;
    return n;
  }
  char *copy = strdup(spec), *save = NULL;
  for (char *tok = strtok_r(copy, ",", &save); tok && n < 64; tok = strtok_r(NULL, ",", &save)) {
    int p = atoi(tok);
    if (p >= T->min_ranks && p <= g_nranks)
      out[n++] = p;
  }
  free(copy);
  return n;
}

static long combos(const scope_test *T, const test_values *tv) {
  long n = 1;
  for (int k = 0; k < T->nparams; k++)
    n *= tv->n[k] ? tv->n[k] : 0;
  return n;
}

static void write_param_value(const scope_param *p, long v) {
  if (p->type == SP_INT)
    jw_int(&g_w, v);
  else if (p->type == SP_BOOL)
    jw_bool(&g_w, (int)v);
  else
    jw_str(&g_w, p->choices[v]);
}

static void write_params(const scope_test *T, const scope_ctx *c) {
  jw_key(&g_w, "params");
  jw_obj_begin(&g_w);
  if (T->sized)
    jw_kint(&g_w, "size", (long long)c->size);
  if (T->timing == SCOPE_TIMING_WINDOW)
    jw_kint(&g_w, "procs", c->nranks);
  for (int k = 0; k < T->nparams; k++) {
    jw_key(&g_w, T->params[k].name);
    write_param_value(&T->params[k], c->p[k]);
  }
  jw_obj_end(&g_w);
}

static void list_tests(int as_json) {
  if (!as_json) {
    for (int i = 0; scope_registry[i]; i++) {
      const scope_test *T = scope_registry[i];
      printf("%-16s %s\n", T->name, T->summary);
      for (int k = 0; k < T->nparams; k++) {
        char dom[256];
        describe_domain(&T->params[k], dom, sizeof dom);
        printf("  %-14s %s [default %s; %s]\n", T->params[k].name, T->params[k].help, T->params[k].def, dom);
      }
    }
    return;
  }
  jw_init(&g_w);
  for (int i = 0; scope_registry[i]; i++) {
    const scope_test *T = scope_registry[i];
    jw_obj_begin(&g_w);
    jw_kstr(&g_w, "type", "test");
    jw_kint(&g_w, "schema", SCOPE_SCHEMA_VERSION);
    jw_kstr(&g_w, "name", T->name);
    jw_kstr(&g_w, "level", T->level);
    jw_kstr(&g_w, "summary", T->summary);
    jw_kstr(&g_w, "measures", T->measures);
    jw_kint(&g_w, "min_ranks", T->min_ranks);
    jw_kbool(&g_w, "sized", T->sized);
    jw_key(&g_w, "params");
    jw_arr_begin(&g_w);
    for (int k = 0; k < T->nparams; k++) {
      const scope_param *p = &T->params[k];
      jw_obj_begin(&g_w);
      jw_kstr(&g_w, "name", p->name);
      jw_kstr(&g_w, "type", p->type == SP_INT ? "int" : p->type == SP_BOOL ? "bool" : "enum");
      jw_kstr(&g_w, "default", p->def);
      if (p->type == SP_INT) {
        jw_kint(&g_w, "min", p->min);
        jw_kint(&g_w, "max", p->max);
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
    jw_arr_end(&g_w);
    jw_obj_end(&g_w);
    jw_emit(&g_w, stdout);
  }
  jw_free(&g_w);
}

/* ---------------------------------------------------------------- context */

static double wall_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static size_t llc_bytes(void) {
  long v = sysconf(_SC_LEVEL3_CACHE_SIZE);
  if (v <= 0)
    v = sysconf(_SC_LEVEL2_CACHE_SIZE);
  return v > 0 ? (size_t)v : (size_t)32 << 20;
}

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

static const char *const env_prefixes[] = {"MPIR_CVAR_", "MPICH_", "UCX_",      "FI_",          "OMPI_MCA_",
                                           "I_MPI_",     "HYDRA_", "SLURM_JOB", "SLURM_NTASKS", "SLURM_CPUS",
                                           "OMP_",       "SCOPE_", NULL};
extern char **environ;

typedef struct {
  char host[MPI_MAX_PROCESSOR_NAME];
  char netns[64]; /* network namespace, e.g. net:[4026531840]: ranks of a testbed differ here */
  int cpu, node, cores, allowed;
} rank_info;

/* Gathers each rank's host and cpu, decides oversubscription (more ranks on a host than it
 * has cores) and writes the context record. */
static int write_context(const options *o, const timer_info *ti, timer_kind chosen, unsigned long long seed,
                         const unsigned long long *sizes, long nsizes, const scope_test **sel, int nsel) {
  rank_info me = {0}, *all = NULL;
  int len;
  MPI_Get_processor_name(me.host, &len);
  me.cpu = sched_getcpu();
  ssize_t nl = readlink("/proc/self/ns/net", me.netns, sizeof me.netns - 1);
  me.netns[nl > 0 ? nl : 0] = 0;
  cpu_set_t set;
  me.allowed = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : -1;
  me.cores = (int)sysconf(_SC_NPROCESSORS_ONLN);
  MPI_Comm node_comm;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node_comm);
  int node_rank, node_size;
  MPI_Comm_rank(node_comm, &node_rank);
  MPI_Comm_size(node_comm, &node_size);
  /* Node id = world rank of the node's first rank: identical on every rank of the node. */
  int leader = g_rank;
  MPI_Bcast(&leader, 1, MPI_INT, 0, node_comm);
  me.node = leader;
  g_node = malloc(sizeof(int) * (size_t)g_nranks);
  MPI_Allgather(&me.node, 1, MPI_INT, g_node, 1, MPI_INT, MPI_COMM_WORLD);
  int over_local = node_size > me.cores, over = 0;
  MPI_Allreduce(&over_local, &over, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Comm_free(&node_comm);
  if (g_rank == 0)
    all = malloc(sizeof(rank_info) * (size_t)g_nranks);
  MPI_Gather(&me, (int)sizeof me, MPI_BYTE, all, (int)sizeof me, MPI_BYTE, 0, MPI_COMM_WORLD);
  if (g_rank != 0)
    return over;

  char lib[MPI_MAX_LIBRARY_VERSION_STRING];
  int ver, sub;
  MPI_Get_library_version(lib, &len);
  MPI_Get_version(&ver, &sub);
  char stamp[32];
  time_t now = time(NULL);
  struct tm tm;
  gmtime_r(&now, &tm);
  strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", &tm);

  jw_obj_begin(&g_w);
  jw_kstr(&g_w, "type", "context");
  jw_kint(&g_w, "schema", SCOPE_SCHEMA_VERSION);
  jw_kstr(&g_w, "started_utc", stamp);
  jw_key(&g_w, "engine");
  jw_obj_begin(&g_w);
  jw_kstr(&g_w, "version", SCOPE_ENGINE_VERSION);
  jw_kstr(&g_w, "compiler", __VERSION__);
  jw_kstr(&g_w, "mpicc", SCOPE_MPICC);
  jw_obj_end(&g_w);
  jw_key(&g_w, "mpi");
  jw_obj_begin(&g_w);
  jw_kstr(&g_w, "library", lib);
  char sv[16];
  snprintf(sv, sizeof sv, "%d.%d", ver, sub);
  jw_kstr(&g_w, "standard", sv);
  jw_obj_end(&g_w);
  jw_kint(&g_w, "ranks", g_nranks);
  jw_key(&g_w, "placement");
  jw_arr_begin(&g_w);
  for (int r = 0; r < g_nranks; r++) {
    jw_obj_begin(&g_w);
    jw_kint(&g_w, "rank", r);
    jw_kstr(&g_w, "host", all[r].host);
    jw_kint(&g_w, "node", all[r].node);
    jw_kint(&g_w, "cpu", all[r].cpu);
    jw_kstr(&g_w, "netns", all[r].netns);
    jw_kint(&g_w, "cores", all[r].cores);
    jw_kint(&g_w, "cpus_allowed", all[r].allowed);
    jw_obj_end(&g_w);
  }
  jw_arr_end(&g_w);
  jw_kbool(&g_w, "oversubscribed", over);
  const char *thr = getenv("MPIR_CVAR_CH4_PROGRESS_THROTTLE");
  jw_key(&g_w, "progress_throttle");
  jw_str(&g_w, thr);
  jw_key(&g_w, "timer");
  jw_obj_begin(&g_w);
  jw_kstr(&g_w, "selected", ti[chosen].name);
  jw_knum(&g_w, "tick_ns", ti[chosen].tick_ns);
  jw_knum(&g_w, "overhead_ns", ti[chosen].overhead_ns);
  jw_knum(&g_w, "resolution_ns", ti[chosen].resolution_ns);
  jw_key(&g_w, "all");
  jw_arr_begin(&g_w);
  for (int k = 0; k < TIMER_FAKE; k++)
    write_timer(&ti[k]);
  jw_arr_end(&g_w);
  jw_obj_end(&g_w);
  jw_kint(&g_w, "seed", (long long)seed);
  jw_kint(&g_w, "llc_bytes", (long long)llc_bytes());
  jw_key(&g_w, "settings");
  jw_obj_begin(&g_w);
  jw_knum(&g_w, "precision", o->rep.precision);
  jw_knum(&g_w, "budget_s", o->rep.budget_s);
  jw_kint(&g_w, "min_count", (long long)o->rep.min_count);
  jw_kint(&g_w, "max_count", (long long)o->rep.max_count);
  jw_kint(&g_w, "warmup_max", (long long)o->rep.warmup_max);
  jw_knum(&g_w, "warmup_tol", o->rep.warmup_tol);
  jw_knum(&g_w, "batch_factor", o->rep.batch_factor);
  jw_kbool(&g_w, "offcache", o->offcache);
  jw_kbool(&g_w, "samples", o->samples);
  jw_key(&g_w, "sizes");
  jw_arr_begin(&g_w);
  for (long i = 0; i < nsizes; i++)
    jw_int(&g_w, (long long)sizes[i]);
  jw_arr_end(&g_w);
  jw_key(&g_w, "tests");
  jw_arr_begin(&g_w);
  for (int t = 0; t < nsel; t++)
    jw_str(&g_w, sel[t]->name);
  jw_arr_end(&g_w);
  jw_obj_end(&g_w);
  jw_key(&g_w, "argv");
  jw_arr_begin(&g_w);
  for (int i = 0; i < o->argc; i++)
    jw_str(&g_w, o->argv[i]);
  jw_arr_end(&g_w);
  jw_key(&g_w, "env");
  jw_obj_begin(&g_w);
  for (char **e = environ; *e; e++)
    for (int p = 0; env_prefixes[p]; p++)
      if (strncmp(*e, env_prefixes[p], strlen(env_prefixes[p])) == 0) {
        const char *eq = strchr(*e, '=');
        if (!eq)
          break;
        char key[256];
        snprintf(key, sizeof key, "%.*s", (int)(eq - *e), *e);
        jw_kstr(&g_w, key, eq + 1);
        break;
      }
  jw_obj_end(&g_w);
  jw_obj_end(&g_w);
  emit();
  free(all);
  return over;
}

static void warning(const char *kind, const char *message, const char *hint) {
  if (g_rank != 0)
    return;
  jw_obj_begin(&g_w);
  jw_kstr(&g_w, "type", "warning");
  jw_kstr(&g_w, "kind", kind);
  jw_kstr(&g_w, "message", message);
  jw_kstr(&g_w, "hint", hint);
  jw_obj_end(&g_w);
  emit();
}

/* ---------------------------------------------------------------- buffers */

typedef struct {
  char *s, *r;
  size_t sstride, rstride, nslots, cur;
} bufset;

static size_t round_page(size_t n) {
  return n ? (n + 4095) & ~(size_t)4095 : 4096;
}

static int buffers_alloc(bufset *B, const scope_ctx *c, int offcache, uint64_t seed) {
  B->sstride = round_page(c->sbuf_bytes);
  B->rstride = round_page(c->rbuf_bytes);
  B->nslots = 1;
  if (offcache) {
    size_t want = 2 * llc_bytes() / (B->sstride + B->rstride) + 1;
    B->nslots = want > 65536 ? 65536 : want;
  }
  B->cur = 0;
  B->s = B->r = NULL;
  if (posix_memalign((void **)&B->s, 4096, B->sstride * B->nslots) ||
      posix_memalign((void **)&B->r, 4096, B->rstride * B->nslots)) {
    free(B->s);
    B->s = B->r = NULL;
    return -1;
  }
  for (size_t i = 0; i < B->nslots; i++)
    pattern_fill(B->s + i * B->sstride, c->sbuf_bytes, seed, c->rank);
  memset(B->r, 0, B->rstride * B->nslots);
  return 0;
}

static inline void buffers_slot(bufset *B, scope_ctx *c, size_t k) {
  B->cur = k;
  c->sbuf = B->s + k * B->sstride;
  c->rbuf = B->r + k * B->rstride;
}

static inline void buffers_next(bufset *B, scope_ctx *c) {
  if (B->nslots > 1)
    buffers_slot(B, c, B->cur + 1 == B->nslots ? 0 : B->cur + 1);
}

/* ---------------------------------------------------------------- measurement */

enum { PH_WARM, PH_MEASURE, PH_STOP };

/* One untimed iteration first: every rank then enters the timed loop already paced by the
 * operation itself, not by when it left the previous collective.  Timestamps are chained
 * (one read per sample) and stay local; they are combined after the loop. */
static void run_chunk(const scope_test *T, scope_ctx *c, void *st, bufset *B, size_t n, size_t batch, uint64_t *ticks) {
  buffers_next(B, c);
  T->run(c, st);
  uint64_t prev = timer_now();
  for (size_t i = 0; i < n; i++) {
    for (size_t j = 0; j < batch; j++) {
      buffers_next(B, c);
      T->run(c, st);
    }
    uint64_t now = timer_now();
    ticks[i] = now - prev;
    prev = now;
  }
}

/* What window (or barrier) timing keeps beyond the samples: per valid repetition and rank,
 * start and end relative to the repetition's common start, ns (on rank 0, rank-major). */
typedef struct {
  int active, barrier;
  long invalid, total;
  double window_ns, sync_error_ns;
  int nranks;
  double *start, *end;
  size_t nrep, cap;
} windowed;

typedef struct {
  rep_state rs;
  int ok;
  windowed w;
} measured;

static void measure(const options *o, const scope_test *T, scope_ctx *c, void *st, bufset *B, double timer_cost,
                    measured *m) {
  rep_settings set = o->rep;
  set.timer_cost_ns = timer_cost;
  m->ok = rep_init(&m->rs, &set) == 0;
  long act[3] = {PH_WARM, (long)rep_warmup_chunk(&m->rs), 1};
  uint64_t *ticks = NULL;
  double *ns = NULL, *maxns = NULL;
  size_t cap = 0;
  double tick = timer_tick_ns();
  for (;;) {
    MPI_Bcast(act, 3, MPI_LONG, 0, c->comm);
    if (act[0] == PH_STOP)
      break;
    size_t n = (size_t)act[1], batch = (size_t)act[2];
    if (n > cap) {
      cap = n;
      ticks = realloc(ticks, cap * sizeof *ticks);
      ns = realloc(ns, cap * sizeof *ns);
      maxns = realloc(maxns, cap * sizeof *maxns);
      if (!ticks || !ns || !maxns) {
        fprintf(stderr, "scope-engine: error: out of memory for %zu samples\n", n);
        MPI_Abort(MPI_COMM_WORLD, 3);
      }
    }
    double t0 = wall_s();
    run_chunk(T, c, st, B, n, batch, ticks);
    for (size_t i = 0; i < n; i++)
      ns[i] = (double)ticks[i] * tick / (double)batch;
    /* Per sample, the slowest rank: a rank that waited is not averaged away. */
    MPI_Reduce(ns, maxns, (int)n, MPI_DOUBLE, MPI_MAX, 0, c->comm);
    if (g_rank == 0) {
      double secs = wall_s() - t0;
      if (act[0] == PH_WARM) {
        if (rep_warmup_feed(&m->rs, maxns, n, secs)) {
          act[0] = PH_MEASURE;
          act[2] = (long)rep_batch(&m->rs);
          act[1] = (long)rep_next_chunk(&m->rs);
        } else {
          act[1] = (long)rep_warmup_chunk(&m->rs);
        }
      } else if (rep_feed(&m->rs, maxns, n, secs) != REP_CONTINUE) {
        act[0] = PH_STOP;
      } else {
        act[1] = (long)rep_next_chunk(&m->rs);
      }
    }
  }
  free(ticks);
  free(ns);
  free(maxns);
}

#define WINDOW_KEEP 5000 /* repetitions whose per-rank times are kept in the record */

static void window_keep(windowed *W, const double *s, const double *e, size_t n, size_t k) {
  if (W->nrep >= WINDOW_KEEP)
    return;
  if (W->nrep == W->cap) {
    W->cap = W->cap ? 2 * W->cap : 256;
    W->start = realloc(W->start, sizeof(double) * W->cap * (size_t)W->nranks);
    W->end = realloc(W->end, sizeof(double) * W->cap * (size_t)W->nranks);
  }
  for (int r = 0; r < W->nranks; r++) {
    W->start[(size_t)r * WINDOW_KEEP + W->nrep] = s[(size_t)r * n + k];
    W->end[(size_t)r * WINDOW_KEEP + W->nrep] = e[(size_t)r * n + k];
  }
  W->nrep++;
}

/* Collectives.  Window mode (SKaMPI/ReproMPI): repetition k of a chunk starts when every
 * rank's clock, mapped to global time, reaches T0 + k w; a repetition in which any rank
 * started more than `late_ns` after its start time is invalid and counted, not used.  The
 * sample is the global completion time, last exit - common start.  Barrier mode: a barrier
 * before each repetition, the sample is the slowest rank's own time.  Warm-up runs in barrier
 * mode and sizes the window from the operation's time. */
static void measure_window(const options *o, const scope_test *T, scope_ctx *c, void *st, bufset *B, double timer_cost,
                           double sync_err_ns, measured *m) {
  rep_settings set = o->rep;
  set.timer_cost_ns = timer_cost;
  m->ok = rep_init(&m->rs, &set) == 0;
  windowed *W = &m->w;
  memset(W, 0, sizeof *W);
  W->active = 1;
  W->barrier = o->barrier_timing;
  W->nranks = c->nranks;
  W->sync_error_ns = sync_err_ns;
  W->start = malloc(sizeof(double) * WINDOW_KEEP * (size_t)c->nranks);
  W->end = malloc(sizeof(double) * WINDOW_KEEP * (size_t)c->nranks);
  W->cap = WINDOW_KEEP;
  double late_ns = fmax(1000.0, 4 * sync_err_ns);
  double act[4] = {PH_WARM, (double)rep_warmup_chunk(&m->rs), 0, 0}; /* phase, n, window, T0 */
  double *s = NULL, *e = NULL, *as = NULL, *ae = NULL, *samples = NULL;
  size_t cap = 0;
  double point_start = wall_s();
  for (;;) {
    MPI_Bcast(act, 4, MPI_DOUBLE, 0, c->comm);
    if (act[0] == PH_STOP)
      break;
    size_t n = (size_t)act[1];
    double w = act[2], t0 = act[3];
    if (n > cap) {
      cap = n;
      s = realloc(s, sizeof(double) * cap);
      e = realloc(e, sizeof(double) * cap);
      samples = realloc(samples, sizeof(double) * cap);
      if (g_rank == 0) {
        as = realloc(as, sizeof(double) * cap * (size_t)c->nranks);
        ae = realloc(ae, sizeof(double) * cap * (size_t)c->nranks);
      }
    }
    double wall0 = wall_s();
    int barrier = act[0] == PH_WARM || W->barrier;
    if (barrier) {
      for (size_t k = 0; k < n; k++) {
        MPI_Barrier(c->comm);
        buffers_next(B, c);
        double a = gclock_now_local();
        T->run(c, st);
        s[k] = 0;
        e[k] = gclock_now_local() - a;
      }
    } else {
      for (size_t k = 0; k < n; k++) {
        double tk = t0 + (double)k * w, lk = gclock_to_local(tk);
        buffers_next(B, c);
        /* Yield while the start is far off: with more ranks than cores, spinning would steal
         * the core from the ranks still finishing the previous repetition. */
        for (double now = gclock_now_local(); now < lk; now = gclock_now_local())
          if (lk - now > 20000)
            sched_yield();
        double a = gclock_now_local();
        T->run(c, st);
        double b = gclock_now_local();
        s[k] = gclock_to_global(a) - tk;
        e[k] = gclock_to_global(b) - tk;
      }
    }
    MPI_Gather(s, (int)n, MPI_DOUBLE, as, (int)n, MPI_DOUBLE, 0, c->comm);
    MPI_Gather(e, (int)n, MPI_DOUBLE, ae, (int)n, MPI_DOUBLE, 0, c->comm);
    if (g_rank != 0)
      continue;
    double secs = wall_s() - wall0;
    size_t valid = 0;
    for (size_t k = 0; k < n; k++) {
      double smax = -INFINITY, emax = -INFINITY;
      for (int r = 0; r < c->nranks; r++) {
        smax = fmax(smax, as[(size_t)r * n + k]);
        emax = fmax(emax, ae[(size_t)r * n + k]);
      }
      if (act[0] == PH_MEASURE) {
        W->total++;
        if (!barrier && smax > late_ns) {
          W->invalid++;
          continue;
        }
        window_keep(W, as, ae, n, k);
      }
      samples[valid++] = emax;
    }
    if (act[0] == PH_WARM) {
      if (rep_warmup_feed(&m->rs, samples, valid, secs)) {
        act[0] = PH_MEASURE;
        rep_batch(&m->rs);
        m->rs.batch = 1; /* a collective is never batched: each repetition is its own event */
        act[1] = (double)rep_next_chunk(&m->rs);
        act[2] = fmax(3 * m->rs.warm_median, 20000.0) + 4 * late_ns;
      } else {
        act[1] = (double)rep_warmup_chunk(&m->rs);
      }
    } else {
      if (valid && rep_feed(&m->rs, samples, valid, secs) != REP_CONTINUE) {
        act[0] = PH_STOP;
      } else {
        /* Too many late starts: the window is too short for this operation here. */
        if (n > 0 && (double)(n - valid) > 0.1 * (double)n && act[2] < 1e9)
          act[2] *= 2;
        act[1] = (double)rep_next_chunk(&m->rs);
        if (wall_s() - point_start > 4 * o->rep.budget_s && m->rs.n >= 6)
          act[0] = PH_STOP; /* invalid repetitions can starve the sample: do not run forever */
        if (wall_s() - point_start > 20 * o->rep.budget_s + 10)
          act[0] = PH_STOP; /* nothing valid at all: give up, the record shows the count */
      }
    }
    W->window_ns = act[2];
    act[3] = gclock_now_global() + fmax(2 * act[2], 200000.0);
  }
  free(s);
  free(e);
  free(as);
  free(ae);
  free(samples);
}

/* One untimed iteration on fresh patterns; returns bad bytes summed over ranks. */
static size_t validate(const scope_test *T, scope_ctx *c, void *st, bufset *B, uint64_t seed, size_t *first_bad) {
  buffers_slot(B, c, 0);
  pattern_fill(c->sbuf, c->sbuf_bytes, seed, c->rank);
  memset(c->rbuf, 0, c->rbuf_bytes);
  MPI_Barrier(c->comm);
  T->run(c, st);
  const char *corrupt = getenv("SCOPE_TEST_CORRUPT");
  if (corrupt && atoi(corrupt) == c->rank && c->rbuf_bytes > 0)
    c->rbuf[c->size ? c->size / 2 : c->rbuf_bytes / 2] ^= 0x5a; /* test hook: proves a bad byte is caught */
  size_t first = 0;
  unsigned long long bad = T->verify ? T->verify(c, st, seed, &first) : 0, total = 0;
  MPI_Allreduce(&bad, &total, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, c->comm);
  unsigned long long f = bad ? first : ~0ull, fmin;
  MPI_Allreduce(&f, &fmin, 1, MPI_UNSIGNED_LONG_LONG, MPI_MIN, c->comm);
  *first_bad = (size_t)fmin;
  return (size_t)total;
}

static void record_head(const char *type, const scope_test *T, const scope_ctx *c, long index, long npoints) {
  jw_obj_begin(&g_w);
  jw_kstr(&g_w, "type", type);
  jw_kstr(&g_w, "test", T->name);
  jw_kint(&g_w, "index", index);
  jw_kint(&g_w, "points", npoints);
  if (c)
    write_params(T, c);
}

/* skip and error records: the same shape, a different type and text field. */
static void record_event(const char *type, const char *key, const scope_test *T, const scope_ctx *c, long index,
                         long npoints, const char *text) {
  if (strcmp(type, "skip") == 0)
    g_skips++;
  else
    g_errors++;
  if (g_rank != 0)
    return;
  record_head(type, T, c, index, npoints);
  jw_kstr(&g_w, key, text);
  jw_obj_end(&g_w);
  emit();
}

static void record_skip(const scope_test *T, const scope_ctx *c, long index, long npoints, const char *reason) {
  record_event("skip", "reason", T, c, index, npoints, reason);
}

static void record_error(const scope_test *T, const scope_ctx *c, long index, long npoints, const char *message) {
  record_event("error", "message", T, c, index, npoints, message);
}

static void quantiles_obj(const char *key, double *x, size_t n, double scale) {
  jw_key(&g_w, key);
  jw_obj_begin(&g_w);
  if (n) {
    stats_sort(x, n);
    jw_knum(&g_w, "median", stats_quantile_sorted(x, n, 0.5) * scale);
    jw_knum(&g_w, "p95", stats_quantile_sorted(x, n, 0.95) * scale);
    jw_knum(&g_w, "max", x[n - 1] * scale);
  }
  jw_obj_end(&g_w);
}

/* Window/barrier timing: validity, skews and per-rank times (us). */
static void record_window(const windowed *W) {
  size_t n = W->nrep;
  jw_kstr(&g_w, "timing", W->barrier ? "barrier" : "window");
  jw_key(&g_w, "window");
  jw_obj_begin(&g_w);
  jw_knum(&g_w, "window_us", W->barrier ? NAN : W->window_ns * 1e-3);
  jw_kint(&g_w, "repetitions", W->total);
  jw_kint(&g_w, "invalid", W->invalid);
  jw_knum(&g_w, "sync_error_ns", W->barrier ? NAN : W->sync_error_ns);
  jw_obj_end(&g_w);
  double *arr = malloc(sizeof(double) * (n ? n : 1)), *ex = malloc(sizeof(double) * (n ? n : 1));
  for (size_t i = 0; i < n; i++) {
    double smin = INFINITY, smax = -INFINITY, emin = INFINITY, emax = -INFINITY;
    for (int r = 0; r < W->nranks; r++) {
      double a = W->start[(size_t)r * WINDOW_KEEP + i], b = W->end[(size_t)r * WINDOW_KEEP + i];
      smin = fmin(smin, a), smax = fmax(smax, a), emin = fmin(emin, b), emax = fmax(emax, b);
    }
    arr[i] = smax - smin;
    ex[i] = emax - emin;
  }
  jw_key(&g_w, "skew");
  jw_obj_begin(&g_w);
  if (!W->barrier)
    quantiles_obj("arrival_us", arr, n, 1e-3);
  quantiles_obj("exit_us", ex, n, 1e-3);
  jw_obj_end(&g_w);
  jw_key(&g_w, "per_rank");
  jw_obj_begin(&g_w);
  jw_key(&g_w, "own_us_median");
  jw_arr_begin(&g_w);
  for (int r = 0; r < W->nranks; r++) {
    for (size_t i = 0; i < n; i++)
      arr[i] = W->end[(size_t)r * WINDOW_KEEP + i] - W->start[(size_t)r * WINDOW_KEEP + i];
    stats_sort(arr, n);
    jw_num(&g_w, n ? stats_quantile_sorted(arr, n, 0.5) * 1e-3 : NAN);
  }
  jw_arr_end(&g_w);
  const char *names[2] = {"start_us", "end_us"};
  for (int which = 0; which < 2; which++) {
    const double *src = which ? W->end : W->start;
    jw_key(&g_w, names[which]);
    jw_arr_begin(&g_w);
    for (int r = 0; r < W->nranks; r++) {
      jw_arr_begin(&g_w);
      for (size_t i = 0; i < n; i++)
        jw_num(&g_w, src[(size_t)r * WINDOW_KEEP + i] * 1e-3);
      jw_arr_end(&g_w);
    }
    jw_arr_end(&g_w);
  }
  jw_obj_end(&g_w);
  free(arr);
  free(ex);
}

static void record_point(const options *o, const scope_test *T, const scope_ctx *c, const bufset *B, long index,
                         long npoints, measured *m, double seconds, int validated) {
  g_points++;
  if (g_rank != 0)
    return;
  const rep_state *r = &m->rs;
  const stats_summary *s = &r->summary;
  double k = 1e-3 / c->ops_per_iter; /* ns per iteration -> us per reported operation */
  record_head("point", T, c, index, npoints);
  jw_kstr(&g_w, "measures", T->measures);
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
  jw_knum(&g_w, "seconds", seconds);
  jw_kint(&g_w, "validated", validated);
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
  jw_kint(&g_w, "slots", (long long)B->nslots);
  jw_kint(&g_w, "send_bytes", (long long)c->sbuf_bytes);
  jw_kint(&g_w, "recv_bytes", (long long)c->rbuf_bytes);
  jw_obj_end(&g_w);
  jw_key(&g_w, "stats");
  jw_obj_begin(&g_w);
  jw_knum(&g_w, "min", s->min * k);
  jw_knum(&g_w, "median", s->median * k);
  jw_knum(&g_w, "mean", s->mean * k);
  jw_knum(&g_w, "sd", s->sd * k);
  jw_knum(&g_w, "max", s->max * k);
  jw_knum(&g_w, "p5", s->p5 * k);
  jw_knum(&g_w, "p25", s->p25 * k);
  jw_knum(&g_w, "p75", s->p75 * k);
  jw_knum(&g_w, "p95", s->p95 * k);
  jw_knum(&g_w, "p99", s->p99 * k);
  jw_knum(&g_w, "ci_lo", s->ci_lo * k);
  jw_knum(&g_w, "ci_hi", s->ci_hi * k);
  jw_knum(&g_w, "ci_rel", s->ci_rel);
  jw_obj_end(&g_w);
  /* bytes per microsecond is MB/s (10^6 bytes/s) */
  jw_key(&g_w, "bandwidth_MBps");
  jw_obj_begin(&g_w);
  jw_knum(&g_w, "median", c->bytes_per_op / (s->median * k));
  jw_knum(&g_w, "ci_lo", c->bytes_per_op / (s->ci_hi * k));
  jw_knum(&g_w, "ci_hi", c->bytes_per_op / (s->ci_lo * k));
  jw_knum(&g_w, "max", c->bytes_per_op / (s->min * k));
  jw_obj_end(&g_w);
  if (m->w.active)
    record_window(&m->w);
  if (o->samples) {
    jw_key(&g_w, "samples");
    jw_arr_begin(&g_w);
    for (size_t i = 0; i < r->n; i++)
      jw_num(&g_w, r->samples[i] * k);
    jw_arr_end(&g_w);
  }
  jw_obj_end(&g_w);
  emit();
}

/* Test hook: SCOPE_TEST_KILL=RANK:POINTS kills that rank after that many points, so the
 * front end's handling of a rank that dies can be tested for real. */
static void maybe_die(void) {
  const char *spec = getenv("SCOPE_TEST_KILL");
  int rank, after;
  if (spec && sscanf(spec, "%d:%d", &rank, &after) == 2 && rank == g_rank && g_points >= after)
    raise(SIGKILL);
}

static void run_point(const options *o, const scope_test *T, const scope_ctx *base, MPI_Comm comm, long si,
                      const unsigned long long *sizes, double timer_cost, uint64_t seed, long index, long npoints);
static void sync_clock(const options *o);

/* Re-synchronise when the clock's own predicted error has grown past the bound (world-collective). */
static void maybe_resync(const options *o) {
  double err = gclock_predicted_error_ns(gclock_now_global()), worst;
  MPI_Allreduce(&err, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  if (worst > o->sync_bound_ns)
    sync_clock(o);
}

static void run_test(const options *o, const scope_test *T, const test_values *tv, const unsigned long long *sizes,
                     long nsizes, double timer_cost, uint64_t seed, long *index, long npoints) {
  long nsz = T->sized ? nsizes : 1;
  long ncomb = combos(T, tv);
  scope_ctx base = {0};
  base.comm = MPI_COMM_WORLD;
  base.rank = g_rank;
  base.nranks = g_nranks;
  base.node = g_node;
  if (tv->rejected[0]) {
    char why[320];
    snprintf(why, sizeof why, "not supported by this test: %s", tv->rejected);
    record_skip(T, NULL, *index, npoints, why);
  }
  if (g_nranks < T->min_ranks) {
    char why[128];
    snprintf(why, sizeof why, "needs at least %d ranks, this run has %d", T->min_ranks, g_nranks);
    record_skip(T, NULL, *index, npoints, why);
    *index += ncomb * nsz;
    return;
  }
  int procs[64], nprocs = procs_list(o->procs, T, procs);
  for (long comb = 0; comb < ncomb; comb++) {
    long rest = comb;
    for (int k = 0; k < T->nparams; k++) {
      base.p[k] = tv->v[k][rest % tv->n[k]];
      rest /= tv->n[k];
    }
    for (int pi = 0; pi < nprocs; pi++) {
      /* A sub-communicator of ranks 0 .. p-1; the others sit this point out. */
      MPI_Comm sub = MPI_COMM_WORLD;
      if (procs[pi] != g_nranks)
        MPI_Comm_split(MPI_COMM_WORLD, g_rank < procs[pi] ? 0 : MPI_UNDEFINED, g_rank, &sub);
      for (long si = 0; si < nsz; si++, (*index)++) {
        if (T->timing == SCOPE_TIMING_WINDOW && !o->barrier_timing)
          maybe_resync(o);
        if (sub == MPI_COMM_NULL) {
          MPI_Barrier(MPI_COMM_WORLD);
          continue;
        }
        run_point(o, T, &base, sub, si, sizes, timer_cost, seed, *index, npoints);
        MPI_Barrier(MPI_COMM_WORLD);
        maybe_die();
      }
      if (sub != MPI_COMM_WORLD && sub != MPI_COMM_NULL)
        MPI_Comm_free(&sub);
    }
  }
}

/* One point: setup, buffers, validate, measure, validate, record, teardown. */
static void run_point(const options *o, const scope_test *T, const scope_ctx *base, MPI_Comm comm, long si,
                      const unsigned long long *sizes, double timer_cost, uint64_t seed, long index, long npoints) {
  scope_ctx c = *base;
  c.comm = comm;
  MPI_Comm_rank(comm, &c.rank);
  MPI_Comm_size(comm, &c.nranks);
  c.size = T->sized ? (size_t)sizes[si] : 0;
  c.sbuf_bytes = c.rbuf_bytes = c.size;
  c.ops_per_iter = 1;
  c.bytes_per_op = (double)c.size;
  void *st = NULL;
  double t_start = wall_s();
  int rc = T->setup(&c, &st), any_fail = 0, any_skip = 0, skip = c.skip != NULL;
  MPI_Allreduce(&rc, &any_fail, 1, MPI_INT, MPI_LOR, c.comm);
  MPI_Allreduce(&skip, &any_skip, 1, MPI_INT, MPI_LOR, c.comm);
  if (any_fail || any_skip) {
    if (any_fail)
      record_error(T, &c, index, npoints, "test setup failed (out of memory?)");
    else
      record_skip(T, &c, index, npoints, c.skip ? c.skip : "skipped by the test on another rank");
    if (!rc && T->teardown)
      T->teardown(&c, st);
    return;
  }
  bufset B;
  int bad_alloc = buffers_alloc(&B, &c, o->offcache, seed) != 0, any_bad = 0;
  MPI_Allreduce(&bad_alloc, &any_bad, 1, MPI_INT, MPI_LOR, c.comm);
  if (any_bad) {
    char msg[160];
    snprintf(msg, sizeof msg, "cannot allocate buffers (%zu + %zu bytes per slot)", c.sbuf_bytes, c.rbuf_bytes);
    record_error(T, &c, index, npoints, msg);
    if (!bad_alloc) {
      free(B.s);
      free(B.r);
    }
    if (T->teardown)
      T->teardown(&c, st);
    return;
  }
  buffers_slot(&B, &c, 0);
  if (T->start)
    T->start(&c, st);
  MPI_Barrier(c.comm);

  size_t first = 0, bad = validate(T, &c, st, &B, seed ^ (uint64_t)(2 * index + 1), &first);
  measured m = {0};
  int validated = 1;
  if (!bad) {
    if (T->timing == SCOPE_TIMING_WINDOW) {
      double err = o->barrier_timing ? 0 : gclock_predicted_error_ns(gclock_now_global()), maxerr;
      MPI_Allreduce(&err, &maxerr, 1, MPI_DOUBLE, MPI_MAX, c.comm);
      measure_window(o, T, &c, st, &B, timer_cost, maxerr, &m);
    } else {
      measure(o, T, &c, st, &B, timer_cost, &m);
    }
    bad = validate(T, &c, st, &B, seed ^ (uint64_t)(2 * index + 2), &first);
    validated = 2;
  }
  if (bad) {
    char msg[200];
    snprintf(msg, sizeof msg, "data check failed %s measuring: %zu bad bytes summed over ranks, first at offset %zu",
             validated == 1 ? "before" : "after", bad, first);
    record_error(T, &c, index, npoints, msg);
  } else {
    record_point(o, T, &c, &B, index, npoints, &m, wall_s() - t_start, validated);
  }
  rep_free(&m.rs);
  free(m.w.start);
  free(m.w.end);
  if (T->teardown)
    T->teardown(&c, st);
  free(B.s);
  free(B.r);
}

/* ---------------------------------------------------------------- main */

/* Synchronise the global clock and write a `clock` record with its error. */
static void sync_clock(const options *o) {
  gclock_sync(MPI_COMM_WORLD, o->sync_span_s);
  int one_host = 1, write_it = 0;
  for (int r = 0; r < g_nranks; r++)
    one_host &= g_node[r] == g_node[0];
  /* namespaces on one host still share the counter; different hosts need not */
  gclock_record(MPI_COMM_WORLD, &g_w, one_host, &write_it);
  if (write_it)
    emit();
  else
    jw_reset(&g_w);
}

static double mpi_wtime(void) {
  return MPI_Wtime();
}

static void print_timers(const timer_info *ti, timer_kind best) {
  if (g_rank != 0)
    return;
  jw_obj_begin(&g_w);
  jw_kstr(&g_w, "type", "timers");
  jw_kint(&g_w, "schema", SCOPE_SCHEMA_VERSION);
  jw_kstr(&g_w, "best", ti[best].name);
  char lib[MPI_MAX_LIBRARY_VERSION_STRING];
  int len;
  MPI_Get_library_version(lib, &len);
  jw_kstr(&g_w, "mpi_library", lib);
  jw_key(&g_w, "all");
  jw_arr_begin(&g_w);
  for (int k = 0; k < TIMER_FAKE; k++)
    write_timer(&ti[k]);
  jw_arr_end(&g_w);
  jw_obj_end(&g_w);
  emit();
}

int main(int argc, char **argv) {
  options o;
  parse_options(argc, argv, &o);
  if (o.version) {
    printf("scope-engine %s (record schema %d)\n", SCOPE_ENGINE_VERSION, SCOPE_SCHEMA_VERSION);
    return 0;
  }
  if (o.list) {
    list_tests(o.list_json);
    return 0;
  }
  /* Everything the user typed is checked before MPI starts, so a typo costs no launch. */
  static const scope_test *sel[256];
  static test_values tv[256];
  static unsigned long long sizes[SIZES_MAX_COUNT];
  int nsel = 0;
  long nsizes = 0;
  if (!o.timers_only) {
    char err[256];
    nsel = select_tests(o.tests, sel);
    nsizes = sizes_parse(o.sizes, sizes, SIZES_MAX_COUNT, err, sizeof err);
    if (nsizes < 0)
      die_usage("bad --sizes '%s': %s", o.sizes, err);
    resolve_params(&o, sel, nsel, tv);
    if (o.pattern)
      load_pattern(o.pattern);
  }

  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_nranks);
  jw_init(&g_w);
  g_out = stdout;
  int open_fail = 0;
  if (g_rank == 0 && o.output && !(g_out = fopen(o.output, "w"))) {
    fprintf(stderr, "scope-engine: error: cannot write '%s': %s (choose a writable --output)\n", o.output,
            strerror(errno));
    open_fail = 1;
  }
  MPI_Bcast(&open_fail, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (open_fail) {
    MPI_Finalize();
    return 2;
  }

  if (g_pattern_max_rank >= g_nranks) {
    if (g_rank == 0)
      fprintf(stderr, "scope-engine: error: pattern file '%s' names rank %d but the run has %d ranks\n", o.pattern,
              g_pattern_max_rank, g_nranks);
    MPI_Finalize();
    return 2;
  }
  timer_set_wtime(mpi_wtime, MPI_Wtick());
  timer_info ti[TIMER_COUNT];
  timer_probe(ti);
  /* Ranks of one node read the same counter: calibrate it once (the node's first rank) and
   * share the tick, so their clocks agree and a preempted calibration spin cannot make an
   * oversubscribed rank's clock drift against its neighbours'. */
  MPI_Comm node_comm;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node_comm);
  MPI_Bcast(&ti[TIMER_TSC].tick_ns, 1, MPI_DOUBLE, 0, node_comm);
  MPI_Comm_free(&node_comm);
  int chosen = (int)timer_best(ti);
  if (o.timer) {
    chosen = (int)timer_by_name(o.timer);
    if (!ti[chosen].available && g_rank == 0)
      fprintf(stderr, "scope-engine: warning: timer %s is unavailable here (%s); using the best one\n", o.timer,
              ti[chosen].why_unavailable);
    if (!ti[chosen].available)
      chosen = (int)timer_best(ti);
  }
  MPI_Bcast(&chosen, 1, MPI_INT, 0, MPI_COMM_WORLD);
  int have = ti[chosen].available, all_have;
  MPI_Allreduce(&have, &all_have, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
  if (!all_have)
    chosen = TIMER_CLOCK; /* heterogeneous nodes: fall back to what every rank has */
  timer_select((timer_kind)chosen, ti[chosen].tick_ns);

  if (o.timers_only) {
    print_timers(ti, (timer_kind)chosen);
    jw_free(&g_w);
    MPI_Finalize();
    return 0;
  }

  unsigned long long seed = o.seed_set ? o.seed : ((unsigned long long)time(NULL) << 20) ^ (unsigned long long)getpid();
  MPI_Bcast(&seed, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);

  double t0 = wall_s();
  int over = write_context(&o, ti, (timer_kind)chosen, seed, sizes, nsizes, sel, nsel);
  if (over) {
    warning("oversubscribed",
            "more ranks than cores on a host: ranks share cores, so timings do not represent the hardware",
            "run at most one rank per core for measurements you mean to keep");
    const char *thr = getenv("MPIR_CVAR_CH4_PROGRESS_THROTTLE");
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len;
    MPI_Get_library_version(lib, &len);
    if (strstr(lib, "MPICH") && (!thr || strcmp(thr, "1") != 0))
      warning("busy_polling",
              "oversubscribed without MPICH's progress throttle: busy-polling ranks steal each other's cores",
              "set MPIR_CVAR_CH4_PROGRESS_THROTTLE=1 and MPIR_CVAR_CH4_PROGRESS_THROTTLE_NO_PROGRESS_COUNT=16 (scope "
              "run does)");
  }
  if (!ti[TIMER_TSC].available && g_rank == 0)
    warning("timer", ti[TIMER_TSC].why_unavailable,
            "results use a slower clock; batches are timed where an operation is short");

  /* A sample is off by at most one resolution step plus the read cost it carries; for a
   * fine-grained counter the smallest observed step *is* the read-to-read time, so the two
   * are the same cost and must not be added. */
  gclock_init(g_rank);
  int any_window = 0;
  for (int t = 0; t < nsel; t++)
    any_window |= sel[t]->timing == SCOPE_TIMING_WINDOW;
  if (over && any_window && !o.barrier_timing) {
    /* Ranks sharing cores are descheduled at random: agreed start times cannot be kept. */
    o.barrier_timing = 1;
    warning("timing", "oversubscribed: collectives are timed after a barrier, not in windows on a global clock",
            "run at most one rank per core for window timing");
  }
  int need_clock = 0;
  for (int t = 0; t < nsel; t++)
    need_clock |= sel[t]->timing == SCOPE_TIMING_WINDOW && !o.barrier_timing;
  if (need_clock)
    sync_clock(&o);

  double timer_cost = fmax(ti[chosen].overhead_ns, isnan(ti[chosen].resolution_ns) ? 0 : ti[chosen].resolution_ns);

  /* The plan lets the front end show progress and estimate the time left. */
  long total = 0;
  if (g_rank == 0) {
    jw_obj_begin(&g_w);
    jw_kstr(&g_w, "type", "plan");
    jw_key(&g_w, "tests");
    jw_arr_begin(&g_w);
  }
  for (int t = 0; t < nsel; t++) {
    int pl[64];
    long n = combos(sel[t], &tv[t]) * (sel[t]->sized ? nsizes : 1) * procs_list(o.procs, sel[t], pl);
    total += n;
    if (g_rank == 0) {
      jw_obj_begin(&g_w);
      jw_kstr(&g_w, "test", sel[t]->name);
      jw_kint(&g_w, "points", n);
      jw_obj_end(&g_w);
    }
  }
  if (g_rank == 0) {
    jw_arr_end(&g_w);
    jw_kint(&g_w, "points", total);
    jw_knum(&g_w, "budget_s", o.rep.budget_s);
    jw_obj_end(&g_w);
    emit();
  }

  long index = 0;
  for (int t = 0; t < nsel; t++)
    run_test(&o, sel[t], &tv[t], sizes, nsizes, timer_cost, seed, &index, total);

  if (g_rank == 0) {
    jw_obj_begin(&g_w);
    jw_kstr(&g_w, "type", "end");
    jw_kstr(&g_w, "status", g_errors ? "errors" : "ok");
    jw_kint(&g_w, "points", g_points);
    jw_kint(&g_w, "errors", g_errors);
    jw_kint(&g_w, "skips", g_skips);
    jw_knum(&g_w, "seconds", wall_s() - t0);
    jw_obj_end(&g_w);
    emit();
    if (g_out != stdout)
      fclose(g_out);
  }
  jw_free(&g_w);
  MPI_Finalize();
  return g_errors ? 1 : 0;
}
