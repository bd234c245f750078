"""A figure's history across runs, and the changes in it that are real (issue 54).

A series is one test, parameter setting and size measured by several runs, in the order they
started: each run's median with its interval across launches.  The detector works on the log
of the medians (a step is a ratio) and reports:

- **step**: the level changed at a run and stayed.  Binary segmentation: the split with the
  largest two-sample t statistic, its p-value from 999 permutations of the segment (the maximum
  over every split, so no correction for the splits is owed), then each side again.  Across
  every series and split the p-values are adjusted for false discoveries (Benjamini-Hochberg),
  and a step is kept only where it is significant after that AND larger than the variation the
  runs themselves measured between their launches (twice its typical spread): the noise the
  user already sees in every run is no change.
- **outlier**: one run away from both sides (a robust z beyond 5 against its neighbourhood),
  named and left out of the step search: one odd run is not a change.
- **drift**: the level moves slowly: a straight line explains the series as well as the best
  step (BIC), and its slope is significant; named as drift, not as a step.

References: Matteson & James (2014) for divisive change-point search with permutation
significance; Daly et al. (ICPE 2020) and Fleming et al. (ICPE 2023, Hunter, now Apache
Otava) for its use on performance series; Benjamini & Hochberg (1995) for the false discovery
rate.  Pure: values in, changes out."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from scope.analysis.compare import launch_medians
from scope.analysis.student import t_cdf, t_quantile
from scope.catalog.testinfo import written

PERMUTATIONS = 999
MIN_SEGMENT = 2  # runs on each side of a step: one run alone is an outlier until the next agrees
OUTLIER_Z = 5.0
FDR = 0.05


@dataclass(frozen=True)
class Obs:
    """One run's measurement of a series."""

    run: int
    started: str
    median: float
    ci_lo: float | None = None
    ci_hi: float | None = None
    launches: tuple[float, ...] = ()  # the run's launch medians (its replicates)


@dataclass
class Series:
    test: str
    params: dict
    size: int | None
    unit: str
    obs: list[Obs]

    @property
    def name(self) -> str:
        where = ", ".join(f"{k}={v}" for k, v in sorted(self.params.items()))
        size = f" {self.size} B" if self.size is not None else ""
        return f"{self.test}{size}" + (f" ({where})" if where else "")


@dataclass
class Change:
    series: Series
    index: int  # the first run after the change, as an index into series.obs
    kind: str  # step | outlier | drift
    step: float  # relative: after / before - 1
    step_lo: float
    step_hi: float
    p_value: float
    q_value: float = float("nan")  # the p-value adjusted for every split tested (FDR)
    changed: dict = field(default_factory=dict)  # provenance name -> (before, after)
    machine: str | None = None  # the canaries' verdict where they moved between the two runs

    @property
    def run(self) -> int:
        return self.series.obs[self.index].run

    def as_dict(self) -> dict:
        s = self.series
        return {
            "test": s.test,
            "params": s.params,
            "size": s.size,
            "unit": s.unit,
            "run": self.run,
            "started_utc": s.obs[self.index].started,
            "kind": self.kind,
            "step": self.step,
            "step_ci": [self.step_lo, self.step_hi],
            "p_value": self.p_value,
            "q_value": self.q_value,
            "changed": {k: list(v) for k, v in self.changed.items()},
            "machine": self.machine,
        }


def launch_spread(obs: list[Obs]) -> float:
    """The typical spread of a run's launches, log scale: the median over runs of the standard
    deviation of log launch medians.  Where the launches are not at hand (a hub keeps each
    run's interval, not its launches) the interval's half-width over 1.96 stands for it."""
    sds = [float(np.std(np.log(o.launches), ddof=1)) for o in obs if len(o.launches) >= 2 and min(o.launches) > 0]
    if not sds:
        sds = [
            (math.log(o.ci_hi) - math.log(o.ci_lo)) / (2 * 1.96)
            for o in obs
            if o.ci_lo and o.ci_hi and 0 < o.ci_lo <= o.ci_hi
        ]
    return float(np.median(sds)) if sds else 0.0


def _robust_sd(y: np.ndarray) -> float:
    """The run-to-run noise from successive differences (MAD): a step moves one difference, an
    outlier two, and neither moves the median of them."""
    if len(y) < 3:
        return float(np.std(y, ddof=1)) if len(y) > 1 else 0.0
    d = np.diff(y)
    mad = float(1.4826 * np.median(np.abs(d - np.median(d))) / math.sqrt(2))
    # values that repeat exactly (more than half the differences nil) leave the MAD at 0: then
    # the mean absolute difference, which every difference moves
    return mad if mad > 0 else float(np.mean(np.abs(d - np.median(d))) * math.sqrt(math.pi / 2) / math.sqrt(2))


def outliers(y: np.ndarray, floor: float) -> list[int]:
    """Runs far from the runs on both sides of them, the same way (a robust z past OUTLIER_Z
    against the median of the three before and of the three after): one odd run, not a change.
    A run at a step agrees with one side; the first and the last run have one side only, and
    wait for the runs around them."""
    sd = max(_robust_sd(y), floor, 1e-12)
    out = []
    for i in range(1, len(y) - 1):
        za = (y[i] - np.median(y[max(0, i - 3) : i])) / sd
        zb = (y[i] - np.median(y[i + 1 : i + 4])) / sd
        if min(abs(za), abs(zb)) > OUTLIER_Z and za * zb > 0:
            out.append(i)
    return out


def _t_all(y: np.ndarray) -> np.ndarray:
    """Welch-free two-sample t of every split (pooled within-segment variance), for each row of
    y (permutations as rows): shape (rows, splits), split k = the first k values before."""
    y = np.atleast_2d(y)
    n = y.shape[1]
    k = np.arange(MIN_SEGMENT, n - MIN_SEGMENT + 1)
    c1, c2 = np.cumsum(y, axis=1), np.cumsum(y * y, axis=1)
    s1, q1 = c1[:, k - 1], c2[:, k - 1]
    s2, q2 = c1[:, -1:] - s1, c2[:, -1:] - q1
    m1, m2 = s1 / k, s2 / (n - k)
    sse = (q1 - s1 * m1) + (q2 - s2 * m2)
    var = np.maximum(sse / max(n - 2, 1), 1e-300)
    return (m2 - m1) / np.sqrt(var * (1 / k + 1 / (n - k)))


def best_split(y: np.ndarray, rng: np.random.Generator) -> tuple[int, float] | None:
    """The split with the largest |t| and its permutation p-value (None: too short to split)."""
    if len(y) < 2 * MIN_SEGMENT:
        return None
    t = np.abs(_t_all(y)[0])
    k = int(np.argmax(t))
    perms = np.array([rng.permutation(y) for _ in range(PERMUTATIONS)])
    tmax = np.abs(_t_all(perms)).max(axis=1)
    p = (1 + int(np.sum(tmax >= t[k] - 1e-12))) / (PERMUTATIONS + 1)
    return k + MIN_SEGMENT, p


def _segments(y: np.ndarray, rng, lo: int = 0) -> list[tuple[int, float]]:
    """Candidate splits of y by binary segmentation: (index into y, p-value), each tested in its
    own segment; a split is pursued further only while it stays below FDR."""
    found = best_split(y, rng)
    if found is None:
        return []
    k, p = found
    out = [(lo + k, p)]
    if p <= FDR:
        out += _segments(y[:k], rng, lo) + _segments(y[k:], rng, lo + k)
    return out


def _step(y: np.ndarray, k: int, bounds: tuple[int, int]) -> tuple[float, float, float]:
    """The step at k within y[a:b], log scale, with its 95 % interval (pooled t)."""
    a, b = bounds
    left, right = y[a:k], y[k:b]
    d = float(right.mean() - left.mean())
    n1, n2 = len(left), len(right)
    sse = float(((left - left.mean()) ** 2).sum() + ((right - right.mean()) ** 2).sum())
    se = math.sqrt(max(sse / max(n1 + n2 - 2, 1), 1e-300) * (1 / n1 + 1 / n2))
    t = t_quantile(max(n1 + n2 - 2, 1), 0.975)
    return d, d - t * se, d + t * se


def _line(y: np.ndarray) -> tuple[float, float, float, float]:
    """Least squares y = a + b x over x = 0, 1, ...: (a, b, b's standard error, b's two-sided p)."""
    n = len(y)
    x = np.arange(n, dtype=float)
    xc = x - x.mean()
    b = float((xc * (y - y.mean())).sum() / (xc * xc).sum())
    a = float(y.mean() - b * x.mean())
    resid = y - (a + b * x)
    se = math.sqrt(max(float((resid * resid).sum()) / (n - 2), 1e-300) / float((xc * xc).sum()))
    p = 2 * t_cdf(n - 2, -abs(b) / se)
    return a, b, se, p


def _sse_step(y: np.ndarray, k: int) -> float:
    """The residual sum of squares of a step at k: each side about its own mean."""
    return float(((y[:k] - y[:k].mean()) ** 2).sum() + ((y[k:] - y[k:].mean()) ** 2).sum())


def _drift(y: np.ndarray, spread: float):
    """A slow drift across the whole series: a straight line fits it better than the best single
    step does, its slope is significant (p < 0.001) and the drift over the series is larger than
    twice the launches' spread.  (relative change over the series, its 95 % interval, p, the
    line's values) or None."""
    n = len(y)
    if n < 3 * MIN_SEGMENT:
        return None
    a, b, se, p = _line(y)
    line = a + b * np.arange(n, dtype=float)
    sse_line = float(((y - line) ** 2).sum())
    t = np.abs(_t_all(y)[0])
    k = int(np.argmax(t)) + MIN_SEGMENT
    sse_step = _sse_step(y, k)
    total = b * (n - 1)
    if sse_line >= sse_step or p >= 0.001 or abs(total) <= 2 * spread:
        return None
    half = t_quantile(n - 2, 0.975) * se * (n - 1)
    return math.expm1(total), math.expm1(total - half), math.expm1(total + half), p, line


def _drift_explains(y: np.ndarray, k: int) -> bool:
    """Whether a straight line fits y as well as the step at k (BIC, both with two parameters
    and their noise), and its slope is significant: slow drift, not a step."""
    if len(y) < 3:
        return False
    a, b, _, p = _line(y)
    sse_line = float(((y - (a + b * np.arange(len(y), dtype=float))) ** 2).sum())
    sse_step = _sse_step(y, k)
    return sse_line <= sse_step * 1.05 and p < 0.01


def detect(series: list[Series], seed: int = 1) -> list[Change]:
    """Every real change in every series, judged together (FDR across all splits tested)."""
    rng = np.random.default_rng(seed)
    candidates: list[tuple[Series, np.ndarray, list[int], int, float, tuple[int, int], float]] = []
    found: list[Change] = []
    for s in series:
        vals = np.array([o.median for o in s.obs], dtype=float)
        if len(vals) < 2 * MIN_SEGMENT or np.any(vals <= 0):
            continue
        y = np.log(vals)
        spread = launch_spread(s.obs)
        odd = outliers(y, spread)
        for i in odd:
            r = float(np.exp(y[i] - np.median(np.delete(y, odd)))) - 1
            found.append(Change(s, i, "outlier", r, r, r, float("nan")))
        keep = [i for i in range(len(y)) if i not in odd]
        yk = y[keep]
        slow = _drift(yk, spread)
        if slow is not None:  # named once, and the steps looked for on top of it
            total, lo, hi, p, line = slow
            found.append(Change(s, keep[0], "drift", total, lo, hi, p))
            yk = yk - line
        splits = sorted(_segments(yk, rng))
        edges = [0] + [k for k, _ in splits] + [len(yk)]
        for k, p in splits:
            j = edges.index(k)
            candidates.append((s, yk, keep, k, p, (edges[j - 1], edges[j + 1]), spread))
    q = _bh([c[4] for c in candidates])
    for (s, yk, keep, k, p, bounds, spread), qv in zip(candidates, q):
        if qv > FDR:
            continue
        d, lo, hi = _step(yk, k, bounds)
        if lo <= 0 <= hi or abs(d) <= 2 * spread:
            continue  # within what the runs' own launches differ by, or its interval holds no step
        seg = yk[bounds[0] : bounds[1]]
        kind = "drift" if _drift_explains(seg, k - bounds[0]) else "step"
        found.append(Change(s, keep[k], kind, math.expm1(d), math.expm1(lo), math.expm1(hi), p, qv))
    found.sort(key=lambda c: (c.series.obs[c.index].started, c.series.name), reverse=True)
    return found


def _bh(p: list[float]) -> list[float]:
    """Benjamini-Hochberg adjusted p-values (q-values), in the order given."""
    n = len(p)
    if not n:
        return []
    order = np.argsort(p)
    adj = np.empty(n)
    running = 1.0
    for rank, i in reversed(list(enumerate(order, 1))):
        running = min(running, p[i] * n / rank)
        adj[i] = running
    return adj.tolist()


def series_of(runs: list, tests=None, sizes=None, min_runs: int = 4) -> list[Series]:
    """The series several runs share: a run's point joins the series of its test, parameters,
    size and rank count; runs in the order they started.  `tests`: a predicate on test names;
    `sizes`: the sizes to keep (None: all)."""
    by: dict[tuple, Series] = {}
    for run in sorted(runs, key=lambda r: (r.started_utc, r.id)):
        for p in run.points:
            if not p.median or p.median <= 0 or (tests and not tests(p.test)):
                continue
            if sizes is not None and p.size not in sizes:
                continue
            params = {k: written(v) for k, v in sorted(p.params.items())}
            key = (p.test, tuple(params.items()), p.size, run.ranks)
            s = by.get(key)
            if s is None:
                s = by[key] = Series(p.test, params, p.size, p.unit, [])
            s.obs.append(Obs(run.id, run.started_utc, p.median, p.ci_lo, p.ci_hi, launch_medians(p)))
    return [s for s in by.values() if len(s.obs) >= min_runs]


def check(changes: list[Change], max_slowdown: float) -> list[Change]:
    """The steps that leave a series' newest run slower than before by more than max_slowdown:
    each series' latest step, where it is one (a later step may have undone an earlier)."""
    latest: dict[int, Change] = {}
    for c in changes:
        if c.kind == "step" and (id(c.series) not in latest or c.index > latest[id(c.series)].index):
            latest[id(c.series)] = c
    return [c for c in latest.values() if c.step > max_slowdown]
