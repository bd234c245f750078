/* The clock library given what its header calls out of domain (issue 69): MPI_COMM_NULL, NULL
 * clocks in every reading function, a pointer read after finalize, options past their bounds.
 * Each line printed is one call's answer; the test compares them with the header's promises. */
#include <math.h>
#include <stdio.h>

#include <scope_clock.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  scope_clock *c = NULL;
  double b = 0;
  int e = scope_clock_init(MPI_COMM_NULL, NULL, &c);
  int nan_reads = isnan(scope_clock_local_ns(NULL)) && isnan(scope_clock_global_ns(NULL, &b)) && isnan(b) &&
                  isnan(scope_clock_to_global_ns(NULL, 1.0)) && isnan(scope_clock_bound_ns(NULL, 1.0)) &&
                  isnan(scope_clock_sync_seconds(NULL)) && scope_clock_timer(NULL) == NULL;
  scope_clock_options far = {0};
  far.span_s = 1e6;
  int e_span = scope_clock_init(MPI_COMM_WORLD, &far, &c);
  int e_ok = scope_clock_init(MPI_COMM_WORLD, NULL, &c);
  /* one rank's bad argument fails the collective on every rank, none left waiting */
  int e_keep = scope_clock_keep(c, rank == 1 ? -1.0 : 1e3, 0.0);
  int e_name = scope_clock_events_open(c, argc > 1 ? argv[1] : "hostile");
  int names = scope_clock_event(c, "") == SCOPE_CLOCK_EINVAL && scope_clock_event(c, "a\nb") == SCOPE_CLOCK_EINVAL &&
              scope_clock_event(c, "\x1b[31m") == SCOPE_CLOCK_EINVAL && scope_clock_event(c, "\xff\xfe") == SCOPE_CLOCK_EINVAL &&
              scope_clock_event(c, "\xc0\xaf") == SCOPE_CLOCK_EINVAL &&
              scope_clock_event(c, "0123456789012345678901234567890123456789012345678901234567890123x") == SCOPE_CLOCK_EINVAL &&
              scope_clock_event(c, "0123456789012345678901234567890123456789012345678901234567890123") == SCOPE_CLOCK_OK &&
              scope_clock_event(c, "\xce\xb1-halo") == SCOPE_CLOCK_OK;
  scope_clock *twin = NULL;
  int e_twin_init = scope_clock_init(MPI_COMM_WORLD, NULL, &twin);
  int e_twin = scope_clock_events_open(twin, argc > 1 ? argv[1] : "hostile");
  scope_clock_finalize(&twin);
  int e_fin = scope_clock_finalize(&c);
  int after = c == NULL && isnan(scope_clock_global_ns(c, NULL));
  if (rank == 0)
    printf("init COMM_NULL %d\nnull reads NaN %d\nspan 1e6 %d\ninit %d\nkeep one bad rank %d\nevents_open %d\n"
           "names %d\ntwin init %d\ntwin prefix %d\nfinalize %d\nafter finalize NaN %d\n",
           e, nan_reads, e_span, e_ok, e_keep, e_name, names, e_twin_init, e_twin, e_fin, after);
  MPI_Finalize();
  return 0;
}
