/* Unit tests of the global clock's arithmetic (core/clockmodel.c): the edge fit and its bound
 * and the composition along a tree by hand-computed cases, the schedules' invariants, and a
 * simulated tree of clocks whose true offsets are known, where every composed bound must hold. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "../core/clockmodel.h"
#include "../options.h"
#include "unit.h"

static int near(double a, double b, double tol) {
  return fabs(a - b) <= tol;
}

static void test_fit_by_hand(void) {
  /* on a line: offsets 100, 101, 102 at 0, 10, 20; no scatter, so the bound is the half round trip */
  double x[] = {0, 10, 20}, o[] = {100, 101, 102}, h[] = {5, 5, 5};
  cm_map e;
  CHECK(cm_fit(x, o, h, 3, &e) == 0, "fit of 3");
  CHECK(near(e.a, 101, 1e-12) && near(e.b, 0.1, 1e-12) && near(e.g0, 10, 1e-12), "line %g %g %g", e.a, e.b, e.g0);
  CHECK(near(e.e0, 5, 1e-12) && near(e.k, 0, 1e-12), "bound %g %g", e.e0, e.k);
  /* scatter: x 0..3, o 0,1,0,1: slope 1/5, residuals -0.2 0.6 -0.6 0.2, s = sqrt(0.8 / 2) */
  double x2[] = {0, 1, 2, 3}, o2[] = {0, 1, 0, 1}, h2[] = {2, 2, 2, 2}, s = sqrt(0.4);
  CHECK(cm_fit(x2, o2, h2, 4, &e) == 0, "fit of 4");
  CHECK(near(e.a, 0.5, 1e-12) && near(e.b, 0.2, 1e-12) && near(e.g0, 1.5, 1e-12), "line %g %g", e.a, e.b);
  CHECK(near(e.e0, 2 + CM_Z * s / 2, 1e-12), "e0 %g", e.e0);
  CHECK(near(e.k, CM_Z * s / sqrt(5), 1e-12), "k %g", e.k);
  CHECK(near(cm_bound(&e, 11.5), e.e0 + 10 * e.k, 1e-12), "bound grows with the distance from the centre");
  CHECK(cm_fit(x2, o2, h2, 2, &e) == -1, "two batches give no scatter: refused");
  /* twelve batches on o = 100 + 0.5 x with a small scatter, one of them 1000 ns off (a rank
   * preempted between the two directions): left out, the line is the eleven others' */
  double x3[12], o3[12], h3[12], jig[] = {3, -2, 1, -3, 2, 0, -1, 2, -2, 3, -1, 1};
  for (int i = 0; i < 12; i++) {
    x3[i] = 1000.0 * i;
    o3[i] = 100 + 0.5 * x3[i] + jig[i] + (i == 7 ? 1000 : 0);
    h3[i] = i == 7 ? 900 : 10;
  }
  CHECK(cm_fit(x3, o3, h3, 12, &e) == 0, "fit of 12");
  CHECK(near(e.b, 0.5, 2e-3) && near(cm_to_local(&e, 7000) - 7000, 3600, 5), "outlier left out: b %g", e.b);
  CHECK(e.e0 < 20, "the outlier's round trip is not in the bound either: e0 %g", e.e0);
}

static void test_compose_by_hand(void) {
  cm_map p = {1000, 1e-5, 5000, 10, 1e-6}, e = {-300, 2e-5, 6100, 20, 2e-6};
  cm_map c = cm_compose(&p, &e);
  /* shift = g0_p + a_p - g0_e = -100 */
  CHECK(c.g0 == 5000 && near(c.a, 700 + 2e-5 * -100, 1e-9), "a %g", c.a);
  CHECK(near(c.b, 1e-5 + 2e-5 * (1 + 1e-5), 1e-18), "b %g", c.b);
  CHECK(near(c.e0, 30 + 2e-6 * 100, 1e-12) && near(c.k, 1e-6 + 2e-6 * (1 + 1e-5), 1e-18), "bound %g %g", c.e0, c.k);
  /* the composed map reads what the two maps read one after the other */
  for (double g = -1e6; g <= 1e6; g += 2.5e5) {
    double lp = cm_to_local(&p, g), lc = cm_to_local(&e, lp);
    CHECK(near(cm_to_local(&c, g), lc, 1e-6), "composed %g vs %g at %g", cm_to_local(&c, g), lc, g);
    CHECK(near(cm_to_global(&c, cm_to_local(&c, g)), g, 1e-6), "to_global inverts to_local at %g", g);
  }
  /* a second fit 1e9 ns after the first: drift from the two centres, bound from their bounds */
  cm_map f1 = {100, 3e-5, 1000, 40, 1e-6}, f2 = {100 + 2e-6 * 1e9, -5e-5, 1000 + 1e9, 60, 2e-6};
  cm_map rf = cm_refit(&f1, &f2);
  CHECK(rf.a == f2.a && rf.g0 == f2.g0 && rf.e0 == 60 && near(rf.b, 2e-6, 1e-15), "refit b %g", rf.b);
  CHECK(near(rf.k, 100 / 1e9, 1e-18), "refit k %g", rf.k);
  cm_map same_time = cm_refit(&f2, &f2);
  CHECK(same_time.b == f2.b && same_time.k == f2.k, "no baseline: the fit as it is");
  cm_map id = cm_identity(42), same = cm_compose(&id, &e);
  CHECK(near(cm_to_local(&same, 7000), cm_to_local(&e, 7000), 1e-9), "identity parent");
}

static void test_schedules(void) {
  CHECK(cm_nmethods == 2, "methods");
  for (int i = 0; i < cm_nmethods; i++) /* the option's choices are the table's names, in order */
    CHECK(opt_clock_methods[i] && strcmp(opt_clock_methods[i], cm_methods[i].name) == 0, "option names %d", i);
  CHECK(opt_clock_methods[cm_nmethods] == NULL, "no extra option choice");
  const cm_method *tree = cm_method_named("tree"), *lin = cm_method_named("linear");
  CHECK(tree && lin && !cm_method_named("star"), "named");
  for (int n = 1; n <= 70; n++) {
    int want = 0;
    while ((1 << want) < n)
      want++;
    CHECK(tree->rounds(n) == want, "tree rounds %d for %d", tree->rounds(n), n);
    CHECK(lin->rounds(n) == (n > 1 ? n - 1 : 0), "linear rounds for %d", n);
    for (int mi = 0; mi < cm_nmethods; mi++) {
      const cm_method *m = &cm_methods[mi];
      int children[70] = {0};
      for (int r = 0; r < m->rounds(n); r++)
        for (int i = 0; i < n; i++) {
          int side, back_side, p = m->partner(i, r, n, &side);
          if (p < 0)
            continue;
          /* pairs are disjoint and symmetric: each process in at most one pair a round */
          CHECK(p < n && m->partner(p, r, n, &back_side) == i && side != back_side, "%s pair %d-%d", m->name, i, p);
          if (!side)
            children[i]++;
        }
      for (int i = 1; i < n; i++)
        CHECK(children[i] == 1 && cm_parent(m, i, n) >= 0, "%s: %d of %d has one parent", m->name, i, n);
      CHECK(cm_parent(m, 0, n) == -1, "the reference has none");
    }
    for (int i = 1; i < n; i++) /* the tree's path clears one set bit an edge */
      CHECK(cm_depth(tree, i, n) == __builtin_popcount((unsigned)i) && cm_depth(lin, i, n) == 1, "depth %d", i);
  }
}

/* ---------------------------------------------------------------- simulation with a known truth */

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static double uniform(void) {
  rng ^= rng >> 12;
  rng ^= rng << 25;
  rng ^= rng >> 27;
  return (double)((rng * 2685821657736338717ull) >> 11) * (1.0 / 9007199254740992.0);
}

/* Clock i reads true time t as t + off[i] + drift[i] t.  An exchange parent -> child takes
 * one-way delays of 300-900 ns each way, unequal, as a real link's are; the method sees only
 * the clocks' reads. */
static double off[40], drift[40];
static double read_clock(int i, double t) {
  return t + off[i] + drift[i] * t;
}

static void sim_edge(int parent, int child, double t0, double span, cm_map *e) {
  enum { B = 12, X = 16 };
  double x[B], o[B], h[B];
  for (int b = 0; b < B; b++) {
    double best = INFINITY, t = t0 + span * b / B;
    for (int k = 0; k < X; k++, t += 5000) {
      double d1 = 300 + 600 * uniform(), d2 = 300 + 600 * uniform();
      double t1 = read_clock(parent, t), t2 = read_clock(child, t + d1), t3 = read_clock(parent, t + d1 + d2);
      if (t3 - t1 < best) {
        best = t3 - t1;
        x[b] = 0.5 * (t1 + t3);
        o[b] = t2 - x[b];
        h[b] = 0.5 * (t3 - t1);
      }
    }
  }
  cm_fit(x, o, h, B, e);
}

/* The systematic part of a bound is hard, the drift part CM_Z standard errors (Student's t at
 * 10 degrees of freedom: 99.4 % two-sided), and a reading far from its fit extrapolates the
 * drift: at least 99 % of the readings must be within their bounds, and no edge's read at
 * its own centre may be outside (there the drift part is nothing). */
static void test_simulated_tree(void) {
  long readings = 0, within = 0;
  for (int trial = 0; trial < 40; trial++) {
    int n = 2 + trial % 31;
    for (int i = 0; i < n; i++) {
      off[i] = i ? (uniform() - 0.5) * 2e9 : 0;    /* up to a second apart */
      drift[i] = i ? (uniform() - 0.5) * 4e-5 : 0; /* up to 20 ppm */
    }
    for (int mi = 0; mi < cm_nmethods; mi++) {
      const cm_method *m = &cm_methods[mi];
      cm_map edge[40], map[40];
      for (int i = 1; i < n; i++)
        sim_edge(cm_parent(m, i, n), i, 1e9 * i, 5e7, &edge[i]);
      /* compose from the reference down: a parent before its children */
      map[0] = cm_identity(read_clock(0, 2e9));
      for (int depth = 1, done = 1; done < n; depth++)
        for (int i = 1; i < n; i++)
          if (cm_depth(m, i, n) == depth) {
            map[i] = cm_compose(&map[cm_parent(m, i, n)], &edge[i]);
            done++;
          }
      /* the truth: clock i at the true time when the reference reads G */
      for (double t = 1e9; t <= 4e10; t *= 2)
        for (int i = 1; i < n; i++) {
          double g = read_clock(0, t), truth = read_clock(i, t) - g, est = cm_to_local(&map[i], g) - g;
          readings++;
          within += fabs(est - truth) <= cm_bound(&map[i], g);
        }
      for (int i = 1; i < n; i++) { /* an edge alone, at its own centre */
        int p = cm_parent(m, i, n);
        double x = edge[i].g0, t = (x - off[p]) / (1 + drift[p]), truth = read_clock(i, t) - x;
        CHECK(fabs(cm_to_local(&edge[i], x) - x - truth) <= edge[i].e0, "%s n=%d edge %d at its centre", m->name, n, i);
      }
    }
  }
  CHECK(within >= 0.99 * (double)readings, "%ld of %ld readings within their bounds", within, readings);
  printf("simulated clocks: %ld of %ld readings within their bounds\n", within, readings);
}

int main(void) {
  test_fit_by_hand();
  test_compose_by_hand();
  test_schedules();
  test_simulated_tree();
  return unit_finish("engine clock");
}
