/* Resolution of what the user asked for (see select.h).  Errors here are usage errors:
 * one line, exit 2, before MPI starts. */
#include "select.h"

#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "core/sizes.h"
#include "options.h"

static void valid_names(char *buf, size_t len) {
  buf[0] = 0;
  for (int i = 0; scope_registry[i]; i++) {
    strncat(buf, i ? ", " : "", len - strlen(buf) - 1);
    strncat(buf, scope_registry[i]->name, len - strlen(buf) - 1);
  }
}

int sel_tests(const char *spec, const scope_test **sel) {
  int nsel = 0;
  char chosen[SEL_MAX_TESTS] = {0};
  char *copy = strdup(spec), *save = NULL;
  for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    while (*tok == ' ')
      tok++;
    int hit = 0;
    for (int i = 0; scope_registry[i] && i < SEL_MAX_TESTS; i++)
      if (fnmatch(tok, scope_registry[i]->name, 0) == 0)
        chosen[i] = hit = 1;
    if (!hit) {
      char names[2048];
      valid_names(names, sizeof names);
      opt_die("unknown test '%s' (valid: %s)", tok, names);
    }
  }
  free(copy);
  for (int i = 0; scope_registry[i] && i < SEL_MAX_TESTS; i++)
    if (chosen[i])
      sel[nsel++] = scope_registry[i];
  return nsel;
}

static int parse_value(const scope_param *p, const char *s, long *out) {
  if (p->type == SP_BYTES) { /* one size as --sizes writes it: 512M, 64K, 4096 */
    unsigned long long v;
    char err[128];
    if (sizes_parse_one(s, (unsigned long long)p->max, &v, err, sizeof err) || v < (unsigned long long)p->min)
      return -1;
    *out = (long)v;
    return 0;
  }
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

void sel_describe_domain(const scope_param *p, char *buf, size_t len) {
  if (p->type == SP_BYTES) {
    snprintf(buf, len, "a size in bytes from %ld to %ld (K, M, G binary: 512M)", p->min, p->max);
  } else if (p->type == SP_INT) {
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

/* Another selected test accepts name=value: then only `self` skips it. */
static int accepted_elsewhere(const scope_test **sel, int nsel, int self, const char *name, const char *value) {
  for (int u = 0; u < nsel; u++)
    for (int j = 0; j < sel[u]->nparams; j++) {
      long dummy;
      if (u != self && strcmp(sel[u]->params[j].name, name) == 0 && parse_value(&sel[u]->params[j], value, &dummy) == 0)
        return 1;
    }
  return 0;
}

/* The values of one assignment for parameter k of test t. */
static void take_values(const scope_test **sel, int nsel, int t, int k, const char *values, test_values *tv) {
  const scope_param *p = &sel[t]->params[k];
  size_t len = strlen(values);
  /* an empty value (NAME=, a,,b, a trailing comma) is an error, never silently dropped */
  if (!len || values[0] == ',' || values[len - 1] == ',' || strstr(values, ",,"))
    opt_die("parameter %s=%s has an empty value: write the values between commas, e.g. %s=%s", p->name, values, p->name,
            p->def);
  char *copy = strdup(values), *save = NULL;
  for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    long v;
    if (parse_value(p, tok, &v) == 0) {
      if (tv->n[k] == SEL_MAX_VALUES)
        opt_die("at most %d values for parameter '%s'", SEL_MAX_VALUES, p->name);
      tv->v[k][tv->n[k]++] = v;
      continue;
    }
    if (!accepted_elsewhere(sel, nsel, t, p->name, tok)) {
      char dom[256];
      sel_describe_domain(p, dom, sizeof dom);
      opt_die("parameter %s=%s is not valid for %s: expected %s", p->name, tok, sel[t]->name, dom);
    }
    size_t l = strlen(tv->rejected);
    snprintf(tv->rejected + l, sizeof tv->rejected - l, "%s%s=%s", l ? ", " : "", p->name, tok);
  }
  free(copy);
}

void sel_params(const char *const *assign, int nassign, const scope_test **sel, int nsel, test_values *tv) {
  char names[OPT_LIST_MAX][64];
  for (int a = 0; a < nassign; a++) {
    const char *eq = strchr(assign[a], '=');
    if (!eq || eq == assign[a] || !eq[1] || (size_t)(eq - assign[a]) >= sizeof names[0])
      opt_die("--param expects NAME=VALUE[,VALUE...], got '%s'", assign[a]);
    snprintf(names[a], sizeof names[a], "%.*s", (int)(eq - assign[a]), assign[a]);
    int known = 0;
    for (int t = 0; t < nsel; t++)
      for (int k = 0; k < sel[t]->nparams; k++)
        known |= strcmp(sel[t]->params[k].name, names[a]) == 0;
    if (!known) {
      char list[512] = "";
      size_t len = 0;
      for (int t = 0; t < nsel; t++)
        for (int k = 0; k < sel[t]->nparams; k++) {
          const char *name = sel[t]->params[k].name;
          int again = 0; /* each name once, in the order the tests have them */
          for (int u = 0; u <= t && !again; u++)
            for (int j = 0; j < (u < t ? sel[u]->nparams : k) && !again; j++)
              again = strcmp(sel[u]->params[j].name, name) == 0;
          if (!again && len < sizeof list)
            len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", len ? ", " : "", name);
        }
      opt_die("no selected test has a parameter '%s' (parameters of the selected tests: %s)", names[a],
              len ? list : "none");
    }
  }
  for (int t = 0; t < nsel; t++) {
    memset(&tv[t], 0, sizeof tv[t]);
    for (int k = 0; k < sel[t]->nparams; k++) {
      const scope_param *p = &sel[t]->params[k];
      int given = -1;
      for (int a = 0; a < nassign; a++)
        if (strcmp(names[a], p->name) == 0)
          given = a;
      if (given >= 0) {
        take_values(sel, nsel, t, k, strchr(assign[given], '=') + 1, &tv[t]);
      } else {
        if (parse_value(p, p->def, &tv[t].v[k][0]))
          opt_die("internal: default '%s' of %s.%s is invalid", p->def, sel[t]->name, p->name);
        tv[t].n[k] = 1;
      }
    }
  }
}

long sel_combos(const scope_test *T, const test_values *tv) {
  long n = 1;
  for (int k = 0; k < T->nparams; k++)
    n *= tv->n[k];
  return n;
}

void sel_combo(const scope_test *T, const test_values *tv, long comb, long *p) {
  for (int k = 0; k < T->nparams; k++) {
    p[k] = tv->v[k][comb % tv->n[k]];
    comb /= tv->n[k];
  }
}

int sel_procs(const char *spec, const scope_test *T, int nranks, int *out, int max_out) {
  int n = 0;
  if (!SCOPE_WINDOWED(T) || strcmp(spec, "all") == 0) {
    out[n++] = nranks;
    return n;
  }
  if (strcmp(spec, "pow2") == 0) {
    for (int p = 2; p < nranks && n < max_out - 1; p *= 2)
      if (p >= T->min_ranks)
        out[n++] = p;
    out[n++] = nranks;
    return n;
  }
  char *copy = strdup(spec), *save = NULL;
  for (char *tok = strtok_r(copy, ",", &save); tok && n < max_out; tok = strtok_r(NULL, ",", &save)) {
    int p = strcmp(tok, "all") == 0 ? nranks : atoi(tok), again = 0;
    for (int i = 0; i < n; i++)
      again |= out[i] == p;
    if (p >= T->min_ranks && p <= nranks && !again)
      out[n++] = p;
  }
  free(copy);
  return n;
}

/* Whether n bytes are UTF-8 text without NUL (a pattern file is text; anything else is named as
 * not text, never parsed as numbers). */
static int is_text(const char *s, size_t n) {
  const unsigned char *u = (const unsigned char *)s;
  for (size_t i = 0; i < n;) {
    size_t more = u[i] < 0x80 ? 0 : (u[i] >> 5) == 6 ? 1 : (u[i] >> 4) == 14 ? 2 : (u[i] >> 3) == 30 ? 3 : 9;
    if (!u[i] || more == 9 || i + more >= n)
      return 0;
    for (size_t k = 1; k <= more; k++)
      if ((u[i + k] >> 6) != 2)
        return 0;
    i += more + 1;
  }
  return 1;
}

/* Lines "SRC DST SIZE" (size with K/M/G); '#' starts a comment.  An error names the line,
 * never quotes it: the file may be anything the user pointed at. */
/* 4096 messages of a few dozen bytes a line: a file past this is not a pattern. */
#define PATTERN_MAX_BYTES (1L << 20)

int sel_pattern(const char *path) {
  /* Checked before it is opened: a device (/dev/zero) would be read for ever, a pipe would block
   * the run before it starts. */
  struct stat st;
  if (stat(path, &st) != 0)
    opt_die("cannot read pattern file '%s'", path);
  if (!S_ISREG(st.st_mode))
    opt_die("pattern file '%s' is not a regular file (a device, a pipe or a directory): give a file of "
            "'SOURCE DESTINATION SIZE' lines",
            path);
  if (st.st_size > PATTERN_MAX_BYTES)
    opt_die("pattern file '%s' is larger than 1 MiB (%lld bytes): a pattern holds at most 4096 messages", path,
            (long long)st.st_size);
  FILE *f = fopen(path, "r");
  if (!f)
    opt_die("cannot read pattern file '%s'", path);
  static scope_msg msgs[4096];
  char *line = NULL;
  size_t cap = 0;
  ssize_t len;
  int n = 0, lineno = 0, max_rank = -1;
  while ((len = getline(&line, &cap, f)) >= 0) {
    lineno++;
    if (!is_text(line, (size_t)len))
      opt_die("pattern file '%s' is not text (line %d): give a file of 'SOURCE DESTINATION SIZE' lines", path, lineno);
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
      opt_die("%s line %d: expected 'SOURCE DESTINATION SIZE' (ranks >= 0, e.g. '0 1 64K')", path, lineno);
    if (sizes_parse(sz, bytes, 1, err, sizeof err) != 1)
      opt_die("%s line %d: the size is not a byte count (sizes like 64, 8K, 1M)", path, lineno);
    if (src == dst)
      opt_die("%s line %d: rank %ld sends to itself (a message needs two ranks)", path, lineno, src);
    if (n == 4096)
      opt_die("%s: more than 4096 messages", path);
    msgs[n++] = (scope_msg){(int)src, (int)dst, (size_t)bytes[0]};
    max_rank = (int)(src > max_rank ? src : max_rank);
    max_rank = (int)(dst > max_rank ? dst : max_rank);
  }
  free(line);
  fclose(f);
  if (!n)
    opt_die("pattern file '%s' has no messages (one 'SOURCE DESTINATION SIZE' a line)", path);
  scope_pattern = msgs;
  scope_pattern_len = n;
  return max_rank;
}

#define TEST_SIZES_MAX 16

void sel_test_sizes(const char *const *items, int nitems, const scope_test **sel, int nsel, test_values *tv,
                    const unsigned long long *sizes, long nsizes) {
  static unsigned long long own[TEST_SIZES_MAX][SIZES_MAX_COUNT];
  for (int t = 0; t < nsel; t++) {
    tv[t].sizes = sizes;
    tv[t].nsizes = nsizes;
    if (sel[t]->sizes && !opt_given(OPT_SIZES)) { /* the test's own default (kept for the run) */
      unsigned long long *mine = malloc(SIZES_MAX_COUNT * sizeof *mine);
      char err[256];
      long n = mine ? sizes_parse(sel[t]->sizes, mine, SIZES_MAX_COUNT, err, sizeof err) : -1;
      if (n < 1)
        opt_die("internal: the default sizes '%s' of %s do not parse", sel[t]->sizes, sel[t]->name);
      tv[t].sizes = mine;
      tv[t].nsizes = n;
    }
  }
  if (nitems > TEST_SIZES_MAX)
    opt_die("at most %d --test-sizes items, got %d", TEST_SIZES_MAX, nitems);
  for (int i = 0; i < nitems; i++) {
    const char *eq = strchr(items[i], '=');
    char glob[128], err[256];
    if (!eq || eq == items[i] || (size_t)(eq - items[i]) >= sizeof glob)
      opt_die("--test-sizes expects TESTS=SIZES (e.g. 'io.*=1M'), got '%s'", items[i]);
    snprintf(glob, sizeof glob, "%.*s", (int)(eq - items[i]), items[i]);
    long n = sizes_parse(eq + 1, own[i], SIZES_MAX_COUNT, err, sizeof err);
    if (n < 0)
      opt_die("bad --test-sizes '%s': %s", items[i], err);
    int matched = 0;
    for (int t = 0; t < nsel; t++)
      if (fnmatch(glob, sel[t]->name, 0) == 0) {
        tv[t].sizes = own[i];
        tv[t].nsizes = n;
        matched = 1;
      }
    if (!matched)
      opt_die("--test-sizes '%s' matches no selected test", items[i]);
  }
}
