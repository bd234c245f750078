#include <stdlib.h>

#include "core/pattern.h"
#include "scope.h"

const char *const scope_modes_all[] = {"standard", "sync", "ready", "buffered", NULL};
const char *const scope_modes_no_ready[] = {"standard", "sync", "buffered", NULL};
const char *const scope_bool_choices[] = {"no", "yes", NULL};

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
