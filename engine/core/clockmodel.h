/* The global clock's arithmetic, MPI-free so it is unit tested with hand-computed cases:
 * a linear map from one clock onto another, the bound on its error, how maps compose along a
 * tree, and the schedules (which pairs exchange in which round) of the synchronisation methods.
 *
 * A map says what a clock reads at global time G:   L(G) = G + a + b (G - g0)
 * and how far it may be from the truth at G:         e(G) = e0 + k |G - g0|
 *
 * An edge is the map of a child's clock onto its parent's, fitted from ping-pong exchanges
 * (t1 on the parent, t2 on the child, t3 on the parent; the smallest round trip of a batch
 * gives the offset o = t2 - (t1 + t3) / 2 at the parent's time x = (t1 + t3) / 2).  Its bound
 * has two parts (docs/method.md, "The global clock"):
 *   - systematic: an offset read from one exchange is wrong by at most half its round trip
 *     (the child's read lies between t1 and t3 whatever the two directions cost), so the
 *     mean of those half round trips bounds the line's error at its centre;
 *   - statistical: the scatter of the batches around the line, at CM_Z standard errors of the
 *     intercept and of the slope (the drift), which covers jitter and drift not yet measured.
 * Along a path of edges the maps compose exactly and the bounds add, so a rank's bound is
 * the sum of its ancestors' and grows with the depth of the tree, never by a guess. */
#ifndef SCOPE_CLOCKMODEL_H
#define SCOPE_CLOCKMODEL_H

/* Standard errors the statistical part spans: 3.5 covers 99.95 % of a normal scatter and
 * Student's t at the 10 degrees of freedom of 12 batches to 99.5 %. */
#define CM_Z 3.5

typedef struct {
  double a, b, g0; /* L(G) = G + a + b (G - g0), ns */
  double e0, k;    /* error bound e(G) = e0 + k |G - g0|, ns and ns per ns */
} cm_map;

/* The identity: the reference clock itself, exact. */
cm_map cm_identity(double g0);
/* Fit an edge from n batches (x: parent's time, o: offset, h: half round trip, all ns), after
 * leaving out batches far off the line (at most a quarter); returns -1 unless 3 <= n <= 64. */
int cm_fit(const double *x, const double *o, const double *h, int n, cm_map *edge);
/* An edge measured again: the offset at the new fit's centre, the drift from the two fits'
 * centres (the time between synchronisations is the baseline, not one span), and its bound
 * from theirs: |drift error| <= (e0_prev + e0_now) / (g0_now - g0_prev), whatever the batches
 * of one synchronisation did within it.  `now` unchanged when the centres coincide. */
cm_map cm_refit(const cm_map *prev, const cm_map *now);
/* The child's map onto global time from its parent's map and the edge child -> parent. */
cm_map cm_compose(const cm_map *parent, const cm_map *edge);
double cm_to_local(const cm_map *m, double g);
double cm_to_global(const cm_map *m, double l);
double cm_bound(const cm_map *m, double g);

/* A synchronisation method: the pairs that exchange in each round.  Within a round every
 * process is in at most one pair, so a round's pairs run at once. */
typedef struct {
  const char *name;
  const char *describes;
  int (*rounds)(int n);
  /* In round r of n processes: the partner of process i, or -1 when i is idle;
   * *i_is_parent says which side of the edge i is. */
  int (*partner)(int i, int r, int n, int *i_is_parent);
} cm_method;

extern const cm_method cm_methods[];
extern const int cm_nmethods;
const cm_method *cm_method_named(const char *name);
/* i's parent under the method, -1 for process 0 (the reference); and its depth. */
int cm_parent(const cm_method *m, int i, int n);
int cm_depth(const cm_method *m, int i, int n);

#endif
