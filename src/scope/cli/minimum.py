"""The minimum configuration the baseline needs (Table 8.1 in today's terms, modules.MINIMUM),
checked against this machine and the stored layer tests: what `scope doctor --module baseline`
prints and what `scope run --module baseline` refuses to run below (or runs with --force and
marks)."""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from scope.catalog.modules import MINIMUM
from scope.catalog.names import PINGPONG, STREAM
from scope.cores import usable_cores
from scope.run.checks import available_memory


@dataclass
class Requirement:
    name: str
    need: str
    found: str
    ok: bool | None  # None: not known here (nothing measured yet, or other hosts)


def _latest(store, test: str, mpi_library: str | None):
    if store is None:
        return None
    rid = store.latest_with(test, mpi_library)
    return store.load_run(rid, samples=False) if rid else None


def requirements(
    store, ranks: int, hosts: list[str] | None, io_dir: str | None, mpi_library: str | None = None
) -> list[Requirement]:
    """What the baseline needs against what is here; the latency and bandwidth from the latest
    runs made with `mpi_library` (another MPI's figures say nothing of this one)."""
    out = []
    unmeasured = "not measured yet" + (" with this MPI" if mpi_library else "") + " (the baseline measures it)"
    here = not hosts
    cores = usable_cores()
    out.append(
        Requirement("cores", f">= {MINIMUM['cores']} (one per rank)", f"{cores} here" if here else "other hosts",
                    cores >= max(MINIMUM["cores"], ranks) if here else None)
    )  # fmt: skip
    mem = available_memory() if here else None
    found = f"{mem / 2**30:.1f} GiB available" if mem else "not known"
    need = f">= {MINIMUM['memory_bytes'] / 2**30:.0f} GiB available"
    out.append(Requirement("memory", need, found, mem >= MINIMUM["memory_bytes"] if mem else None))
    where = Path(io_dir or tempfile.gettempdir())
    free = shutil.disk_usage(where).free if where.is_dir() and os.access(where, os.W_OK) else 0
    out.append(
        Requirement("io space", f">= {MINIMUM['io_bytes'] / 1e6:,.0f} MB free in the io directory",
                    f"{free / 1e6:,.0f} MB free in {where}", free >= MINIMUM["io_bytes"])
    )  # fmt: skip
    lat = _latest(store, PINGPONG, mpi_library)
    pts = sorted((p for p in lat.points if p.test == PINGPONG and p.median), key=lambda p: p.size or 0) if lat else []
    out.append(
        Requirement("latency", f"< {MINIMUM['latency_us']:g} us (p2p.pingpong, smallest size)",
                    f"{pts[0].median:.2f} us (run {lat.id})" if pts else unmeasured,
                    pts[0].median < MINIMUM["latency_us"] if pts else None)
    )  # fmt: skip
    bw = _latest(store, STREAM, mpi_library)
    rates = [p.bw_median for p in bw.points if p.test == STREAM and p.bw_median] if bw else []
    out.append(
        Requirement("bandwidth", f">= {MINIMUM['bandwidth_MBps']:g} MB/s (p2p.stream peak; 10 Mbit/s)",
                    f"{max(rates):,.0f} MB/s (run {bw.id})" if rates else unmeasured,
                    max(rates) >= MINIMUM["bandwidth_MBps"] if rates else None)
    )  # fmt: skip
    return out


def below(reqs: list[Requirement]) -> list[str]:
    return [f"{r.name}: needs {r.need}, found {r.found}" for r in reqs if r.ok is False]


def render(reqs: list[Requirement]) -> str:
    mark = {True: "ok  ", False: "FAIL", None: "?   "}
    return "\n".join(f"[{mark[r.ok]}] {r.name:<10} needs {r.need}; {r.found}" for r in reqs)
