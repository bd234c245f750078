/* The global clock's arithmetic (see clockmodel.h). */
#include "clockmodel.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

cm_map cm_identity(double g0) {
  cm_map m = {0, 0, g0, 0, 0};
  return m;
}

/* A least-squares line through the kept points. */
typedef struct {
  double xm, om; /* the centre */
  double b;      /* the slope */
  double resid;  /* the residuals' scatter (n - 2 degrees of freedom) */
  double sxx;    /* the points' spread in time */
  int used;      /* points kept */
} fitted_line;

static fitted_line line(const double *x, const double *o, const char *keep, int n) {
  fitted_line f = {0};
  double sx = 0, so = 0, sxo = 0;
  for (int i = 0; i < n; i++)
    if (keep[i]) {
      sx += x[i];
      so += o[i];
      f.used++;
    }
  f.xm = sx / f.used;
  f.om = so / f.used;
  for (int i = 0; i < n; i++)
    if (keep[i]) {
      f.sxx += (x[i] - f.xm) * (x[i] - f.xm);
      sxo += (x[i] - f.xm) * (o[i] - f.om);
    }
  f.b = f.sxx > 0 ? sxo / f.sxx : 0;
  double ss = 0;
  for (int i = 0; i < n; i++)
    if (keep[i]) {
      double r = o[i] - (f.om + f.b * (x[i] - f.xm));
      ss += r * r;
    }
  f.resid = f.used > 2 ? sqrt(ss / (f.used - 2)) : 0;
  return f;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int cm_fit(const double *x, const double *o, const double *h, int n, cm_map *edge) {
  enum { MAX = 64 };
  if (n < 3 || n > MAX)
    return -1;
  char keep[MAX];
  memset(keep, 1, sizeof keep);
  double r[MAX];
  fitted_line f = line(x, o, keep, n);
  /* One pass of rejection: an exchange whose two directions were delayed unequally by a
   * preempted rank (a VM's hiccup) lies far off the line, and one such batch once turned a
   * drift of 0 into 46 ppm.  Off by more than 3.5 robust standard deviations (1.4826 MAD) of
   * the residuals, a batch is left out (at most a quarter of them); the bound is computed
   * from those kept. */
  for (int i = 0; i < n; i++)
    r[i] = fabs(o[i] - (f.om + f.b * (x[i] - f.xm)));
  double sorted[MAX];
  memcpy(sorted, r, sizeof(double) * (size_t)n);
  qsort(sorted, (size_t)n, sizeof(double), cmp_double);
  double cut = CM_Z * 1.4826 * sorted[n / 2], most = sorted[n - 1 - n / 4];
  int dropped = 0;
  for (int i = 0; i < n; i++)
    if (cut > 0 && r[i] > cut && r[i] >= most && dropped < n / 4 && n - dropped > 3) {
      keep[i] = 0;
      dropped++;
    }
  double hm = 0;
  if (dropped)
    f = line(x, o, keep, n);
  for (int i = 0; i < n; i++)
    if (keep[i])
      hm += h[i];
  hm /= f.used;
  edge->a = f.om;
  edge->b = f.b;
  edge->g0 = f.xm;
  edge->e0 = hm + CM_Z * f.resid / sqrt((double)f.used);
  /* no spread in time: the drift is unknown, and the bound says so by growing without limit */
  edge->k = f.sxx > 0 ? CM_Z * f.resid / sqrt(f.sxx) : INFINITY;
  return 0;
}

cm_map cm_refit(const cm_map *prev, const cm_map *now) {
  double span = now->g0 - prev->g0;
  if (!(span > 0))
    return *now;
  cm_map m = *now;
  m.b = (now->a - prev->a) / span;
  m.k = (prev->e0 + now->e0) / span;
  return m;
}

/* Parent: L_p = G + A + B (G - G0).  Edge: L_c = x + a + b (x - g0) at the parent's time x = L_p.
 * Substituting gives a line in G through G0 (the parent's centre):
 *   L_c - G = A + a + b (G0 + A - g0) + (B + b (1 + B)) (G - G0).
 * The edge's bound is e0 + k |x - g0| with |x - g0| <= (1 + B) |G - G0| + |G0 + A - g0|. */
cm_map cm_compose(const cm_map *p, const cm_map *e) {
  double shift = p->g0 + p->a - e->g0;
  cm_map c;
  c.g0 = p->g0;
  c.a = p->a + e->a + e->b * shift;
  c.b = p->b + e->b * (1 + p->b);
  c.e0 = p->e0 + e->e0 + e->k * fabs(shift);
  c.k = p->k + e->k * (1 + p->b);
  return c;
}

double cm_to_local(const cm_map *m, double g) {
  return g + m->a + m->b * (g - m->g0);
}

double cm_to_global(const cm_map *m, double l) {
  return (l - m->a + m->b * m->g0) / (1 + m->b);
}

double cm_bound(const cm_map *m, double g) {
  return m->e0 + m->k * fabs(g - m->g0);
}

/* ------------------------------------------------------------------ schedules */

/* Binomial tree (the shape of Hunold & Carpen-Amarie's HCA2/HCA3): in round r the process i
 * with i mod 2^(r+1) = 0 pairs with i + 2^r, so ceil(log2 n) rounds reach every process and
 * process i's path to 0 clears one set bit of i per edge. */
static int tree_rounds(int n) {
  int r = 0;
  while ((1L << r) < n)
    r++;
  return r;
}

static int tree_partner(int i, int r, int n, int *i_is_parent) {
  long d = 1L << r;
  if (i % (2 * d) == 0) {
    *i_is_parent = 1;
    return i + d < n ? (int)(i + d) : -1;
  }
  *i_is_parent = 0;
  return i % (2 * d) == d ? (int)(i - d) : -1;
}

/* SKaMPI's: process 0 with every other in turn, n - 1 rounds, depth 1. */
static int linear_rounds(int n) {
  return n > 1 ? n - 1 : 0;
}

static int linear_partner(int i, int r, int n, int *i_is_parent) {
  *i_is_parent = i == 0;
  if (i == 0)
    return r + 1 < n ? r + 1 : -1;
  return i == r + 1 ? 0 : -1;
}

const cm_method cm_methods[] = {
    {"tree", "binomial tree of disjoint pairs, ceil(log2 H) rounds (Hunold & Carpen-Amarie's HCA2/HCA3)", tree_rounds,
     tree_partner},
    {"linear", "the reference with every other clock in turn, H - 1 rounds (SKaMPI)", linear_rounds, linear_partner},
};
const int cm_nmethods = (int)(sizeof cm_methods / sizeof cm_methods[0]);

const cm_method *cm_method_named(const char *name) {
  for (int i = 0; i < cm_nmethods; i++)
    if (strcmp(cm_methods[i].name, name) == 0)
      return &cm_methods[i];
  return NULL;
}

int cm_parent(const cm_method *m, int i, int n) {
  int rounds = m->rounds(n), parent_side;
  for (int r = 0; r < rounds; r++) {
    int p = m->partner(i, r, n, &parent_side);
    if (p >= 0 && !parent_side)
      return p;
  }
  return -1;
}

int cm_depth(const cm_method *m, int i, int n) {
  int d = 0;
  for (int p = cm_parent(m, i, n); p >= 0; p = cm_parent(m, p, n))
    d++;
  return d;
}
