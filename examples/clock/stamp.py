"""The halo exchange of stamp.c from an mpi4py program (docs/clock-library.md):
mpiexec -n 2 python stamp.py run1 && scope import run1 && scope report last -o run1.html"""

import sys

from mpi4py import MPI

from scope.clock import Clock

comm = MPI.COMM_WORLD
out, inn = bytearray(32768), bytearray(32768)
with Clock(comm) as clk:
    clk.events_open(sys.argv[1] if len(sys.argv) > 1 else "events")
    for _ in range(20):
        clk.event("compute")
        sum(range(20000 * (1 + comm.rank % 2)))  # the odd ranks work twice as long
        clk.event("halo")
        comm.Sendrecv(out, (comm.rank + 1) % comm.size, recvbuf=inn, source=(comm.rank - 1) % comm.size)
        clk.event("halo_done")
        clk.keep(1000, 0.01)  # collective: synchronises again only when the bound needs it
    clk.events_close()
    clk.sync()  # collective: the bound back to its floor
    t, bound = clk.global_ns()
    if comm.rank == comm.size - 1:
        print(
            f"stamp.py: {comm.size} ranks on {clk.timer}, rank {comm.rank}'s global time {t:.0f} ns +- {bound:.1f} ns "
            f"(local {clk.local_ns():.0f} ns; the last synchronisation took {clk.sync_seconds * 1e3:.1f} ms)"
        )
