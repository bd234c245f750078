#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/json.h"
#include "core/pattern.h"
#include "records.h"
#include "scope.h"

/* Set by the engine from --pattern FILE. */
const scope_msg *scope_pattern = NULL;
const char *scope_io_dir = NULL;
int scope_pattern_len = 0;

const char *const scope_modes_all[] = {"standard", "sync", "ready", "buffered", NULL};
const char *const scope_modes_no_ready[] = {"standard", "sync", "buffered", NULL};
const char *const scope_bool_choices[] = {"no", "yes", NULL};
const char *const scope_receive_choices[] = {"slots", "one", NULL};
const char *const scope_reply_choices[] = {"echo", "own", NULL};

static int param_index(const scope_ctx *c, const char *name) {
  for (int k = 0; k < c->test->nparams; k++)
    if (strcmp(c->test->params[k].name, name) == 0)
      return k;
  return -1;
}

int scope_has_param(const scope_ctx *c, const char *name) {
  return param_index(c, name) >= 0;
}

long scope_param_get(const scope_ctx *c, const char *name) {
  int k = param_index(c, name);
  if (k < 0) { /* a test asking for a parameter it did not declare: a bug in the test */
    fprintf(stderr, "scope-engine: error: %s has no parameter '%s'\n", c->test->name, name);
    MPI_Abort(MPI_COMM_WORLD, 70);
  }
  return c->p[k];
}

int scope_send(int mode, const void *buf, size_t n, int dst, int tag, MPI_Comm comm) {
  switch (mode) {
  case MODE_SYNC:
    return MPI_Ssend(buf, (int)n, MPI_BYTE, dst, tag, comm);
  case MODE_READY:
    return MPI_Rsend(buf, (int)n, MPI_BYTE, dst, tag, comm);
  case MODE_BUFFERED:
    return MPI_Bsend(buf, (int)n, MPI_BYTE, dst, tag, comm);
  default:
    return MPI_Send(buf, (int)n, MPI_BYTE, dst, tag, comm);
  }
}

int scope_isend(int mode, const void *buf, size_t n, int dst, int tag, MPI_Comm comm, MPI_Request *req) {
  switch (mode) {
  case MODE_SYNC:
    return MPI_Issend(buf, (int)n, MPI_BYTE, dst, tag, comm, req);
  case MODE_READY:
    return MPI_Irsend(buf, (int)n, MPI_BYTE, dst, tag, comm, req);
  case MODE_BUFFERED:
    return MPI_Ibsend(buf, (int)n, MPI_BYTE, dst, tag, comm, req);
  default:
    return MPI_Isend(buf, (int)n, MPI_BYTE, dst, tag, comm, req);
  }
}

static void *bsend_buf;

int scope_bsend_attach(size_t msgs, size_t n) {
  size_t bytes = msgs * (n + MPI_BSEND_OVERHEAD) + 1024;
  bsend_buf = malloc(bytes);
  if (!bsend_buf)
    return -1;
  return MPI_Buffer_attach(bsend_buf, (int)bytes);
}

void scope_bsend_detach(void) {
  void *b;
  int sz;
  if (!bsend_buf)
    return;
  MPI_Buffer_detach(&b, &sz);
  free(bsend_buf);
  bsend_buf = NULL;
}

void scope_cancel_all(MPI_Request *reqs, int n) {
  for (int i = 0; i < n; i++)
    if (reqs[i] != MPI_REQUEST_NULL)
      MPI_Cancel(&reqs[i]);
  MPI_Waitall(n, reqs, MPI_STATUSES_IGNORE);
}

size_t scope_check(const void *buf, size_t n, uint64_t seed, int src, size_t *first_bad) {
  return pattern_check(buf, n, seed, src, first_bad);
}

void *scope_shm_map(const scope_ctx *c, size_t bytes) {
  static unsigned serial;
  char name[64] = {0};
  void *p = MAP_FAILED;
  int ok = 1, all_ok;
  if (c->rank == 0) {
    snprintf(name, sizeof name, "/scope.%ld.%u", (long)getpid(), serial++);
    int fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
    ok = fd >= 0 && ftruncate(fd, (off_t)bytes) == 0;
    if (ok)
      p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (fd >= 0)
      close(fd);
    ok = ok && p != MAP_FAILED;
  }
  MPI_Bcast(name, sizeof name, MPI_CHAR, 0, c->comm);
  if (c->rank == 1) {
    int fd = shm_open(name, O_RDWR, 0600);
    if (fd >= 0) {
      p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
      close(fd);
    }
    ok = p != MAP_FAILED;
  }
  MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, c->comm);
  if (c->rank == 0 && name[0])
    shm_unlink(name);
  if (!all_ok) {
    if (p != MAP_FAILED)
      munmap(p, bytes);
    return NULL;
  }
  return c->rank < 2 ? p : (void *)1; /* other ranks take no part but must not read NULL as failure */
}

void scope_shm_unmap(void *p, size_t bytes) {
  if (p && p != (void *)1)
    munmap(p, bytes);
}

int scope_pin(int cpu, void *old_mask, size_t mask_size) {
  if (sched_getaffinity(0, mask_size, (cpu_set_t *)old_mask))
    return -1;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return sched_setaffinity(0, sizeof set, &set);
}

void scope_unpin(const void *old_mask, size_t mask_size) {
  sched_setaffinity(0, mask_size, (const cpu_set_t *)old_mask);
}

size_t scope_check_at(const void *buf, size_t n, uint64_t seed, int src, size_t offset, size_t *first_bad) {
  return pattern_check_at(buf, n, seed, src, offset, first_bad);
}

int scope_faulted;

void scope_fault(const scope_ctx *c, const char *kind, const char *message, const char *path) {
  if (c->rank == 0) {
    json_w *w = rec_writer();
    jw_obj_begin(w);
    jw_kstr(w, "type", "fault");
    jw_kstr(w, "test", c->test->name);
    jw_kstr(w, "kind", kind);
    jw_kstr(w, "message", message);
    jw_kstr(w, "path", path ? path : "");
    jw_obj_end(w);
    rec_emit();
    fprintf(stderr, "scope-engine: fault: %s\n", message);
  }
  scope_faulted = 1;
}
