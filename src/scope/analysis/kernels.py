"""The kernel level's derived figures (SCOPE §6.6-6.7, App. F): each kernel point's phases per
rank (T = T_init + T_comp + T_comm + T_idle, measured by the engine's kernel timing), its
operations in context beside the same operation's loop figure, and across process counts the
speedup, the efficiency and, for the matrix multiplies, the efficiency against the
uniprocessor DGEMM rate (ParaStation2's Tables 4-5: parallel rate / (p x one processor's))."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from scope.catalog.names import CANNON, DGEMM, MATMUL
from scope.model import Point, Run

PHASES = ("init", "comp", "comm", "idle")
PHASED_LEVELS = ("kernel", "app")  # levels whose tests are timed in phases (kernel timing)
MULTIPLIES = (MATMUL, CANNON)  # whose efficiency reads against DGEMM


@dataclass
class OpInContext:
    name: str
    test: str  # the loop test of the same operation
    bytes: float
    calls: float  # per execution
    comm_us: float  # per call, the slowest rank once the data could move
    idle_us: float  # per call, the rank that waited longest for its partners
    loop_us: float | None = None  # the loop test's median at this size, same procs (see loop_between)
    loop_size: int | None = None  # the size measured, when it is this size exactly
    loop_run: int | None = None
    loop_between: tuple[int, int] | None = None  # else the measured sizes it is interpolated between


@dataclass
class KernelPoint:
    point: Point
    test: str
    setting: dict  # parameters other than procs
    procs: int
    phases: dict[str, list[float]]  # per rank, us (mean over the measured repetitions)
    idle_measured: bool
    ops: list[OpInContext] = field(default_factory=list)
    steps: dict[str, list[float]] = field(default_factory=dict)  # T_comp's named steps, per rank, us

    @property
    def median(self) -> float:
        return self.point.median or float("nan")

    @property
    def slowest_rank(self) -> int:
        """The rank whose phases sum to the most: its account is the execution's."""
        n = len(self.phases.get("comp") or [])
        sums = [sum(self.phases[q][r] for q in PHASES if r < len(self.phases.get(q) or [])) for r in range(n)]
        return max(range(n), key=lambda r: sums[r]) if n else 0

    @property
    def slowest_mean_us(self) -> float:
        """The slowest rank's mean time over the repetitions the point counts: what its phases
        (each that rank's mean over the same repetitions) add up to."""
        r = self.slowest_rank
        return sum(self.phases[q][r] for q in PHASES if r < len(self.phases.get(q) or []))

    def most(self, phase: str) -> float:
        return max(self.phases.get(phase) or [float("nan")])

    def mean(self, phase: str) -> float:
        x = self.phases.get(phase) or []
        return sum(x) / len(x) if x else float("nan")

    @property
    def imbalance(self) -> float | None:
        """Slowest rank's compute over the mean rank's: 1 is perfectly balanced."""
        m = self.mean("comp")
        return self.most("comp") / m if m and m > 0 else None

    @property
    def rate(self) -> tuple[float, str] | None:
        return rate_of(self.point)


def rate_of(p: Point) -> tuple[float, str] | None:
    """A kernel's, application's or node test's rate from its extra counts: GFLOP/s, NPB's Mop/s,
    million keys/s, or million grid-point updates/s (a multigrid's visits of every level)."""
    extra = p.extra
    if not p.median:
        return None
    if extra.get("flop"):
        return extra["flop"] / p.median / 1e3, "GFLOP/s"
    if extra.get("nas_ops"):  # NPB's own count (EP: the random numbers generated)
        return extra["nas_ops"] / p.median, "Mop/s"
    if extra.get("keys"):
        return extra["keys"] / p.median, "Mkeys/s"
    if extra.get("updates"):
        return extra["updates"] / p.median, "Mupdates/s"
    return None


def kernel_point(p: Point, level: str) -> KernelPoint | None:
    """The kernel reading of a point of a kernel-level test (None for other points)."""
    if level not in PHASED_LEVELS:  # before the record is decoded: most points are not kernels'
        return None
    ph = p.record.get("phases")
    if not ph:
        return None
    phases = {k: [float(x) if x is not None else math.nan for x in ph.get(k) or []] for k in PHASES}
    ops = [
        OpInContext(
            o["name"],
            o.get("test") or "",
            float(o.get("bytes") or 0),
            float(o.get("calls") or 0),
            _max(o.get("comm_us")),
            _max(o.get("idle_us")),
        )
        for o in p.record.get("ops") or []
    ]
    setting = {k: v for k, v in p.params.items() if k != "procs"}
    steps = {name: [float(x) if x is not None else math.nan for x in v] for name, v in (ph.get("steps") or {}).items()}
    return KernelPoint(p, p.test, setting, p.procs, phases, bool(ph.get("idle_measured")), ops, steps)


def _max(xs) -> float:
    vals = [float(x) for x in xs or [] if x is not None and math.isfinite(float(x))]
    return max(vals) if vals else math.nan


def kernel_points(run: Run) -> list[KernelPoint]:
    levels = {t: run.info(t).level for t in {p.test for p in run.points}}
    out = [kernel_point(p, levels[p.test]) for p in run.points if levels[p.test] in PHASED_LEVELS]
    return sorted((k for k in out if k), key=lambda k: (k.test, sorted(k.setting.items()), k.procs))


def loop_at(points: list[Point], nbytes: float) -> tuple[float, int | None, tuple[int, int] | None] | None:
    """A loop test's median at exactly `nbytes` (us, that size, None), or interpolated on a
    log-log line between the measured sizes around it (us, None, (below, above)): a time that
    grows as a power of the size between two measured points.  None outside the sizes measured."""
    by = sorted({p.size: p.median for p in points if p.size and p.median}.items())
    for n, t in by:
        if n == nbytes:
            return t, n, None
    below = [(n, t) for n, t in by if n < nbytes]
    above = [(n, t) for n, t in by if n > nbytes]
    if not below or not above:
        return None
    (n0, t0), (n1, t1) = below[-1], above[0]
    slope = math.log(t1 / t0) / math.log(n1 / n0)
    return t0 * (nbytes / n0) ** slope, None, (n0, n1)


def attach_loop_figures(points: list[KernelPoint], runs: list[Run]) -> None:
    """Each operation in context gets its loop test's median at its own size and the same process
    count, at the test's default parameters, from the first run in `runs` that has it there:
    measured at that size, or interpolated between the measured sizes around it (and said so);
    never a figure of another size."""
    for k in points:
        for op in k.ops:
            if op.bytes <= 0:
                continue
            for run in runs:
                # a loop-timed test (point-to-point, one-sided) has no procs: it is a pair's figure
                pts = [
                    p
                    for p in run.points
                    if p.test == op.test
                    and (p.procs == k.procs or (p.procs == 0 and k.procs >= 2))
                    and run.at_defaults(p)  # e.g. an rma.get window of 64: not one call
                ]
                got = loop_at(pts, op.bytes)
                if got:
                    op.loop_us, op.loop_size, op.loop_between = got
                    op.loop_run = run.id
                    break


@dataclass
class ScalingRow:
    procs: int
    median_us: float
    speedup: float | None  # T(1) / T(p)
    efficiency: float | None  # speedup / p
    dgemm_efficiency: float | None  # rate / (p x uniprocessor DGEMM rate)


@dataclass
class Scaling:
    test: str
    setting: dict
    rows: list[ScalingRow]
    dgemm_rate: float | None = None  # GFLOP/s of one rank alone, the reference
    dgemm_n: int | None = None


def uniprocessor_dgemm(runs: list[Run], n: int) -> tuple[float, int] | None:
    """node.dgemm's rate with one rank alone (procs=1) at the order nearest n: (GFLOP/s, n)."""
    best = None
    for run in runs:
        for p in run.points:
            if p.test != DGEMM or p.procs != 1 or not p.median:
                continue
            r, order = rate_of(p), int(p.params.get("n") or 0)
            if r and order and (best is None or abs(math.log(order / n)) < abs(math.log(best[1] / n))):
                best = (r[0], order)
        if best:
            return best
    return None


def scaling(points: list[KernelPoint], runs: list[Run]) -> list[Scaling]:
    """Per kernel and setting, across process counts: speedup and efficiency against the same
    kernel on one rank, and for the multiplies the rate against p x the uniprocessor DGEMM."""
    groups: dict[tuple, list[KernelPoint]] = {}
    for k in points:
        groups.setdefault((k.test, tuple(sorted(k.setting.items()))), []).append(k)
    out = []
    for (test, _), ks in groups.items():
        ks.sort(key=lambda k: k.procs)
        one = next((k.median for k in ks if k.procs == 1), None)
        ref = uniprocessor_dgemm(runs, int(ks[0].setting.get("n") or 0)) if test in MULTIPLIES else None
        rows = []
        for k in ks:
            sp = one / k.median if one and k.median > 0 else None
            rate = k.rate
            de = rate[0] / (k.procs * ref[0]) if ref and rate and rate[1] == "GFLOP/s" else None
            rows.append(ScalingRow(k.procs, k.median, sp, sp / k.procs if sp else None, de))
        out.append(Scaling(test, ks[0].setting, rows, ref[0] if ref else None, ref[1] if ref else None))
    return out
