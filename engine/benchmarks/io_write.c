/* MPI-IO write (bonnie's write, SCOPE App. E.2): see io.h. */
#include "io.h"

SCOPE_IO(io_write, "io.write", IO_WRITE, "MPI-IO write of a fresh file in blocks, synced to the device",
         "one pass writing the whole file, MPI_File_sync included (slowest rank)", "peer:ior_write");
