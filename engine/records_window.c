/* The parts of a point record that window, barrier and OSU timing add (docs/records.md):
 * validity, skews, every kept repetition's per-rank times, and a paired test's reference. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/stats.h"
#include "records.h"

static void quantiles_obj(json_w *w, const char *key, double *x, size_t n, double scale) {
  jw_key(w, key);
  jw_obj_begin(w);
  if (n) {
    stats_sort(x, n);
    jw_knum(w, "median", stats_quantile_sorted(x, n, 0.5) * scale);
    jw_knum(w, "p95", stats_quantile_sorted(x, n, 0.95) * scale);
    jw_knum(w, "max", x[n - 1] * scale);
  }
  jw_obj_end(w);
}

/* Per-rank times of kept repetition i (row r of the window arrays). */
#define W_START(W, r, i) ((W)->start[(size_t)(r) * (W)->cap + (i)])
#define W_END(W, r, i) ((W)->end[(size_t)(r) * (W)->cap + (i)])

static void write_skews(json_w *w, const windowed *W, double *arr, double *ex) {
  size_t n = W->nrep;
  for (size_t i = 0; i < n; i++) {
    double smin = INFINITY, smax = -INFINITY, emin = INFINITY, emax = -INFINITY;
    for (int r = 0; r < W->nranks; r++) {
      smin = fmin(smin, W_START(W, r, i)), smax = fmax(smax, W_START(W, r, i));
      emin = fmin(emin, W_END(W, r, i)), emax = fmax(emax, W_END(W, r, i));
    }
    arr[i] = smax - smin;
    ex[i] = emax - emin;
  }
  jw_key(w, "skew");
  jw_obj_begin(w);
  if (!W->barrier)
    quantiles_obj(w, "arrival_us", arr, n, 1e-3);
  quantiles_obj(w, "exit_us", ex, n, 1e-3);
  jw_obj_end(w);
}

static void write_per_rank(json_w *w, const windowed *W, double *arr) {
  size_t n = W->nrep;
  jw_key(w, "per_rank");
  jw_obj_begin(w);
  jw_key(w, "own_us_median");
  jw_arr_begin(w);
  for (int r = 0; r < W->nranks; r++) {
    for (size_t i = 0; i < n; i++)
      arr[i] = W_END(W, r, i) - W_START(W, r, i);
    stats_sort(arr, n);
    jw_num(w, n ? stats_quantile_sorted(arr, n, 0.5) * 1e-3 : NAN);
  }
  jw_arr_end(w);
  for (int which = 0; which < 2; which++) {
    jw_key(w, which ? "end_us" : "start_us");
    jw_arr_begin(w);
    for (int r = 0; r < W->nranks; r++) {
      jw_arr_begin(w);
      for (size_t i = 0; i < n; i++)
        jw_num(w, (which ? W_END(W, r, i) : W_START(W, r, i)) * 1e-3);
      jw_arr_end(w);
    }
    jw_arr_end(w);
  }
  jw_obj_end(w);
}

/* Window/barrier timing: validity, skews and per-rank times (us). */
void rec_write_window(json_w *w, const windowed *W) {
  static const char *const names[] = {"window", "barrier", "osu"};
  jw_kstr(w, "timing", names[W->barrier]);
  if (W->barrier)
    jw_kstr(w, "timing_reason", W->why);
  jw_key(w, "window");
  jw_obj_begin(w);
  jw_knum(w, "window_us", W->barrier ? NAN : W->window_ns * 1e-3);
  jw_kint(w, "repetitions", W->total);
  jw_kint(w, "invalid", W->invalid);
  jw_knum(w, "sync_error_ns", W->barrier ? NAN : W->sync_error_ns);
  jw_kint(w, "cycle", W->cycle); /* repetitions a sample (a rotating root's turn) */
  jw_obj_end(w);
  size_t n = W->nrep ? W->nrep : 1;
  double *arr = malloc(sizeof(double) * n), *ex = malloc(sizeof(double) * n);
  if (!arr || !ex) {
    fprintf(stderr, "scope-engine: error: out of memory writing a record\n");
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
  write_skews(w, W, arr, ex);
  write_per_rank(w, W, arr);
  free(arr);
  free(ex);
}

/* A paired test's reference variant, timed in the same loop (see scope.h). */
void rec_write_reference(json_w *w, const windowed *W, double k, int samples) {
  size_t n = W->nref;
  double *x = malloc(sizeof(double) * (n ? n : 1));
  if (!x) {
    fprintf(stderr, "scope-engine: error: out of memory writing a record\n");
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
  memcpy(x, W->ref, n * sizeof(double));
  stats_summary s;
  stats_summarise(x, n, &s);
  free(x);
  jw_key(w, "reference");
  jw_obj_begin(w);
  jw_kint(w, "count", (long long)n);
  jw_knum(w, "median", s.median * k);
  jw_knum(w, "ci_lo", s.ci_lo * k);
  jw_knum(w, "ci_hi", s.ci_hi * k);
  jw_obj_end(w);
  if (samples) {
    jw_key(w, "reference_samples");
    jw_arr_begin(w);
    for (size_t i = 0; i < n; i++)
      jw_num(w, W->ref[i] * k);
    jw_arr_end(w);
  }
}
