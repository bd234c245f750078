"""The machine's own drift: what the canaries saw, and what stored runs of one configuration
on one machine show beyond what a run's launches show.

Three launches back to back do not sample a machine whose states last longer than a run (a
neighbour on the host, a frequency step): their spread says how much a launch moves within
this state, not how much the next run will.  Two sources of evidence are kept apart:

- **The canary** (engine/canary.c): a fixed, MPI-free probe of the cores, the memory path and
  the cache line between ranks 0 and 1 at the start and end of every launch.  When two runs'
  canaries differ significantly and by more than the minimum effect, the machine changed
  between them, and a difference in the figures cannot be laid on the configuration:
  `compare` says "machine changed".
- **History**: runs of the same configuration (same points, ranks, MPI and hosts) stored
  earlier or later.  The variance of their centres (each run's geometric mean of launch
  medians) beyond what each run's own launch spread explains, sigma_b^2 = var(log centres) -
  mean(s_w^2 / L), is the drift between runs: a one-way random-effects estimate (the ANOVA
  method, Searle, Casella & McCulloch 1992 ch. 3), pooled over the run's points.  `show`
  widens the next-launch interval by it: half-width sqrt(h^2 + (t sigma_b)^2) on the log scale."""

from __future__ import annotations

import collections
import math
from dataclasses import dataclass

import numpy as np

from scope.analysis.compare import compare_launches
from scope.analysis.student import t_quantile
from scope.model import Point, Run

PROBES = {"compute_us": "compute", "copy_us": "memory copy", "c2c_us": "core to core"}
MIN_RUNS = 3  # below it a between-run variance is a guess
MACHINE_CHANGED = "machine changed"


@dataclass(frozen=True)
class CanaryShift:
    probe: str  # compute | memory copy
    a_us: float  # geometric mean of A's canaries
    b_us: float
    ratio: float
    ci_lo: float
    ci_hi: float
    verdict: str  # compare's verdict on the canary values: slower | faster | no change | ...

    @property
    def moved(self) -> bool:
        return self.verdict in ("slower", "faster")

    def text(self) -> str:
        ci = f"95% CI {self.ci_lo:.3f}-{self.ci_hi:.3f}"
        return f"{self.probe} {self.a_us:.4g} -> {self.b_us:.4g} us (x{self.ratio:.3f}, {ci})"


def canary_values(run: Run) -> dict[str, list[float]]:
    """Every canary reading of the run, per probe (start and end of each launch)."""
    out: dict[str, list[float]] = {k: [] for k in PROBES}
    for e in run.events:
        if e.type == "canary":
            for k in PROBES:
                v = e.record.get(k)
                if isinstance(v, (int, float)) and v > 0:
                    out[k].append(float(v))
    return out


def steal_pct(run: Run) -> float | None:
    """The most CPU time a hypervisor took during any launch of the run, %."""
    vals = [e.record.get("steal_pct") for e in run.events if e.type == "canary"]
    vals = [float(v) for v in vals if isinstance(v, (int, float))]
    return max(vals) if vals else None


@dataclass(frozen=True)
class CanaryReading:
    probe: str
    median_us: float
    spread_rel: float  # (largest - smallest) / median over the run's readings
    readings: int


def canary_readings(run: Run) -> list[CanaryReading]:
    """The machine during the run, per probe: the median reading and how far the readings
    spread (start and end of every launch)."""
    out = []
    for key, vals in canary_values(run).items():
        if vals:
            med = float(np.median(vals))
            out.append(CanaryReading(PROBES[key], med, (max(vals) - min(vals)) / med, len(vals)))
    return out


def canary_shifts(a: Run, b: Run, alpha: float = 0.05, min_effect: float = 0.02) -> list[CanaryShift]:
    """B's machine against A's, per probe, judged as compare judges a point (the readings as
    replicates, Welch on logs); probes either run lacks are left out."""
    ca, cb = canary_values(a), canary_values(b)
    out = []
    for key, name in PROBES.items():
        if len(ca[key]) >= 2 and len(cb[key]) >= 2:
            c = compare_launches(ca[key], cb[key], alpha, min_effect)
            out.append(CanaryShift(name, c.center_a, c.center_b, c.ratio, c.ci_lo, c.ci_hi, c.verdict))
    return out


def judge_machine(rows: list[dict], shifts: list[CanaryShift]) -> list[dict]:
    """A point called slower or faster between runs whose machine moved is "machine changed":
    the difference cannot be laid on what was compared."""
    if not any(s.moved for s in shifts):
        return rows
    for r in rows:
        if r["verdict"] in ("slower", "faster"):
            r["verdict_measured"], r["verdict"] = r["verdict"], MACHINE_CHANGED
    return rows


@dataclass(frozen=True)
class Drift:
    runs: tuple[int, ...]  # the runs the model learned from, this one included
    between_sd: float  # sigma_b, log scale
    df: int  # degrees of freedom pooled over the points
    points: int  # points of the run it had history for

    @property
    def t(self) -> float:
        return t_quantile(max(self.df, 1), 0.975)

    def text(self) -> str:
        return (
            f"next-launch intervals widened by the drift between {len(self.runs)} runs of this configuration "
            f"on this machine (runs {', '.join(map(str, self.runs))}): {self.between_sd * 100:.1f} % between runs "
            f"beyond what a run's launches show, {self.points} points"
        )


def _key(p: Point) -> tuple:
    return (p.test, tuple(sorted((p.params or {}).items())), p.size)


def _centre(p: Point) -> tuple[float, float] | None:
    """A point's log centre and the variance of that centre its launches show."""
    r = p.replication
    m = [x for x in (r.medians if r else ()) if x and x > 0]
    if len(m) < 2:
        return None
    logs = np.log(m)
    return float(logs.mean()), float(logs.var(ddof=1)) / len(logs)


def drift_between_runs(run: Run, history: list[Run]) -> Drift | None:
    """sigma_b pooled over the points of `run` that at least MIN_RUNS runs measured with two
    launches or more (module docstring); None without such history."""
    if 1 + len(history) < MIN_RUNS:
        return None
    runs = [run, *history]
    keys = [[_key(p) for p in r.points] for r in runs]
    # a point's centre (its launches' medians, from its record) only where enough runs measured
    # it: a run of 10^5 points decoded every record for nothing when the others had none of them
    seen = collections.Counter(k for ks in keys for k in ks)
    mine = {k for k in keys[0] if seen[k] >= MIN_RUNS}
    per_key: dict[tuple, list[tuple[int, float, float]]] = {}
    for r, ks in zip(runs, keys):
        for p, k in zip(r.points, ks):
            c = _centre(p) if k in mine else None
            if c is not None:
                per_key.setdefault(k, []).append((r.id, *c))
    num, df, points, used = 0.0, 0, 0, set()
    for cs in per_key.values():
        if len(cs) < MIN_RUNS:
            continue
        used |= {i for i, _, _ in cs}
        centres = np.array([c for _, c, _ in cs])
        between = float(centres.var(ddof=1)) - float(np.mean([w for _, _, w in cs]))
        num += (len(cs) - 1) * max(between, 0.0)
        df += len(cs) - 1
        points += 1
    if not points:
        return None
    return Drift(tuple(sorted(used)), math.sqrt(num / df), df, points)


def next_interval(p: Point, drift: Drift | None) -> tuple[float, float] | None:
    """A point's next-launch interval, widened by the drift between runs when there is one."""
    r = p.replication
    if r is None or r.next_lo is None or r.next_hi is None or r.next_lo <= 0:
        return None
    if drift is None or drift.between_sd == 0:
        return r.next_lo, r.next_hi
    mid, half = math.log(r.next_lo * r.next_hi) / 2, math.log(r.next_hi / r.next_lo) / 2
    wide = math.hypot(half, drift.t * drift.between_sd)
    return math.exp(mid - wide), math.exp(mid + wide)
