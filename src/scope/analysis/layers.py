"""The layer table (SCOPE §6.5.1, ParaStation2 Table 3): latency, r_inf and n_half per layer,
and what each layer adds over the one below it.

Which test measures which layer is the engine's word: a test with the role `latency:LAYER`
gives the layer's latency, one with `bandwidth:LAYER` its bandwidth.  The layer `MPI` is
named by where ranks 0 and 1 ran: within a node (MPI's shared memory allowed) or across the
network (different nodes, or MPICH's local path disabled by MPIR_CVAR_NOLOCAL=1).

Layers form stacks, and a layer is compared only with the one it is built on: within a node
the cache line carries the shared-memory channel, which carries MPI; across a network TCP
sockets carry MPI over TCP.  TCP sockets on one node (loopback) are no layer under MPI's
shared memory, so the two stacks are side by side, never one above the other.

A layer's row is quoted at the test's default parameters (a sweep of send modes or window
flavours would otherwise mix).  The one-sided rows (`rma.put`, `rma.get`) sit on MPI rather than
below it: what they add is over the MPI layer of their own run, a get over its round trip
(2 x RTT/2, since a get is one), ParaStation2's Table 3 with the one-sided layer in it."""

from __future__ import annotations

from dataclasses import dataclass

from scope.analysis.hockney import fit_hockney
from scope.model import Context, Point, Run

# From the hardware up, stack by stack: the order of the table.
ORDER = [
    "cache line",
    "shared-memory channel",
    "MPI within a node",
    "TCP sockets",
    "MPI over the network",
    "MPI one-sided put",
    "MPI one-sided get",
]
# what each layer is built on (the one-sided layers: on the MPI layer of their own run)
BUILT_ON = {
    "shared-memory channel": "cache line",
    "MPI within a node": "shared-memory channel",
    "MPI over the network": "TCP sockets",
}
STACK = {
    "cache line": "within a node",
    "shared-memory channel": "within a node",
    "MPI within a node": "within a node",
    "TCP sockets": "across the network",
    "MPI over the network": "across the network",
}
# layers built on MPI, and how many MPI one-way latencies their own operation is
ON_MPI = {"MPI one-sided put": 1, "MPI one-sided get": 2}


@dataclass
class Layer:
    name: str
    run: int
    latency_us: float  # the latency test's median at its smallest size
    latency_size: int
    min_us: float  # SCOPE's own definition (§6.5.1): the minimum RTT/2 at the smallest size
    rinf_MBps: float | None  # Hockney fit of the bandwidth test (else of the latency test)
    nhalf_bytes: float | None
    source: str
    # What it adds over the layer below in the table.  SCOPE's latency (§6.5.1) is the minimum
    # RTT/2, each layer's floor: medians of two layers that cross one link differ by less than
    # their noise.
    adds_us: float | None = None
    rinf_vs_below: float | None = None
    over: str | None = None  # the layer adds_us and rinf_vs_below are over: the one it is built on
    stack: str = ""  # within a node | across the network | on MPI


def mpi_layer(ctx: Context | None) -> str:
    a, b = (ctx.rank(0), ctx.rank(1)) if ctx else (None, None)
    same = a is not None and b is not None and a.node == b.node
    if same and ctx.env.get("MPIR_CVAR_NOLOCAL") != "1":
        return "MPI within a node"
    return "MPI over the network"


def _sorted(pts: list[Point], run: Run) -> list[Point]:
    """The points of the setting nearest the test's defaults, by size."""
    pts = [p for p in pts if p.median]
    by_test: dict[str, list[Point]] = {}
    for p in pts:
        by_test.setdefault(p.test, []).append(p)
    near = [q for test, ps in by_test.items() for q in run.info(test).nearest_default(ps)]
    return sorted(near, key=lambda p: p.size or 0)


def layers_of(runs: list[Run]) -> list[Layer]:
    """The layers measured in these runs; a layer found in an earlier run is kept."""
    found: dict[str, Layer] = {}
    mpi_of: dict[str, str] = {}  # a one-sided layer -> the MPI layer of its run
    for run in runs:
        if run.imported:
            continue  # imported averages: no placement, no minimum, no layer
        latency: dict[str, list[Point]] = {}
        bandwidth: dict[str, list[Point]] = {}
        for p in run.points:
            info = run.info(p.test)
            for role, into in (("latency", latency), ("bandwidth", bandwidth)):
                layer = info.role(role)
                if layer:
                    into.setdefault(layer, []).append(p)
        for layer, pts in latency.items():
            name = mpi_layer(run.context) if layer == "MPI" else layer
            lat = _sorted(pts, run)
            if not lat or name in found:
                continue
            mpi_of[name] = mpi_layer(run.context)
            bw = _sorted(bandwidth.get(layer, []), run)
            fit_pts = bw if len(bw) >= 3 else lat
            fit = fit_hockney([p.size for p in fit_pts], [p.median for p in fit_pts])
            source = lat[0].test + (f" + {bw[0].test}" if bw else "")
            found[name] = Layer(
                name,
                run.id,
                lat[0].median,
                lat[0].size or 0,
                lat[0].min,
                fit.rinf_MBps if fit else None,
                fit.nhalf_bytes if fit else None,
                source,
            )
    table = [found[n] for n in ORDER if n in found] + [v for k, v in found.items() if k not in ORDER]
    for ly in table:
        ly.stack = STACK.get(ly.name, "on MPI" if ly.name in ON_MPI else "")
        below = found.get(BUILT_ON.get(ly.name, ""))
        if below:
            _adds(ly, below, 1)
            ly.over = below.name
        base = found.get(mpi_of.get(ly.name, ""))
        if ly.name in ON_MPI and base:
            _adds(ly, base, ON_MPI[ly.name])
            ly.over = base.name + (" round trip" if ON_MPI[ly.name] == 2 else "")
    return table


def _adds(ly: Layer, below: Layer, times: int) -> None:
    ly.adds_us = ly.min_us - times * below.min_us
    if ly.rinf_MBps and below.rinf_MBps:
        ly.rinf_vs_below = ly.rinf_MBps / below.rinf_MBps
