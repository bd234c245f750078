/* See mpit.h.  MPICH 5 offers control variables but no performance variables; Open MPI 5
 * offers both (its ob1 queue lengths are bound to a communicator, so their handles are made
 * on each point's communicator).  A variable that cannot be read is left out, never fatal. */
#include "mpit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PV_MAX 64
#define PV_WIDTH 4096 /* elements a variable may have (one per peer for communicator-bound ones) */

/* Protocol thresholds and selections, per MPI: read where the MPI has them, after MPI_Init (Open
 * MPI declares a component's variables when it opens the component). */
static const char *const cvar_names[] = {
    /* MPICH ch4 */
    "MPIR_CVAR_CH4_NETMOD", "MPIR_CVAR_CH4_SHM", "MPIR_CVAR_CH4_SHM_POSIX_EAGER",
    "MPIR_CVAR_CH4_SHM_POSIX_IQUEUE_CELL_SIZE", "MPIR_CVAR_CH4_SHM_POSIX_IQUEUE_NUM_CELLS",
    "MPIR_CVAR_CH4_IPC_CMA_P2P_THRESHOLD", "MPIR_CVAR_CH4_IPC_XPMEM_P2P_THRESHOLD", "MPIR_CVAR_CH4_OFI_EAGER_THRESHOLD",
    /* Open MPI */
    "pml", "btl", "mtl", "smsc", "btl_sm_eager_limit", "btl_sm_rndv_eager_limit", "btl_sm_max_send_size",
    "btl_sm_fbox_threshold", "btl_sm_max_inline_send", "btl_tcp_eager_limit", "btl_tcp_rndv_eager_limit", "pml_ucx_tls",
    "pml_ucx_devices", NULL};

/* Libraries whose presence in the process says which transport layer is in use. */
static const char *const transport_libs[] = {"libucp",   "libuct",  "libfabric", "libpsm", "libibverbs",
                                             "libxpmem", "libknem", "libcxi",    NULL};

static int opened;
static MPI_T_pvar_session session = MPI_T_PVAR_SESSION_NULL;

typedef struct {
  int index, klass, bind, continuous;
  MPI_Datatype type;
  char name[128];
  MPI_T_pvar_handle h;
  int count;
  double before, after; /* this rank's, summed over elements */
} pvar;

static pvar pv[PV_MAX];
static int npv;
static double sum_before[PV_MAX], sum_after[PV_MAX];
static int have_point;

static const char *class_name(int k) {
  switch (k) {
  case MPI_T_PVAR_CLASS_LEVEL:
    return "level";
  case MPI_T_PVAR_CLASS_SIZE:
    return "size";
  case MPI_T_PVAR_CLASS_PERCENTAGE:
    return "percentage";
  case MPI_T_PVAR_CLASS_HIGHWATERMARK:
    return "highwatermark";
  case MPI_T_PVAR_CLASS_LOWWATERMARK:
    return "lowwatermark";
  case MPI_T_PVAR_CLASS_COUNTER:
    return "counter";
  case MPI_T_PVAR_CLASS_AGGREGATE:
    return "aggregate";
  case MPI_T_PVAR_CLASS_TIMER:
    return "timer";
  default:
    return "other";
  }
}

static int numeric(MPI_Datatype t) {
  return t == MPI_INT || t == MPI_UNSIGNED || t == MPI_LONG || t == MPI_UNSIGNED_LONG || t == MPI_LONG_LONG ||
         t == MPI_UNSIGNED_LONG_LONG || t == MPI_DOUBLE || t == MPI_COUNT;
}

/* Elements of type t in buf, summed. */
static double sum_of(const void *buf, MPI_Datatype t, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) {
    if (t == MPI_INT)
      s += ((const int *)buf)[i];
    else if (t == MPI_UNSIGNED)
      s += ((const unsigned *)buf)[i];
    else if (t == MPI_LONG)
      s += (double)((const long *)buf)[i];
    else if (t == MPI_UNSIGNED_LONG)
      s += (double)((const unsigned long *)buf)[i];
    else if (t == MPI_LONG_LONG || t == MPI_COUNT)
      s += (double)((const long long *)buf)[i];
    else if (t == MPI_UNSIGNED_LONG_LONG)
      s += (double)((const unsigned long long *)buf)[i];
    else if (t == MPI_DOUBLE)
      s += ((const double *)buf)[i];
  }
  return s;
}

void mpit_open(void) {
  int level, provided, n = 0;
  /* at the MPI's own level: Open MPI 5 reports MPI_T's level to MPI_Query_thread afterwards */
  MPI_Query_thread(&level);
  if (MPI_T_init_thread(level, &provided) != MPI_SUCCESS)
    return;
  opened = 1;
  if (MPI_T_pvar_get_num(&n) != MPI_SUCCESS || n == 0 || MPI_T_pvar_session_create(&session) != MPI_SUCCESS)
    return;
  for (int i = 0; i < n && npv < PV_MAX; i++) {
    pvar *p = &pv[npv];
    char desc[8];
    int nl = sizeof p->name, dl = sizeof desc, verb, ro, atomic;
    MPI_T_enum e;
    if (MPI_T_pvar_get_info(i, p->name, &nl, &verb, &p->klass, &p->type, &e, desc, &dl, &p->bind, &ro, &p->continuous,
                            &atomic) != MPI_SUCCESS)
      continue;
    if (p->klass == MPI_T_PVAR_CLASS_STATE || p->klass == MPI_T_PVAR_CLASS_GENERIC || !numeric(p->type) ||
        (p->bind != MPI_T_BIND_NO_OBJECT && p->bind != MPI_T_BIND_MPI_COMM))
      continue;
    p->index = i;
    npv++;
  }
}

void mpit_close(void) {
  if (session != MPI_T_PVAR_SESSION_NULL)
    MPI_T_pvar_session_free(&session);
  if (opened)
    MPI_T_finalize();
  opened = 0;
}

static void read_all(int after) {
  static double buf[PV_WIDTH];
  for (int i = 0; i < npv; i++) {
    pvar *p = &pv[i];
    if (p->count < 0 || p->count > PV_WIDTH || MPI_T_pvar_read(session, p->h, buf) != MPI_SUCCESS) {
      p->before = p->after = 0;
      continue;
    }
    double v = sum_of(buf, p->type, p->count);
    *(after ? &p->after : &p->before) = v;
  }
}

void mpit_point_begin(MPI_Comm comm) {
  have_point = 0;
  if (!npv)
    return;
  for (int i = 0; i < npv; i++) {
    pvar *p = &pv[i];
    void *obj = p->bind == MPI_T_BIND_MPI_COMM ? (void *)&comm : NULL;
    if (MPI_T_pvar_handle_alloc(session, p->index, obj, &p->h, &p->count) != MPI_SUCCESS)
      p->count = -1;
    else if (!p->continuous)
      MPI_T_pvar_start(session, p->h);
  }
  read_all(0);
}

void mpit_point_end(MPI_Comm comm) {
  if (!npv)
    return;
  read_all(1);
  double mine[2 * PV_MAX], all[2 * PV_MAX];
  for (int i = 0; i < npv; i++) {
    pvar *p = &pv[i];
    mine[i] = p->before;
    mine[npv + i] = p->after;
    if (p->count >= 0) {
      if (!p->continuous)
        MPI_T_pvar_stop(session, p->h);
      MPI_T_pvar_handle_free(session, &p->h);
    }
  }
  MPI_Reduce(mine, all, 2 * npv, MPI_DOUBLE, MPI_SUM, 0, comm);
  for (int i = 0; i < npv; i++) {
    sum_before[i] = all[i];
    sum_after[i] = all[npv + i];
  }
  have_point = 1;
}

void mpit_write_point(json_w *w) {
  if (!have_point)
    return;
  int any = 0;
  for (int i = 0; i < npv; i++) {
    int first = 1; /* an MPI may declare a name more than once (one per component instance): summed */
    for (int j = 0; j < i; j++)
      first &= strcmp(pv[j].name, pv[i].name) != 0;
    if (!first)
      continue;
    double b = 0, a = 0;
    for (int j = i; j < npv; j++)
      if (!strcmp(pv[j].name, pv[i].name)) {
        b += sum_before[j];
        a += sum_after[j];
      }
    if (b == 0 && a == 0)
      continue;
    if (!any) {
      jw_key(w, "mpi_t");
      jw_arr_begin(w);
      any = 1;
    }
    jw_obj_begin(w);
    jw_kstr(w, "name", pv[i].name);
    jw_kstr(w, "class", class_name(pv[i].klass));
    jw_knum(w, "before", b);
    jw_knum(w, "after", a);
    jw_obj_end(w);
  }
  if (any)
    jw_arr_end(w);
}

static void write_cvar(json_w *w, int i, const char *name) {
  char desc[8];
  int nl = 0, dl = sizeof desc, verb, bind, scope, count;
  MPI_Datatype t;
  MPI_T_enum e;
  char got[256];
  nl = sizeof got;
  MPI_T_cvar_handle h;
  if (MPI_T_cvar_get_info(i, got, &nl, &verb, &t, &e, desc, &dl, &bind, &scope) != MPI_SUCCESS ||
      bind != MPI_T_BIND_NO_OBJECT || MPI_T_cvar_handle_alloc(i, NULL, &h, &count) != MPI_SUCCESS)
    return;
  if (t == MPI_CHAR && count <= 4096) { /* a string's count is its buffer's size (Open MPI: 2048) */
    char s[4097] = "";
    if (MPI_T_cvar_read(h, s) == MPI_SUCCESS)
      jw_kstr(w, name, s);
  } else if (numeric(t) && count == 1) {
    double buf[2] = {0, 0};
    if (MPI_T_cvar_read(h, buf) == MPI_SUCCESS)
      jw_knum(w, name, sum_of(buf, t, 1));
  }
  MPI_T_cvar_handle_free(&h);
}

void mpit_write_transport(json_w *w) {
  jw_key(w, "transport");
  jw_obj_begin(w);
  jw_key(w, "libraries"); /* as mapped in rank 0 after MPI_Init */
  jw_arr_begin(w);
  FILE *f = fopen("/proc/self/maps", "r");
  char line[1024], seen[16][128];
  int nseen = 0;
  while (f && fgets(line, sizeof line, f)) {
    char *path = strchr(line, '/');
    if (!path)
      continue;
    path[strcspn(path, "\n")] = '\0';
    const char *base = strrchr(path, '/') + 1;
    int hit = 0;
    for (int k = 0; transport_libs[k]; k++)
      hit |= strncmp(base, transport_libs[k], strlen(transport_libs[k])) == 0;
    for (int k = 0; k < nseen && hit; k++)
      hit = strcmp(seen[k], base) != 0;
    if (hit && nseen < 16) {
      snprintf(seen[nseen++], sizeof seen[0], "%s", base);
      jw_str(w, base);
    }
  }
  if (f)
    fclose(f);
  jw_arr_end(w);
  jw_key(w, "cvars");
  jw_obj_begin(w);
  for (int k = 0; opened && cvar_names[k]; k++) {
    int i;
    if (MPI_T_cvar_get_index(cvar_names[k], &i) == MPI_SUCCESS)
      write_cvar(w, i, cvar_names[k]);
  }
  jw_obj_end(w);
  jw_kint(w, "pvars", npv);
  jw_obj_end(w);
}
