"""What the MPI chose (issue 31): the transport layer it loaded, the protocol thresholds and
selections it reports through MPI_T, the performance variables that moved while a point was
measured, and which thresholds fall inside the protocol switches a piecewise fit found, so a
bend in a curve is read beside the setting that explains it.  The engine records the raw facts
(context `mpi.transport`, a point's `mpi_t`); this module is the one reader of them."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from scope.analysis.breakpoints import Piecewise
from scope.model import Run

# What each recorded threshold means, in bytes of one message (MPI_T names, MPICH 5, Open MPI 5)
MEANING = {
    "MPIR_CVAR_CH4_SHM_POSIX_IQUEUE_CELL_SIZE": "MPICH shared memory: the eager cell; larger messages go another way",
    "MPIR_CVAR_CH4_IPC_CMA_P2P_THRESHOLD": "MPICH on a node: single-copy (CMA) above this",
    "MPIR_CVAR_CH4_IPC_XPMEM_P2P_THRESHOLD": "MPICH on a node: XPMEM single-copy above this (with XPMEM loaded)",
    "MPIR_CVAR_CH4_OFI_EAGER_THRESHOLD": "MPICH libfabric: eager up to this (-1: the provider's)",
    "btl_sm_eager_limit": "Open MPI sm: eager (one copy through shared memory) up to this",
    "btl_sm_rndv_eager_limit": "Open MPI sm: the first fragment of a rendezvous",
    "btl_sm_max_send_size": "Open MPI sm: fragments of a pipelined send",
    "btl_sm_max_inline_send": "Open MPI sm: sent inline up to this",
    "btl_tcp_eager_limit": "Open MPI tcp (between nodes): eager up to this",
    "btl_tcp_rndv_eager_limit": "Open MPI tcp (between nodes): the first fragment of a rendezvous",
}
# The variables that select a path rather than size one
SELECTORS = ("MPIR_CVAR_CH4_NETMOD", "MPIR_CVAR_CH4_SHM", "MPIR_CVAR_CH4_SHM_POSIX_EAGER", "pml", "btl", "mtl",
             "smsc", "pml_ucx_tls")  # fmt: skip
LAYERS = {"libucp": "UCX", "libfabric": "libfabric (OFI)", "libpsm": "PSM", "libibverbs": "verbs",
          "libxpmem": "XPMEM", "libknem": "KNEM", "libcxi": "CXI"}  # fmt: skip


@dataclass
class Threshold:
    name: str
    bytes: int
    meaning: str


@dataclass
class PvarMove:
    test: str
    params: dict  # the series' parameters (the size apart)
    size: int | None
    name: str
    klass: str
    before: float
    after: float


@dataclass
class SwitchNote:
    switch: tuple[int, int]  # last size of one segment, first of the next
    thresholds: list[Threshold]


@dataclass
class TransportFacts:
    device: str | None  # MPICH's configured device line (e.g. "ch4:ucx ofi")
    layers: list[str]  # transport layers the process loaded, with their plugins
    selected: dict[str, str]  # selections the MPI reports ("" = its default)
    thresholds: list[Threshold]
    pvars: int  # performance variables sampled around each point
    moves: list[PvarMove] = field(default_factory=list)

    def notes(self, pw: Piecewise | None) -> list[SwitchNote]:
        """Each switch of a piecewise fit with the thresholds at or inside it (a <= T <= b:
        whether an MPI switches above T or at T, the last size before the switch is at most T and
        the first after it at least T; MPICH's 8 KiB cell takes an 8 KiB message off the eager
        path, since the cell holds a header too)."""
        if pw is None:
            return []
        return [SwitchNote((a, b), [t for t in self.thresholds if a <= t.bytes <= b]) for a, b in pw.switches]


def transport_facts(run: Run) -> TransportFacts | None:
    ctx = run.context
    raw = ctx.transport if ctx else None
    if not raw:
        return None
    dev = re.search(r"MPICH Device:\s*(.+)", ctx.mpi_library or "")
    libs = list(raw.get("libraries") or [])
    layers = []
    for prefix, name in LAYERS.items():
        if any(lib.startswith(prefix) for lib in libs):
            plugins = sorted({m.group(1) for lib in libs if (m := re.match(r"libuct_(\w+)", lib))})
            layers.append(name + (f" (transports: {', '.join(plugins)})" if name == "UCX" and plugins else ""))
    cvars = raw.get("cvars") or {}
    selected = {k: str(cvars[k]) for k in SELECTORS if k in cvars}
    thresholds = [Threshold(k, int(v), MEANING[k]) for k, v in cvars.items()
                  if k in MEANING and isinstance(v, (int, float)) and v > 0]  # fmt: skip
    # a point's record is decoded only when the MPI had variables to sample: a run without them
    # (MPICH) has no `mpi_t` anywhere, and decoding every record of a large run would be wasted
    pvars = int(raw.get("pvars") or 0)
    moves = [PvarMove(p.test, p.params, p.size, m["name"], m.get("class", "?"), float(m["before"]), float(m["after"]))
             for p in run.points if pvars for m in p.record.get("mpi_t") or ()]  # fmt: skip
    device = dev.group(1).strip() if dev else None
    thresholds.sort(key=lambda t: t.bytes)
    return TransportFacts(device, layers, selected, thresholds, pvars, moves)
