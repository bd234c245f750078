"""Comparing two runs point by point, with launches as the replicates.

Samples within one launch are not independent replicates of a run: a launch shifts them all
together (the mixture of modes, placement, frequency), so a test on pooled samples finds
"significant" differences between two identical runs.  The replicate is the launch: per
point, the launch medians of A and of B are compared on a log scale (Welch's t test, so each
side keeps its own spread), giving the ratio of B to A with its 95 % confidence interval.

A verdict of "slower" or "faster" needs p < alpha *and* a ratio beyond the minimum effect
(1 + min_effect, or its inverse) with its whole CI beyond 1.  "no change" needs the
ratio's whole CI inside the band [1/(1 + min_effect), 1 + min_effect]: the data show the
effect is small, not merely that it was not detected.  Anything else is "insufficient data"
(as asv and Google Benchmark's U-test do: silence is not evidence of equality).  With fewer
than two launches on a side nothing is known of launch-to-launch variation: no verdict.

A run comparison asks "did anything change?" of every point at once, so its p-values are
adjusted for the number of points (Holm 1979: family-wise error at most alpha); otherwise
one point in twenty of two identical runs would be called changed.

One statistic is shown and used: each side's centre is the geometric mean of its launch
medians, and B/A is exactly the quotient of the two centres shown."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from scope.analysis.student import t_cdf, t_quantile
from scope.catalog.testinfo import written
from scope.model import Point, Run

ONE_LAUNCH_EACH = "one launch each: not enough to judge"
ONE_LAUNCH_SIDE = "one launch on one side: not enough to judge"
VALUES_ONLY = "values only (no distribution)"


@dataclass
class Comparison:
    n_a: int  # launches
    n_b: int
    center_a: float  # the geometric mean of the side's launch medians: what the ratio divides
    center_b: float
    ratio: float  # center_b / center_a; > 1 means B takes longer
    ci_lo: float
    ci_hi: float
    p_value: float
    verdict: str  # slower | faster | no difference | insufficient data | one launch ...
    log_se: float = float("nan")  # the standard error of log(B/A), and Welch's degrees of freedom
    df: float = float("nan")

    def as_dict(self) -> dict:
        return dict(self.__dict__)


def welch_log(a: np.ndarray, b: np.ndarray, level: float = 0.95) -> tuple[float, float, float, float, float, float]:
    """Welch's t test of mean(log b) - mean(log a): (ratio, ci_lo, ci_hi, p) on the ratio scale,
    and the log ratio's standard error and degrees of freedom."""
    la, lb = np.log(a), np.log(b)
    diff = float(lb.mean() - la.mean())
    va, vb = la.var(ddof=1) / len(la), lb.var(ddof=1) / len(lb)
    se = math.sqrt(va + vb)
    if se == 0:  # launches that agree to the last digit: the ratio is what it is
        return math.exp(diff), math.exp(diff), math.exp(diff), 0.0 if diff else 1.0, 0.0, float("inf")
    df = (va + vb) ** 2 / (va**2 / (len(la) - 1) + vb**2 / (len(lb) - 1))
    t = t_quantile(df, 0.5 + level / 2)
    p = 2 * t_cdf(df, -abs(diff) / se)
    return math.exp(diff), math.exp(diff - t * se), math.exp(diff + t * se), float(p), float(se), float(df)


def holm(pvalues: list[float]) -> list[float]:
    """Holm's step-down adjusted p-values (NaN stays NaN and does not count)."""
    idx = sorted((i for i, p in enumerate(pvalues) if p == p), key=lambda i: pvalues[i])
    m, out, run = len(idx), list(pvalues), 0.0
    for k, i in enumerate(idx):
        run = max(run, min(1.0, (m - k) * pvalues[i]))
        out[i] = run
    return out


def verdict_of(ratio: float, lo: float, hi: float, p: float, alpha: float, min_effect: float) -> str:
    up, down = 1.0 + min_effect, 1.0 / (1.0 + min_effect)
    if p < alpha and ratio >= up and lo > 1.0:
        return "slower"
    if p < alpha and ratio <= down and hi < 1.0:
        return "faster"
    if down <= lo and hi <= up:
        return "no change"
    return "insufficient data"


def compare_launches(a, b, alpha: float = 0.05, min_effect: float = 0.02) -> Comparison:
    """One point: A's and B's launch medians."""
    a = np.asarray([x for x in a if x is not None and math.isfinite(x) and x > 0], dtype=float)
    b = np.asarray([x for x in b if x is not None and math.isfinite(x) and x > 0], dtype=float)
    na, nb = len(a), len(b)
    ma = geomean(a) if na else float("nan")
    mb = geomean(b) if nb else float("nan")
    nan = float("nan")
    if na < 2 or nb < 2:
        verdict = ONE_LAUNCH_EACH if na <= 1 and nb <= 1 else ONE_LAUNCH_SIDE
        return Comparison(na, nb, ma, mb, mb / ma if na and nb else nan, nan, nan, nan, verdict)
    ratio, lo, hi, p, se, df = welch_log(a, b)  # its ratio is exp(mean log b - mean log a) = mb / ma
    return Comparison(na, nb, ma, mb, ratio, lo, hi, p, verdict_of(ratio, lo, hi, p, alpha, min_effect), se, df)


def geomean(x: np.ndarray) -> float:
    return float(np.exp(np.log(x).mean()))


def launch_medians(p: Point) -> tuple[float, ...]:
    r = p.replication
    return r.medians if r else ((p.median,) if p.median is not None else ())


def _pairs(a: Run, b: Run, vary: tuple[str, str, str] | None = None):
    """Points of B with their counterpart in A: same test, parameters and size.  A run whose
    points carry no parameters (an import: OSU and IMB name none) is matched by test and size
    to each parameter setting of the other run, which is then named in the row.  `vary`
    (name, value in A, value in B) compares two settings of one parameter instead, within one
    run or across two: A's points with the first value against B's with the second, matched on
    everything else."""

    def key(p, with_params):
        params = {k: v for k, v in p.params.items() if not vary or k != vary[0]}
        return (p.test, tuple(sorted(params.items())) if with_params else (), p.size)

    def has(p, value):
        return not vary or written(p.params.get(vary[0])) == value

    bare_a = a.imported and not any(p.params for p in a.points)
    bare_b = b.imported and not any(p.params for p in b.points)
    with_params = not (bare_a or bare_b)
    index: dict = {}
    for q in a.points:
        if has(q, vary and vary[1]):
            index.setdefault(key(q, with_params), []).append(q)
    for p in b.points:
        for q in index.get(key(p, with_params), []) if has(p, vary and vary[2]) else []:
            yield q, p


def compare_runs(
    a: Run, b: Run, alpha: float, min_effect: float, vary: tuple[str, str, str] | None = None
) -> list[dict]:
    """Per point of B that A has too: B against A (or B's setting `vary[2]` of a parameter
    against A's `vary[1]`)."""
    rows = []
    for q, p in _pairs(a, b, vary):
        if a.imported or b.imported:  # an import is one average per size: the values, no verdict
            ratio = p.median / q.median if q.median and p.median is not None else float("nan")
            nan = float("nan")
            c = Comparison(1, 1, q.median or nan, p.median or nan, ratio, nan, nan, nan, VALUES_ONLY)
        else:
            c = compare_launches(launch_medians(q), launch_medians(p), alpha, min_effect)
        rows.append({"test": p.test, "params": p.params or q.params, "size": p.size, **c.as_dict()})
    return _adjusted(rows, alpha, min_effect)


def compare_launch_sets(
    a: list[Run], b: list[Run], alpha: float, min_effect: float, vary: tuple[str, str, str] | None = None
) -> list[dict]:
    """B against A where each side is several one-launch runs (launched alternately, so a drift
    of the machine falls on both sides alike): per point, every run's median is a launch.
    `vary` as in compare_runs: A's setting vary[1] of a parameter against B's vary[2]."""

    def medians(runs: list[Run], value: str | None) -> dict:
        out: dict = {}
        for run in runs:
            for p in run.points:
                if vary and written(p.params.get(vary[0])) != value:
                    continue
                params = tuple(sorted((k, v) for k, v in p.params.items() if not vary or k != vary[0]))
                out.setdefault((p.test, params, p.size), []).extend(launch_medians(p))
        return out

    ma, mb = medians(a, vary and vary[1]), medians(b, vary and vary[2])
    rows = []
    for key in sorted(k for k in mb if k in ma):
        c = compare_launches(ma[key], mb[key], alpha, min_effect)
        rows.append({"test": key[0], "params": dict(key[1]), "size": key[2], **c.as_dict()})
    return _adjusted(rows, alpha, min_effect)


def _adjusted(rows: list[dict], alpha: float, min_effect: float) -> list[dict]:
    """Every point at once: the verdicts are judged on Holm-adjusted p-values, and each point's
    interval is drawn at the level of its Holm step (1 - alpha / (m - k) for the k-th smallest
    p of m), so the interval shown and the verdict agree: an interval clear of 1 is a p below
    its step's level (issue 70: an unadjusted interval clear of 1 stood beside "insufficient
    data").  The unadjusted interval is kept as ci_lo_raw, ci_hi_raw."""
    order = sorted((i for i, r in enumerate(rows) if r["p_value"] == r["p_value"]), key=lambda i: rows[i]["p_value"])
    m = len(order)
    for k, i in enumerate(order):
        r = rows[i]
        se, df = r.get("log_se", float("nan")), r.get("df", float("nan"))
        r["ci_lo_raw"], r["ci_hi_raw"] = r["ci_lo"], r["ci_hi"]
        if se == se and se > 0 and df == df:
            t = t_quantile(df, 1 - alpha / (2 * (m - k)))
            r["ci_lo"], r["ci_hi"] = r["ratio"] * math.exp(-t * se), r["ratio"] * math.exp(t * se)
        r["ci_level"] = 1 - alpha / (m - k)
    for r, adj in zip(rows, holm([r["p_value"] for r in rows])):
        if adj == adj:
            r["p_raw"], r["p_value"] = r["p_value"], adj
            r["verdict"] = verdict_of(r["ratio"], r["ci_lo"], r["ci_hi"], adj, alpha, min_effect)
    return rows


def engines_differ(a: Run, b: Run) -> tuple[str, str] | None:
    """The two runs' engine sources where they differ (both recorded): a difference between the
    runs may then be SCOPE's own change, not the configuration's."""
    sa, sb = (r.context.engine_source if r.context else None for r in (a, b))
    return (sa, sb) if sa and sb and sa != sb else None
