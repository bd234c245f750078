/* The one table of tests.  Adding a test: write benchmarks/<level>_<name>.c with its
 * descriptor `test_<level>_<name>` and add one line X(<level>_<name>) below. */
#include "scope.h"

// clang-format off
#define SCOPE_TESTS(X) \
  X(p2p_pingpong) \
  X(p2p_pingping) \
  X(p2p_stream) \
  X(p2p_bistream) \
  X(p2p_exchange) \
  X(p2p_loggp) \
  X(shm_pingpong) \
  X(shm_stream) \
  X(node_c2c) \
  X(node_stream) \
  X(node_dgemm) \
  X(net_tcp_pingpong) \
  X(net_tcp_stream) \
  X(net_udp_pingpong) \
  X(coll_barrier) \
  X(coll_bcast) \
  X(coll_allreduce) \
  X(coll_reduce) \
  X(coll_gather) \
  X(coll_scatter) \
  X(coll_allgather) \
  X(coll_alltoall) \
  X(coll_gatherv) \
  X(coll_scatterv) \
  X(coll_allgatherv) \
  X(coll_alltoallv) \
  X(coll_reduce_scatter) \
  X(coll_reduce_scatter_block) \
  X(coll_scan) \
  X(coll_neighbor_allgather) \
  X(coll_neighbor_alltoall) \
  X(p2p_ring) \
  X(p2p_multipair) \
  X(p2p_mbw_mr) \
  X(p2p_pattern) \
  X(p2p_allpairs) \
  X(rma_put) \
  X(rma_get) \
  X(rma_acc) \
  X(rma_get_acc) \
  X(rma_fetch_op) \
  X(rma_cas) \
  X(rma_hotspot) \
  X(kernel_matmul) \
  X(kernel_cannon) \
  X(kernel_jacobi) \
  X(kernel_psrs) \
  X(kernel_multigrid) \
  X(app_ep) \
  X(app_ft) \
  X(app_lu) \
  X(io_write) \
  X(io_read) \
  X(io_rewrite) \
// clang-format on

#define DECLARE(id) extern const scope_test test_##id;
SCOPE_TESTS(DECLARE)

#define ENTRY(id) &test_##id,
const scope_test *const scope_registry[] = {SCOPE_TESTS(ENTRY) NULL};
