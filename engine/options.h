/* The engine's options: one table (options.c), one entry per option.  The table drives the
 * command-line parser, --help, validation, the `settings` of the context record, and the
 * `option` records of `--list --json`, which the front end reads to build and check its own
 * `scope run` options.  An option is added by adding one entry; nothing else repeats it.
 *
 * MPI-free: parsed before MPI_Init, so a typo costs no launch, and unit-tested with plain cc. */
#ifndef SCOPE_OPTIONS_H
#define SCOPE_OPTIONS_H
#include <stddef.h>

#include "core/json.h"

typedef enum {
  OPT_FLAG,   /* present or not */
  OPT_INT,    /* whole number in [min, max] */
  OPT_REAL,   /* number in [min, max] */
  OPT_TEXT,   /* free text, checked elsewhere (sizes, test names) */
  OPT_PATH,   /* a file: the front end passes it absolute, since the engine may run elsewhere */
  OPT_CHOICE, /* one of choices */
  OPT_COUNTS, /* "all", "pow2" or a comma list of whole numbers >= 1 */
  OPT_LIST,   /* repeatable text */
  OPT_ACTION, /* do something else and exit (--list, --help ...) */
} opt_kind;

/* Indices into the table: the table is initialised by these names, so an entry cannot
 * drift from its index. */
typedef enum {
  OPT_NONE, /* index 0 is no option: "not_above = none" by default */
  OPT_TESTS,
  OPT_SIZES,
  OPT_PARAM,
  OPT_PRECISION,
  OPT_BUDGET,
  OPT_MIN_COUNT,
  OPT_MAX_COUNT,
  OPT_WARMUP_MAX,
  OPT_MIN_TIME,
  OPT_ORDER,
  OPT_LAUNCH,
  OPT_EARLIER_LAUNCHES,
  OPT_OFFCACHE,
  OPT_TIMER,
  OPT_SEED,
  OPT_OUTPUT,
  OPT_NO_SAMPLES,
  OPT_NO_CANARY,
  OPT_TIMING,
  OPT_LOOP,
  OPT_THREAD_LEVEL,
  OPT_PROCS,
  OPT_SYNC_SPAN,
  OPT_SYNC_BOUND,
  OPT_CLOCK,
  OPT_CLOCK_DOMAIN,
  OPT_WARM,
  OPT_PATTERN,
  OPT_IO_DIR,
  OPT_TEST_SIZES,
  OPT_LIST_TESTS,
  OPT_PLAN,
  OPT_JSON,
  OPT_TIMERS,
  OPT_CVARS,
  OPT_VERSION,
  OPT_HELP,
  OPT_COUNT
} opt_id;

typedef struct {
  const char *name; /* --name */
  opt_kind kind;
  const char *def; /* default as the user would type it; NULL: none */
  double min, max; /* OPT_INT, OPT_REAL: accepted range, inclusive */
  const char *const *choices;
  const char *setting; /* key in the context record's settings; NULL: not recorded there */
  int inverted;        /* a flag that records its setting as false when given (--no-samples) */
  int run;             /* `scope run` offers it under the same name */
  char alias;          /* short form the front end offers, or 0 */
  opt_id not_above;    /* must not exceed that option (min-count <= max-count); OPT_NONE: none */
  const char *help;
} opt_spec;

#define OPT_LIST_MAX 16

typedef struct {
  int given;
  double num; /* OPT_INT, OPT_REAL */
  const char *text;
  int index; /* OPT_CHOICE: index into choices */
  const char *list[OPT_LIST_MAX];
  int nlist;
} opt_value;

extern const opt_spec opt_table[OPT_COUNT];

/* Parses argv into the values (defaults first); on a bad option calls opt_die. */
void opt_parse(int argc, char **argv);
/* Checks one option's text against its entry; 0, or -1 with the reason in err. */
int opt_check(opt_id id, const char *text, opt_value *out, char *err, size_t errlen);

const opt_value *opt_get(opt_id id);
double opt_num(opt_id id);
const char *opt_text(opt_id id);
int opt_given(opt_id id);

void opt_usage(void);
/* `option` records (one per entry) for --list --json. */
void opt_publish(json_w *w, void (*emit)(json_w *));
/* The recorded settings of this run, as keys of the object being written. */
void opt_write_settings(json_w *w);
/* Every option `scope run` offers that has a value (given or default), by option name, as
 * keys of the object being written: the values the engine parsed, for the front end's plan. */
void opt_write_values(json_w *w);

/* An argument error before MPI is up: one line from one rank, exit 2. */
void opt_die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

extern const char *const opt_thread_levels[];
extern const char *const opt_clock_methods[];

#endif
