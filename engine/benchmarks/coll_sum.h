/* Reductions (allreduce, reduce, reduce-scatter, scan): MPI_SUM over elements of -p dtype.
 * SCOPE's default sums unsigned 32-bit words; OMB sums MPI_CHAR unless told otherwise (its -T),
 * and the element type changes the reduction's arithmetic, so it is a parameter.  dtype=char
 * sums MPI_SIGNED_CHAR: MPI defines MPI_SUM on the integer types, of which MPI_CHAR is not one
 * (MPICH adds MPI_CHAR as bytes all the same, so the cost is OMB's).
 *
 * Every reference is exact: 32-bit sums wrap alike in MPI and here (two's complement), and the
 * other types' elements are given small whole values whose sum over the ranks cannot overflow:
 * floating-point ones a pattern byte (0-255: exact in a float's 24-bit mantissa up to 2^16
 * ranks), 1-byte ones at most 127 / ranks.  Open MPI 5's AVX reductions saturate an 8-bit sum
 * that overflows instead of wrapping it (open-mpi/ompi#8045, closed as won't fix), which is
 * outside what MPI defines: a byte pattern made a quarter of a 1 KiB sum fail the check. */
#ifndef SCOPE_COLL_SUM_H
#define SCOPE_COLL_SUM_H
#define COLL_FILL coll_sum_fill
#include "coll.h"

enum { COLL_U32, COLL_CHAR, COLL_INT, COLL_FLOAT, COLL_DOUBLE };
static const char *const coll_dtypes[] = {"uint32", "char", "int", "float", "double", NULL};
#define SCOPE_PARAM_DTYPE                                                                                              \
  {                                                                                                                    \
    "dtype", SP_ENUM, "uint32", 0, 0, coll_dtypes,                                                                     \
        "element type summed: uint32 (SCOPE's default), char (OMB's default), int, float or double"                    \
  }
/* OMB's -l: the root's (or every rank's) input is read from, and the sum written over, rbuf */
#define SCOPE_PARAM_INPLACE                                                                                            \
  { "inplace", SP_BOOL, "no", 0, 1, scope_bool_choices, "MPI_IN_PLACE: the input in the receive buffer (OMB's -l)" }

/* In setup, before sizing buffers: the element type, and the size cut to whole elements. */
static inline void coll_sum_params(scope_ctx *c, coll_state *s) {
  static const coll_dtype types[] = {
      {0, 4, COLL_U32}, {0, 1, COLL_CHAR}, {0, 4, COLL_INT}, {0, 4, COLL_FLOAT}, {0, 8, COLL_DOUBLE}};
  int k = scope_has_param(c, "dtype") ? (int)scope_param_get(c, "dtype") : COLL_U32;
  s->dt = types[k];
  s->dt.type = k == COLL_CHAR     ? MPI_SIGNED_CHAR
               : k == COLL_INT    ? MPI_INT
               : k == COLL_FLOAT  ? MPI_FLOAT
               : k == COLL_DOUBLE ? MPI_DOUBLE
                                  : MPI_UINT32_T;
  c->size -= c->size % s->dt.size;
  s->byte_span = 127 / c->nranks + 1; /* 1-byte elements: 0 .. 127/p, so p of them fit */
}

static inline int coll_count(const scope_ctx *c, const coll_state *s) {
  return (int)(c->size / s->dt.size);
}

/* Element i of rank r's send buffer, as a number (the fill below gives floats these values). */
static inline double coll_elem(const coll_state *s, uint64_t seed, int r, size_t i) {
  if (s->dt.kind == COLL_CHAR)
    return pattern_byte(seed, r, i) % s->byte_span;
  if (s->dt.kind == COLL_FLOAT || s->dt.kind == COLL_DOUBLE)
    return pattern_byte(seed, r, i * s->dt.size);
  uint32_t v = 0;
  for (int b = 0; b < 4; b++)
    v |= (uint32_t)pattern_byte(seed, r, 4 * i + (size_t)b) << (8 * b);
  return v;
}

/* Elements [e0, e0 + n) of the sum over ranks 0 .. upto-1, against got; bad elements counted,
 * *first the byte offset of the first. */
static inline size_t coll_check_sum_range(const coll_state *s, const void *got, size_t n, uint64_t seed, size_t e0,
                                          int upto, size_t *first) {
  size_t bad = 0;
  for (size_t i = 0; i < n; i++) {
    double want = 0;
    uint32_t wrapped = 0;
    for (int r = 0; r < upto; r++) {
      double v = coll_elem(s, seed, r, e0 + i);
      want += v;
      wrapped += (uint32_t)v;
    }
    int ok;
    switch (s->dt.kind) {
    case COLL_CHAR:
      ok = ((const unsigned char *)got)[i] == (unsigned char)wrapped;
      break;
    case COLL_FLOAT:
      ok = ((const float *)got)[i] == (float)want;
      break;
    case COLL_DOUBLE:
      ok = ((const double *)got)[i] == want;
      break;
    default:
      ok = ((const uint32_t *)got)[i] == wrapped;
    }
    if (!ok) {
      if (!bad && first)
        *first = i * s->dt.size;
      bad++;
    }
  }
  return bad;
}

/* The whole sum over every rank (allreduce, reduce). */
static inline size_t coll_check_sum(const scope_ctx *c, const coll_state *s, const void *got, uint64_t seed,
                                    size_t *first) {
  return coll_check_sum_range(s, got, c->size / s->dt.size, seed, 0, c->nranks, first);
}

/* The fill hook of reductions: elements get the values coll_elem gives them (a pattern's raw
 * bytes as floats would be NaNs and denormals, which are slow to add); in place, the input is
 * copied where the operation reads it. */
static inline void coll_sum_fill(scope_ctx *c, void *st, uint64_t seed) {
  coll_state *s = st;
  size_t n = c->sbuf_bytes / s->dt.size;
  for (size_t i = 0; i < n; i++) {
    if (s->dt.kind == COLL_CHAR)
      ((unsigned char *)c->sbuf)[i] = (unsigned char)coll_elem(s, seed, c->rank, i);
    else if (s->dt.kind == COLL_FLOAT)
      ((float *)c->sbuf)[i] = (float)pattern_byte(seed, c->rank, i * 4);
    else if (s->dt.kind == COLL_DOUBLE)
      ((double *)c->sbuf)[i] = pattern_byte(seed, c->rank, i * 8);
  }
  if (s->inplace)
    memcpy(c->rbuf, c->sbuf, c->sbuf_bytes < c->rbuf_bytes ? c->sbuf_bytes : c->rbuf_bytes);
}

#endif
