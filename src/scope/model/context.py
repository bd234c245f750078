"""A run's context as the store reads it: the MPI, placement, timer and what the front end
added (testbed, module, io, pattern, Slurm)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any


def finite(v) -> float | None:
    """A stored number, or None for missing and non-finite values."""
    if v is None:
        return None
    v = float(v)
    return v if math.isfinite(v) else None


@dataclass(frozen=True)
class Placement:
    rank: int
    host: str
    node: int
    cpu: int | None = None
    netns: str | None = None


@dataclass(frozen=True)
class Timer:
    selected: str | None
    overhead_ns: float | None
    resolution_ns: float | None


@dataclass
class Context:
    mpi_library: str
    engine_version: str | None
    mpicc: str | None
    ranks: int | None
    placement: list[Placement]
    oversubscribed: bool
    timer: Timer
    settings: dict[str, Any]
    env: dict[str, str]
    testbed: dict | None
    pattern: dict | None
    blas: str | None = None  # the BLAS node.dgemm multiplies with (the engine's build)
    module: dict | None = None  # the module the run was (modules.py): name, version, digest, ...
    io: dict | None = None  # the io tests' directory and its file system
    nodes: list = field(default_factory=list)  # each node as its own first rank described it
    slurm: dict | None = None  # the Slurm job the run was, when launched with srun
    mpi_chosen: str | None = None  # why this MPI's wrapper was chosen (run/toolchain.py's order)
    thread_level: str | None = None  # what MPI_Init_thread provided (records before it: None)
    transport: dict | None = None  # what the MPI loaded and reports (analysis/transport.py reads it)
    engine_source: str | None = None  # digest of the engine's source (runs before it: None)
    sim: dict | None = None  # a simulated run's SimGrid, platform and its digest (run/sim.py)

    @classmethod
    def of(cls, rec: dict) -> Context:
        t = rec.get("timer") or {}
        return cls(
            mpi_library=((rec.get("mpi") or {}).get("library") or "").strip(),
            engine_version=(rec.get("engine") or {}).get("version"),
            mpicc=(rec.get("engine") or {}).get("mpicc"),
            ranks=rec.get("ranks"),
            placement=[
                Placement(p["rank"], p.get("host", "?"), p.get("node", 0), p.get("cpu"), p.get("netns"))
                for p in rec.get("placement", [])
            ],
            oversubscribed=bool(rec.get("oversubscribed")),
            timer=Timer(t.get("selected"), finite(t.get("overhead_ns")), finite(t.get("resolution_ns"))),
            settings=dict(rec.get("settings") or {}),
            env=dict(rec.get("env") or {}),
            testbed=rec.get("testbed"),
            pattern=rec.get("pattern"),
            blas=(rec.get("engine") or {}).get("blas"),
            module=rec.get("module"),
            io=rec.get("io"),
            nodes=list(rec.get("nodes") or ()),
            mpi_chosen=(rec.get("toolchain") or {}).get("why"),
            slurm=rec.get("slurm"),
            thread_level=(rec.get("mpi") or {}).get("thread_level"),
            transport=(rec.get("mpi") or {}).get("transport"),
            engine_source=(rec.get("engine") or {}).get("source"),
            sim=rec.get("sim"),
        )

    @property
    def hosts(self) -> list[str]:
        return sorted({p.host for p in self.placement})

    def rank(self, r: int) -> Placement | None:
        return next((p for p in self.placement if p.rank == r), None)
