/* MPI-IO rewrite (bonnie's rewrite, SCOPE App. E.4): see io.h. */
#include "io.h"

SCOPE_IO(io_rewrite, "io.rewrite", IO_REWRITE, "MPI-IO rewrite: each block read, dirtied and written back in place",
         "one pass over the whole file, each block read and written once, MPI_File_sync included (slowest rank)",
         "peer:bonnie_rewrite");
