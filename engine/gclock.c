#include "gclock.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/timer.h"

static gclock_fit self;
static int my_rank;

void gclock_init(int rank) {
  my_rank = rank;
  memset(&self, 0, sizeof self);
  const char *spec = getenv("SCOPE_TEST_CLOCK");
  if (!spec)
    return;
  char *copy = strdup(spec), *save = NULL;
  for (char *tok = strtok_r(copy, ";,", &save); tok; tok = strtok_r(NULL, ";,", &save)) {
    int r;
    double off_us, drift_ppm;
    if (sscanf(tok, "%d:%lf:%lf", &r, &off_us, &drift_ppm) == 3 && r == rank) {
      self.inj_offset_ns = off_us * 1e3;
      self.inj_drift = drift_ppm * 1e-6;
    }
  }
  free(copy);
  self.inj_base_ns = (double)timer_now() * timer_tick_ns();
}

double gclock_local_ns(uint64_t ticks) {
  double t = (double)ticks * timer_tick_ns();
  return t + self.inj_offset_ns + self.inj_drift * (t - self.inj_base_ns);
}

double gclock_now_local(void) {
  return gclock_local_ns(timer_now());
}

double gclock_to_local(double g) {
  return g + self.a_ns + self.b * (g - self.g0_ns);
}

double gclock_to_global(double l) {
  /* invert l = g + a + b (g - g0) */
  return (l - self.a_ns + self.b * self.g0_ns) / (1.0 + self.b);
}

double gclock_now_global(void) {
  return gclock_to_global(gclock_now_local());
}

double gclock_predicted_error_ns(double g) {
  if (self.batches < 3)
    return self.resid_ns;
  double d = g - self.g0_ns;
  return sqrt(self.resid_ns * self.resid_ns / self.batches + d * d * self.se_b * self.se_b);
}

const gclock_fit *gclock_fit_of_self(void) {
  return &self;
}

enum { BATCHES = 12, EXCHANGES = 16, TAG = 7171 };

/* Fit o = a + b (G - G0) through (G_i, o_i), G0 = mean of G. */
static void fit_line(const double *g, const double *o, int n, gclock_fit *f) {
  double gm = 0, om = 0;
  for (int i = 0; i < n; i++) {
    gm += g[i];
    om += o[i];
  }
  gm /= n;
  om /= n;
  double sgg = 0, sgo = 0;
  for (int i = 0; i < n; i++) {
    sgg += (g[i] - gm) * (g[i] - gm);
    sgo += (g[i] - gm) * (o[i] - om);
  }
  f->b = sgg > 0 ? sgo / sgg : 0;
  f->a_ns = om;
  f->g0_ns = gm;
  double ss = 0;
  for (int i = 0; i < n; i++) {
    double e = o[i] - (f->a_ns + f->b * (g[i] - gm));
    ss += e * e;
  }
  f->resid_ns = n > 2 ? sqrt(ss / (n - 2)) : 0;
  f->se_b = n > 2 && sgg > 0 ? f->resid_ns / sqrt(sgg) : 0;
  f->batches = n;
}

void gclock_sync(MPI_Comm comm, double span_s) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  if (rank == 0) {
    self.a_ns = self.b = 0; /* rank 0's clock is global time */
    self.g0_ns = gclock_now_local();
    self.resid_ns = self.se_b = 0;
    self.batches = BATCHES;
  }
  double gap_ns = span_s * 1e9 / BATCHES;
  for (int r = 1; r < size; r++) {
    if (rank == 0) {
      double g[BATCHES], o[BATCHES];
      for (int b = 0; b < BATCHES; b++) {
        double t_next = gclock_now_local() + gap_ns, best_rtt = INFINITY;
        for (int e = 0; e < EXCHANGES; e++) {
          double t1 = gclock_now_local(), t2;
          MPI_Send(&t1, 1, MPI_DOUBLE, r, TAG, comm);
          MPI_Recv(&t2, 1, MPI_DOUBLE, r, TAG, comm, MPI_STATUS_IGNORE);
          double t3 = gclock_now_local();
          if (t3 - t1 < best_rtt) {
            best_rtt = t3 - t1;
            g[b] = 0.5 * (t1 + t3);
            o[b] = t2 - g[b];
          }
        }
        if (b + 1 < BATCHES)
          while (gclock_now_local() < t_next)
            ;
      }
      double stop = -1;
      MPI_Send(&stop, 1, MPI_DOUBLE, r, TAG, comm);
      gclock_fit f = {0};
      fit_line(g, o, BATCHES, &f);
      double msg[5] = {f.a_ns, f.b, f.g0_ns, f.resid_ns, f.se_b};
      MPI_Send(msg, 5, MPI_DOUBLE, r, TAG + 1, comm);
    } else if (rank == r) {
      for (;;) {
        double t1;
        MPI_Recv(&t1, 1, MPI_DOUBLE, 0, TAG, comm, MPI_STATUS_IGNORE);
        if (t1 < 0)
          break;
        double t2 = gclock_now_local();
        MPI_Send(&t2, 1, MPI_DOUBLE, 0, TAG, comm);
      }
      double msg[5];
      MPI_Recv(msg, 5, MPI_DOUBLE, 0, TAG + 1, comm, MPI_STATUS_IGNORE);
      self.a_ns = msg[0];
      self.b = msg[1];
      self.g0_ns = msg[2];
      self.resid_ns = msg[3];
      self.se_b = msg[4];
      self.batches = BATCHES;
    }
  }
  MPI_Barrier(comm);
}

/* This rank's local time at raw counter value `ticks` (used to find the true offsets on one
 * host, where every rank reads the same counter but calibrates its tick on its own). */
static double local_at(const double *par, double ticks) {
  double t = ticks * par[0];
  return t + par[1] + par[2] * (t - par[3]);
}

void gclock_record(MPI_Comm comm, json_w *w, int same_host, int *write_it) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  double ticks = (double)timer_now();
  MPI_Bcast(&ticks, 1, MPI_DOUBLE, 0, comm);
  /* fit and clock parameters: a, b, g0, resid, se_b, tick_ns, inj offset, inj drift, inj base */
  double mine[9] = {self.a_ns,          self.b,         self.g0_ns,      self.resid_ns, self.se_b, timer_tick_ns(),
                    self.inj_offset_ns, self.inj_drift, self.inj_base_ns};
  double *all = rank == 0 ? malloc(sizeof(double) * 9 * (size_t)size) : NULL;
  MPI_Gather(mine, 9, MPI_DOUBLE, all, 9, MPI_DOUBLE, 0, comm);
  *write_it = rank == 0;
  if (rank != 0)
    return;
  double g = local_at(all + 5, ticks); /* rank 0's clock is global time */
  double max_pred = 0, max_err = 0;
  jw_obj_begin(w);
  jw_kstr(w, "type", "clock");
  jw_kstr(w, "method", "min-RTT offset per batch, linear drift fit against rank 0 (SKaMPI/HCA style)");
  jw_kint(w, "reference_rank", 0);
  jw_kbool(w, "one_host", same_host);
  jw_key(w, "ranks");
  jw_arr_begin(w);
  for (int r = 1; r < size; r++) {
    double *m = all + 9 * r;
    gclock_fit f = {.a_ns = m[0], .b = m[1], .g0_ns = m[2], .resid_ns = m[3], .se_b = m[4], .batches = BATCHES};
    double est = f.a_ns + f.b * (g - f.g0_ns);
    double d = g - f.g0_ns, pred = sqrt(f.resid_ns * f.resid_ns / BATCHES + d * d * f.se_b * f.se_b);
    jw_obj_begin(w);
    jw_kint(w, "rank", r);
    jw_knum(w, "offset_ns", est);
    jw_knum(w, "drift_ppm", f.b * 1e6);
    jw_knum(w, "fit_residual_ns", f.resid_ns);
    jw_knum(w, "predicted_error_ns", pred);
    if (same_host) {
      /* the truth: both clocks evaluated at the same counter value */
      double truth = local_at(m + 5, ticks) - g;
      double rate_r = m[5] * (1 + m[7]), rate_0 = all[5] * (1 + all[7]);
      double err = fabs(est - truth);
      jw_knum(w, "true_offset_ns", truth);
      jw_knum(w, "true_drift_ppm", (rate_r / rate_0 - 1) * 1e6);
      jw_knum(w, "error_ns", err);
      if (err > max_err)
        max_err = err;
    }
    jw_obj_end(w);
    if (pred > max_pred)
      max_pred = pred;
  }
  jw_arr_end(w);
  jw_knum(w, "max_predicted_error_ns", max_pred);
  if (same_host)
    jw_knum(w, "max_error_ns", max_err);
  jw_obj_end(w);
  free(all);
}
