/* MPI-IO read (bonnie's read, SCOPE App. E.3): see io.h. */
#include "io.h"

SCOPE_IO(io_read, "io.read", IO_READ, "MPI-IO read of a file in blocks, its pages evicted from the cache first",
         "one pass reading the whole file (slowest rank)", "peer:ior_read");
