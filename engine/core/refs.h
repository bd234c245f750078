/* The launches before this one (--earlier-launches): for points of the plan, by index, each
 * earlier launch's median (us per operation) and the relative half-width of its 95 % CI.
 * With them a point's stopping rule knows how far launches already differ (rep.h,
 * rep_target).  MPI-free, so it is parsed before MPI starts and unit-tested with plain cc. */
#ifndef SCOPE_REFS_H
#define SCOPE_REFS_H
#include <stddef.h>

/* One earlier launch of a point: its median and its CI's relative half-width. */
typedef struct {
  double median, ci_rel;
} launch_ref;

/* One point's earlier launches. */
typedef struct {
  int n;
  const launch_ref *v;
} launch_refs;

/* Everything parsed, in the order given: per point, its index in the plan and where its
 * launches start in the values. */
typedef struct {
  struct refs_point {
    long index, first;
    int count;
  } * points;
  launch_ref *vals;
  long n, cap, nvals, capvals;
} refs_list;

/* Appends one --earlier-launches item, "INDEX=MEDIAN/CI[:MEDIAN/CI...][,INDEX=...]"; 0, or
 * -1 with the reason in err. */
int refs_parse(refs_list *L, const char *item, char *err, size_t errlen);
/* Per point index (npoints of them), its earlier launches (n = 0 for none); NULL with the
 * reason in err when an index is beyond the plan or memory is short. */
launch_refs *refs_by_point(const refs_list *L, long npoints, char *err, size_t errlen);
void refs_free(refs_list *L);

#endif
