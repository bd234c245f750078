/* The engine under SimGrid's SMPI (make sim): what SMPI does not offer, said as data.
 * SMPI implements MPI's communication on a simulated platform but no MPI_T (no control or
 * performance variables), so the transport part of the context is empty and --cvars says why;
 * mpit.c and cvars.c are left out of this build (engine/Makefile, SIM_ENGINE). */
#include <stdio.h>

#include "cvars.h"
#include "mpit.h"

void mpit_open(void) {}
void mpit_close(void) {}
void mpit_point_begin(MPI_Comm comm) {
  (void)comm;
}
void mpit_point_end(MPI_Comm comm) {
  (void)comm;
}
void mpit_write_point(json_w *w) {
  (void)w;
}

void mpit_write_transport(json_w *w) {
  jw_key(w, "transport");
  jw_obj_begin(w);
  jw_key(w, "libraries");
  jw_arr_begin(w);
  jw_str(w, "simgrid-smpi");
  jw_arr_end(w);
  jw_key(w, "cvars");
  jw_obj_begin(w);
  jw_obj_end(w);
  jw_kint(w, "pvars", 0);
  jw_obj_end(w);
}

int cvars_list(const char *prefix, FILE *out) {
  (void)prefix;
  (void)out;
  fprintf(stderr, "scope-engine: error: SimGrid's SMPI offers no MPI_T control variables\n");
  return 2;
}
