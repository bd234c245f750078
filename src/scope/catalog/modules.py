"""SCOPE's modules (thesis §8.1, Table 8.1): what turns a set of tests into a tool an
administrator runs on any cluster.

- **baseline**: fixed tests, sizes, process count and problem classes, versioned, so two
  baseline runs from different clusters compare point by point.  Its identity is its version
  and a digest of everything that fixes its workload (tests, sizes, the parameter values it
  sets and the defaults of the rest, read from the engine's descriptors), so a change of an
  engine default shows as a different workload, not as a faster cluster.
- **standard**: the same tests scaled to this cluster: every rank, process counts in powers of
  two, sizes up to what memory allows, problem classes up to what fits memory and the time
  given (`--time-limit`).
- **screen**: every pair of ranks (p2p.allpairs) and every node at once (STREAM's triad,
  DGEMM), so the slow link and the slow host are flagged (analysis/screen.py).
- **advanced**: the baseline with the user's own changes (sizes, parameters, ranks, an
  optimised build), marked as such and reported apart.

A module is one run: the engine takes per-test sizes (`--test-sizes`), so `scope compare`, the
report and the store need nothing new."""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field, replace

from scope.errors import USAGE, ScopeError


@dataclass(frozen=True)
class Module:
    name: str
    version: str
    summary: str
    tests: tuple[str, ...]
    ranks: int
    sizes: str  # the sized tests' sizes unless test_sizes says otherwise
    test_sizes: tuple[str, ...] = ()
    params: tuple[str, ...] = ()  # NAME=VALUES, as -p takes them
    procs: str = "all"
    launches: int = 3
    budget: float = 1.0
    notes: tuple[str, ...] = field(default=(), compare=False)

    def engine_options(self) -> dict[str, object]:
        return {
            "sizes": self.sizes,
            "test-sizes": list(self.test_sizes),
            "param": list(self.params),
            "procs": self.procs,
            "budget": self.budget,
        }

    def digest(self, registry: list[dict], measured_with: dict | None = None) -> str:
        """Everything that fixes the workload, with the defaults of the parameters not set, and
        the options given that change how it is measured (`measured_with`: --timing, --offcache,
        --loop ...), so two runs of one module measured otherwise do not compare as equals."""
        defaults = {
            r["name"]: {p["name"]: p["default"] for p in r.get("params") or ()}
            for r in registry
            if r["name"] in self.tests
        }
        what = [self.tests, self.ranks, self.sizes, self.test_sizes, self.params, self.procs, defaults]
        if measured_with:  # absent when none was given: the digests of earlier runs stay as they were
            what.append(measured_with)
        return hashlib.sha256(json.dumps(what, sort_keys=True).encode()).hexdigest()[:12]


BASELINE = Module(
    name="baseline",
    version="1",
    summary="fixed tests and workloads at 2 processes: compares clusters point by point",
    tests=(
        "node.stream",
        "node.dgemm",
        "p2p.pingpong",
        "p2p.stream",
        "coll.barrier",
        "coll.bcast",
        "coll.allreduce",
        "coll.alltoall",
        "rma.put",
        "rma.get",
        "kernel.matmul",
        "kernel.jacobi",
        "app.ep",
        "app.ft",
        "io.write",
        "io.read",
    ),  # fmt: skip
    ranks=2,
    sizes="0,8-2M:x8",
    test_sizes=("coll.*=8,1K,64K", "rma.*=8,1K,64K", "io.*=1M"),
    params=("class=S", "total=268435456"),
)

# Table 8.1 in today's terms: what the baseline needs to give sensible, comparable figures.
# The thesis asked for > 4 nodes of 32 MB, 512 KB of cache, 10 Mbit/s and < 250 us; its
# network figures still stand as a floor, the rest is what the baseline's workload needs.
MINIMUM = {
    "cores": 2,  # one per rank: oversubscribed timings do not represent the hardware
    "memory_bytes": 2 << 30,  # available on the node: app.ft class S, node.dgemm, buffers
    "io_bytes": int(268435456 * 1.1),  # free in --io-dir: the io tests' file
    "mpi_standard": (3, 0),  # one-sided lock_all, flush (rma.*, app.lu)
    "latency_us": 250.0,  # p2p.pingpong at its smallest size (Table 8.1: < 250 us)
    "bandwidth_MBps": 1.25,  # p2p.stream peak (Table 8.1: 10 Mbit/s or better)
}

NAMES = ("baseline", "standard", "advanced", "screen")
TIME_LIMIT_S = 600.0  # the standard module's time to fit in unless --time-limit says
WORKLOAD = ("sizes", "test-sizes", "param", "procs")  # the options that fix a module's workload
# options that change neither what is measured nor how: where files go, the machine probes
NOT_MEASUREMENT = ("io-dir", "no-canary")


def advanced(changes: dict[str, object], ranks: int | None) -> tuple[Module, list[str]]:
    """The baseline with the user's changes; the list says what changed."""
    m, said = BASELINE, []
    if ranks and ranks != m.ranks:
        m, said = replace(m, ranks=ranks), said + [f"ranks {ranks} (baseline {BASELINE.ranks})"]
    if "sizes" in changes:
        m, said = replace(m, sizes=str(changes["sizes"])), said + [f"sizes {changes['sizes']}"]
    if changes.get("test-sizes"):
        ts = tuple(changes["test-sizes"])  # type: ignore[arg-type]
        m, said = replace(m, test_sizes=m.test_sizes + ts), said + [f"test sizes {', '.join(ts)}"]
    if changes.get("param"):
        ps = tuple(changes["param"])  # type: ignore[arg-type]
        m, said = replace(m, params=m.params + ps), said + [f"parameters {', '.join(ps)}"]
    if "procs" in changes:
        m, said = replace(m, procs=str(changes["procs"])), said + [f"procs {changes['procs']}"]
    if "budget" in changes:  # how long a point may take, not what it measures
        m = replace(m, budget=float(changes["budget"]))  # type: ignore[arg-type]
    return replace(m, name="advanced", summary="the baseline with your changes, reported apart"), said


def _pow2_at_most(n: float) -> int:
    return 1 << max(0, int(math.log2(max(n, 1))))


# Rough cost of one execution, for choosing problem classes that finish in the time given:
# NAS FT's 5 N log2 N flops per 3-D FFT over its iterations and the initial one (NPB report
# RNR-94-007), at a conservative 0.5 GFLOP/s per rank.  The classes, and the memory each needs,
# are the engine's (app.ft's `class` choices and its memory declaration, asked through the
# plan): a module cannot offer a class the test refuses.  N is read from that memory at
# app.ft's 88 bytes a grid point (5 complex grids and a real one, its note says).
RATE_FLOPS = 0.5e9
FT_ITERATIONS = 6
FT_BYTES_PER_POINT = 88


def ft_seconds(memory_bytes: float, ranks: int) -> float:
    n = memory_bytes / FT_BYTES_PER_POINT
    return 5 * n * math.log2(n) * (FT_ITERATIONS + 1) / (RATE_FLOPS * ranks)


def standard(ranks: int, memory: int, time_limit: float, ft_memory: dict[str, float]) -> tuple[Module, list[str]]:
    """The baseline's tests scaled to `ranks` processes and `memory` bytes available per node,
    within `time_limit` seconds; the reasons for each choice.  `ft_memory`: each class app.ft
    offers, in the engine's order, with the bytes the engine says it needs."""
    points_estimate = 60  # the baseline's ~40 points, more process counts
    budget = max(0.2, min(2.0, 0.5 * time_limit / points_estimate))
    p2p_cap = min(64 << 20, _pow2_at_most(memory / 16 / max(ranks, 1)))
    coll_cap = max(64 << 10, _pow2_at_most(p2p_cap / max(ranks, 1)))
    classes = [c for c, b in ft_memory.items() if b < memory / 4 and 3 * ft_seconds(b, ranks) < time_limit / 4]
    io_total = min(_pow2_at_most(memory / 2), 4 << 30)
    why = [
        f"ranks {ranks}, process counts in powers of two up to all",
        f"point-to-point sizes up to {p2p_cap >> 20} MiB, collectives up to {coll_cap >> 10} KiB (memory)",
        f"NAS FT/EP classes {','.join(classes) or 'S'} (memory, and ~{time_limit / 4:.0f} s for three executions)",
        f"I/O file {io_total >> 20} MiB, budget {budget:.2f} s a point",
    ]
    m = replace(
        BASELINE,
        name="standard",
        summary="the baseline's tests scaled to this cluster: every rank, sizes and classes up to its limits",
        ranks=ranks,
        sizes=f"0,8-{p2p_cap}:x8",
        test_sizes=(f"coll.*=8-{coll_cap}:x8", "rma.*=8-1M:x8", "io.*=1M"),
        params=(f"class={','.join(classes) or 'S'}", f"total={io_total}"),
        procs="pow2",
        budget=budget,
    )
    return m, why


def screen(ranks: int) -> Module:
    """Which part of the cluster is slow (issue 43): every pair of ranks at a latency and a
    bandwidth size (the host x host matrix), and STREAM's triad and DGEMM on every rank at once
    (each host judged against the others); at every rank the run has."""
    return Module(
        name="screen",
        version="1",
        summary="every pair of ranks and every node at once: the slow links and slow hosts, flagged",
        tests=("p2p.allpairs", "node.stream", "node.dgemm"),
        ranks=ranks,
        sizes="8,1M",
        params=("kernel=triad",),
        procs="all",
        launches=2,
        budget=1.0,
        notes=("run it with -n the cluster's ranks (one a core, or --ppn on a testbed)",),
    )


def module_for(
    name: str,
    changes: dict[str, object],
    ranks: int | None,
    memory: int | None,
    time_limit: float | None,
    ft_memory=lambda ranks: {},
):
    """The module to run and what the context records of it; `ft_memory(ranks)` gives app.ft's
    classes and their memory (the engine's), asked only for the standard module."""
    if name not in NAMES:
        raise ScopeError(f"no module '{name}'", f"use one of: {', '.join(NAMES)}", USAGE)
    # One rule for every module (issue 58: the screen module dropped --sizes, --budget and
    # --procs without a word): a module that fixes its workload refuses the options that would
    # change it; advanced takes them as its changes.  --time-limit is the standard module's.
    if time_limit is not None and name != "standard":
        raise ScopeError(
            f"--time-limit scales the standard module, not the {name} module", "leave it out, or run --module standard"
        )
    if name == "advanced":
        return advanced(changes, ranks)
    given = [f"--{k}" for k in (*WORKLOAD, "budget") if changes.get(k) not in (None, "", [], ())]
    if name == "baseline" and ranks and ranks != BASELINE.ranks:
        given.append(f"-n {ranks}")
    if given:
        what = ", ".join(given)
        raise ScopeError(f"the {name} module sets its own workload ({what} would change it)", FIXED_HINT[name], USAGE)
    if name == "baseline":
        return BASELINE, []
    if name == "screen":
        return screen(ranks or 2), []
    return standard(ranks or 2, memory or (4 << 30), time_limit or TIME_LIMIT_S, ft_memory(ranks or 2))


FIXED_HINT = {
    "baseline": "drop it, or run --module advanced to run the baseline with changes, reported apart",
    "standard": "leave it out (the module scales to the machine), or use --module advanced for your own workload",
    "screen": "leave it out, or run p2p.allpairs and the node tests yourself for other settings",
}


def _name(m: dict | None) -> str:
    if not m:
        return "not a module run"
    return f"{m['name']} {m['version']}" + (
        " (below the minimum configuration, forced)" if m.get("below_minimum") else ""
    )


def comparison_note(ma: dict | None, mb: dict | None) -> str | None:
    """What a reader must know before comparing two runs' figures: one advanced and one
    baseline, or two baselines whose workloads differ (another version, or engine defaults
    changed).  None when they compare as they are."""
    if not ma and not mb:
        return None
    if (ma or {}).get("name") != (mb or {}).get("name"):
        return f"the runs are {_name(ma)} and {_name(mb)}: their workloads differ, so do the figures"
    if ma.get("digest") != mb.get("digest"):
        return (
            f"both are {ma['name']} runs, but of different workloads (digest {ma.get('digest')} against "
            f"{mb.get('digest')}: another module version, engine defaults or scaling)"
        )
    if ma.get("below_minimum") or mb.get("below_minimum"):
        return f"the runs are {_name(ma)} and {_name(mb)}"
    return None


def module_text(m: dict) -> str:
    """A module record in one line, for the run's header and the report."""
    text = f"{m['name']} {m['version']} (workload {m.get('digest')})"
    if m.get("changes"):
        text += f"; changed: {', '.join(m['changes'])}"
    if m.get("measured_with"):
        text += "; measured with " + " ".join(f"--{k} {v}" for k, v in sorted(m["measured_with"].items()))
    if m.get("below_minimum"):
        text += f"; BELOW THE MINIMUM, forced: {'; '.join(m['below_minimum'])}"
    return text
