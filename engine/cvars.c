/* --cvars PREFIX: the MPI's control variables whose names start with PREFIX, read through the
 * MPI tool information interface (MPI_T, MPI 3.0 ch. 14), one JSON record each: the name, the
 * description and, where the MPI declares one, the enumeration of its values.  MPI_T needs no
 * MPI_Init, so this runs as a singleton without a launcher.  `scope tune` reads a collective's
 * algorithms from here: MPICH lists them in the description of MPIR_CVAR_<COLL>_INTRA_ALGORITHM
 * ("name - what it does", a line each), an MPI with MPI_T enumerations in `choices`. */
#include "cvars.h"

#include <stdlib.h>
#include <string.h>

#include "core/json.h"

static void write_choices(json_w *w, MPI_T_enum e) {
  int n = 0, len = 256;
  char name[256];
  if (e == MPI_T_ENUM_NULL || MPI_T_enum_get_info(e, &n, name, &len) != MPI_SUCCESS)
    return;
  jw_key(w, "choices"); /* name and value of each item: Open MPI's values are its algorithm ids */
  jw_arr_begin(w);
  for (int i = 0; i < n; i++) {
    int value;
    len = sizeof name;
    if (MPI_T_enum_get_item(e, i, &value, name, &len) == MPI_SUCCESS) {
      jw_obj_begin(w);
      jw_kstr(w, "name", name);
      jw_kint(w, "value", value);
      jw_obj_end(w);
    }
  }
  jw_arr_end(w);
}

int cvars_list(const char *prefix, FILE *out) {
  int provided, n = 0;
  if (MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS || MPI_T_cvar_get_num(&n) != MPI_SUCCESS) {
    fprintf(stderr, "scope-engine: error: this MPI offers no control variables through MPI_T\n");
    return 2;
  }
  json_w w;
  jw_init(&w);
  enum { DESC_MAX = 16384 };
  char *desc = malloc(DESC_MAX);
  for (int i = 0; desc && i < n; i++) {
    char name[256];
    int name_len = sizeof name, desc_len = DESC_MAX, verbosity, bind, scope;
    MPI_Datatype type;
    MPI_T_enum e;
    if (MPI_T_cvar_get_info(i, name, &name_len, &verbosity, &type, &e, desc, &desc_len, &bind, &scope) != MPI_SUCCESS ||
        strncmp(name, prefix, strlen(prefix)) != 0)
      continue;
    jw_obj_begin(&w);
    jw_kstr(&w, "type", "cvar");
    jw_kint(&w, "schema", SCOPE_SCHEMA_VERSION);
    jw_kstr(&w, "name", name);
    jw_kstr(&w, "description", desc);
    write_choices(&w, e);
    jw_obj_end(&w);
    jw_emit(&w, out);
  }
  free(desc);
  jw_free(&w);
  MPI_T_finalize();
  return 0;
}
