"""The engine's tests the front end refers to by name, each for the figure it plays a part in.
Everywhere else a test is chosen by its descriptor (level, timing, roles); a test renamed in the
engine is renamed here once, and tests/test_records.py checks every name against the engine's
registry."""

PINGPONG = "p2p.pingpong"  # MPI latency: the layer table's reference, Hockney's t0, predict's latency
STREAM = "p2p.stream"  # MPI bandwidth: the datasheet's peak, Table 8.1's floor
LOGGP = "p2p.loggp"  # LogGP's o, a simulated platform's host time of a send
PINGPING = "p2p.pingping"  # an exchange: a simulated platform's host time of a nonblocking send
NODE_STREAM = "node.stream"  # memory bandwidth (STREAM triad)
DGEMM = "node.dgemm"  # one core's multiply rate: the kernels' compute reference
ALLREDUCE = "coll.allreduce"
BARRIER = "coll.barrier"
RMA_PUT = "rma.put"
RMA_GET = "rma.get"  # one-sided library overhead against PINGPONG
MATMUL = "kernel.matmul"
CANNON = "kernel.cannon"
JACOBI = "kernel.jacobi"
MULTIGRID = "kernel.multigrid"
PSRS = "kernel.psrs"
APP_EP = "app.ep"
APP_FT = "app.ft"  # its transposes' overlap; the standard module's problem classes
APP_LU = "app.lu"
IO_WRITE = "io.write"
IO_READ = "io.read"

ALL = tuple(v for k, v in dict(globals()).items() if k.isupper())
