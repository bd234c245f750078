"""The application level's own figure (NAS FT, Huse & Omang, 003): how much of the transpose a
non-blocking transpose hides behind the FFTs.  As OSU defines overlap for non-blocking
collectives (the share of the pure communication time hidden by computation), with the
blocking all-to-all run as the reference:

    overlap = (T_alltoall - T_nonblocking) / T_transposes

T_transposes being the blocking run's time in its transposes (per call, the slowest rank's
communication plus the longest idle, times the calls).  OSU clips overlap at 0; here it is not,
so a non-blocking transpose that costs more than it hides reads negative, as Huse & Omang
found on SCI.  The interval is the ratio T_nonblocking / T_alltoall's 95 % CI across launches
(Welch on launch medians, as `scope compare`) when both points have two launches or more, else
the two medians' 95 % CIs combined at their extremes (within one launch)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from scope.analysis.compare import compare_launches, launch_medians
from scope.analysis.kernels import KernelPoint
from scope.catalog.names import APP_FT, APP_LU


@dataclass
class Overlap:
    setting: dict  # the FT setting but the transpose
    procs: int
    alltoall_us: float
    nonblocking_us: float
    transposes_us: float
    overlap: float
    lo: float
    hi: float
    covers: str  # what the interval covers


def _ft_transposes(points: list[KernelPoint], min_procs: int) -> list[tuple[tuple, dict[str, KernelPoint]]]:
    """app.ft's points grouped by their setting but the transpose and their process count:
    ((setting, procs), {transpose: point}), sorted."""
    by: dict[tuple, dict[str, KernelPoint]] = {}
    for k in points:
        if k.test == APP_FT and k.procs >= min_procs:
            rest = {n: v for n, v in k.setting.items() if n != "transpose"}
            by.setdefault((tuple(sorted(rest.items())), k.procs), {})[str(k.setting.get("transpose"))] = k
    return sorted(by.items())


def _transposes_us(k: KernelPoint) -> float | None:
    op = next((o for o in k.ops if o.name == "transpose"), None)
    if not op or not op.calls:
        return None
    idle = op.idle_us if math.isfinite(op.idle_us) else 0.0
    return op.calls * (op.comm_us + idle)


def ft_overlaps(points: list[KernelPoint]) -> list[Overlap]:
    """Per FT setting and process count with both an alltoall and a nonblocking point."""
    out = []
    for (rest, procs), modes in _ft_transposes(points, 2):
        blk, nb = modes.get("alltoall"), modes.get("nonblocking")
        x = _transposes_us(blk) if blk else None
        if not blk or not nb or not x or not (blk.median > 0 and nb.median > 0):
            continue
        ov = (blk.median - nb.median) / x
        cmp = compare_launches(launch_medians(blk.point), launch_medians(nb.point))
        if math.isfinite(cmp.ci_lo):
            lo, hi = blk.median * (1 - cmp.ci_hi) / x, blk.median * (1 - cmp.ci_lo) / x
            covers = f"launch to launch ({cmp.n_a} and {cmp.n_b} launches)"
        else:
            b, n = blk.point, nb.point
            lo = ((b.ci_lo or blk.median) - (n.ci_hi or nb.median)) / x
            hi = ((b.ci_hi or blk.median) - (n.ci_lo or nb.median)) / x
            covers = "one launch: the medians' CIs, at their extremes"
        out.append(Overlap(dict(rest), procs, blk.median, nb.median, x, ov, lo, hi, covers))
    return out


@dataclass
class GetShare:
    """app.lu's time in one-sided gets (Bjørnstad, 004): how much of an execution the gets take,
    and how much of that the one-sided layer's own latency (rma.get's loop figure at the block's
    size and the same process count) explains."""

    setting: dict
    procs: int
    gets: float  # a rank's gets per execution (the rank with the most time in them)
    in_gets_us: float
    share: float  # of the execution's time
    loop_us: float | None  # rma.get's median at the operation's size (measured or interpolated)
    explained: float | None  # gets x loop figure / time in gets


def lu_get_shares(points: list[KernelPoint]) -> list[GetShare]:
    out = []
    for k in points:
        op = next((o for o in k.ops if o.name == "get"), None)
        if k.test != APP_LU or not op or not op.calls or not math.isfinite(op.comm_us) or not k.median > 0:
            continue
        total = op.calls * op.comm_us
        explained = op.calls * op.loop_us / total if op.loop_us and total > 0 else None
        out.append(GetShare(dict(k.setting), k.procs, op.calls, total, total / k.median, op.loop_us, explained))
    return out


@dataclass
class Switch:
    """One FT transpose setting against the all-to-all at the same class and process count
    (Huse & Omang's switches, whose effect changes sign between platforms)."""

    setting: dict
    procs: int
    transpose: str
    median_us: float
    ratio: float  # against alltoall; > 1 slower
    ci_lo: float
    ci_hi: float
    verdict: str  # scope compare's


def ft_switches(points: list[KernelPoint], alpha: float = 0.05, min_effect: float = 0.02) -> list[Switch]:
    """Every FT setting's transpose switches against the alltoall one, launches as replicates
    (analysis/compare.py: Welch on launch medians, no verdict with one launch)."""
    out = []
    for (rest, procs), modes in _ft_transposes(points, 1):
        ref = modes.get("alltoall")
        for name, k in sorted(modes.items()):
            if not ref or name == "alltoall":
                continue
            c = compare_launches(launch_medians(ref.point), launch_medians(k.point), alpha, min_effect)
            out.append(Switch(dict(rest), procs, name, k.median, c.ratio, c.ci_lo, c.ci_hi, c.verdict))
    return out


@dataclass(frozen=True)
class Verification:
    """A verified code's own check, as the engine recorded it with the point (NPB's: EP's sums,
    FT's checksums): each value beside its reference, the relative error and the bound it must
    meet.  A point that failed it is no point but an error record with the same figures."""

    test: str
    setting: dict
    procs: int
    values: list[tuple[str, float, float]]  # (name, value, reference)
    error: float
    bound: float

    @property
    def passed(self) -> bool:
        return self.error <= self.bound


def verifications(points: list[KernelPoint]) -> list[Verification]:
    """Every point whose record carries a verification (extra.verification_error and _bound,
    and each value NAME beside NAME_reference)."""
    out = []
    for k in points:
        x = k.point.extra
        if "verification_error" not in x or "verification_bound" not in x:
            continue
        values = [
            (n[: -len("_reference")], x[n[: -len("_reference")]], v) for n, v in x.items() if n.endswith("_reference")
        ]
        out.append(Verification(k.test, k.setting, k.procs, values, x["verification_error"], x["verification_bound"]))
    return out
