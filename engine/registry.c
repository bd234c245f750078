/* The one table of tests.  Adding a test: write tests/<level>_<name>.c with its descriptor
 * and add one line to each list below (the declaration and the entry). */
#include "scope.h"

// clang-format off
extern const scope_test
    test_p2p_pingpong,
    test_p2p_pingping,
    test_p2p_stream,
    test_p2p_bistream,
    test_p2p_exchange,
    test_p2p_loggp,
    test_shm_pingpong,
    test_shm_stream,
    test_node_c2c,
    test_net_tcp_pingpong,
    test_net_tcp_stream,
    test_net_udp_pingpong,
    test_coll_barrier,
    test_coll_bcast,
    test_coll_allreduce,
    test_coll_reduce,
    test_coll_gather,
    test_coll_scatter,
    test_coll_allgather,
    test_coll_alltoall;

const scope_test *const scope_registry[] = {
    &test_p2p_pingpong,
    &test_p2p_pingping,
    &test_p2p_stream,
    &test_p2p_bistream,
    &test_p2p_exchange,
    &test_p2p_loggp,
    &test_shm_pingpong,
    &test_shm_stream,
    &test_node_c2c,
    &test_net_tcp_pingpong,
    &test_net_tcp_stream,
    &test_net_udp_pingpong,
    &test_coll_barrier,
    &test_coll_bcast,
    &test_coll_allreduce,
    &test_coll_reduce,
    &test_coll_gather,
    &test_coll_scatter,
    &test_coll_allgather,
    &test_coll_alltoall,
    NULL,
};
// clang-format on
