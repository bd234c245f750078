"""The tests behind a series' history (analysis/history.py): a series' runs with their launches
as replicates, the search for its changes with analytic p-values, its outliers, its drift and
the band its newest run is judged against.  Pure: arrays in, numbers out.

A run's centre is the mean of its log launch medians, or their median where one launch is wild;
the variance its launches give that centre is sd_w^2 / m (x MEDIAN3 for a median), sd_w the
launches' spread.  Every
test takes a centre's noise as the larger of what the runs show (their pooled variance about
their groups' means, df: runs - groups) and what their launches show (df: the launches'), so
runs that agree as well as their launches are judged with the launches' degrees of freedom,
and runs that differ more by their own."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from scope.analysis.student import t_cdf, t_quantile

MIN_SEGMENT = 2  # runs on each side of a step: one run alone is an outlier, or the newest run's alarm
OUTLIER_Z = 5.0
STEP_WEIGHT = 0.75  # of the level, to the steps; the rest to changes that come back
SEARCH_P = 0.05  # a span is searched further while its best change is significant at this
MEDIAN3 = 1.35  # the variance of the median of 3 normal values is 1.35x that of their mean
DRIFT_RUNS = 10  # runs a line needs before it may explain a step as drift
WILD = 3.0  # a run whose launches' SD is past this many spreads has a wild launch: its median stands


@dataclass
class Runs:
    """A series as the tests read it (log scale)."""

    y: np.ndarray  # each run's centre: the mean of its log launch medians (a wild launch: their median)
    w: np.ndarray  # the variance of each centre from its launches alone (or its interval's)
    df_w: np.ndarray  # each run's launches' degrees of freedom (m - 1; 0 where unknown)
    spread: float  # sd_w, the launches' spread

    def part(self, keep) -> Runs:
        return Runs(self.y[keep], self.w[keep], self.df_w[keep], self.spread)


def launch_spread(obs) -> float:
    """The typical spread of a run's launches, log scale: an SD of log launch medians, from the
    median over runs of their launches' variance (robust to one wild launch or run), scaled to
    be the SD itself under normal noise (the median of a variance of m values is below its
    mean: x0.69 for 3 launches).  Where the launches are not at hand (a hub keeps each run's
    interval, not its launches) the interval's half-width over 1.96 stands for it."""
    var, dfs = [], []
    for o in obs:
        if len(o.launches) >= 2 and min(o.launches) > 0:
            var.append(float(np.var(np.log(o.launches), ddof=1)))
            dfs.append(len(o.launches) - 1)
    if var:
        k = float(np.median(dfs))
        chi2_median = k * (1 - 2 / (9 * k)) ** 3  # Wilson-Hilferty
        return math.sqrt(float(np.median(var)) * k / chi2_median)
    sds = [
        (math.log(o.ci_hi) - math.log(o.ci_lo)) / (2 * 1.96)
        for o in obs
        if o.ci_lo and o.ci_hi and 0 < o.ci_lo <= o.ci_hi
    ]
    return float(np.median(sds)) if sds else 0.0


def runs_of(obs) -> Runs | None:
    """A series' runs for the tests, or None when a value is not positive."""
    spread = launch_spread(obs)
    y, w, dfw = [], [], []
    for o in obs:
        ls = [v for v in o.launches if v and v > 0]
        if o.median is None or o.median <= 0 or len(ls) != len(o.launches):
            return None
        if len(ls) >= 2:
            m, logs = len(ls), np.log(ls)
            # the mean of its launches; the median where one launch is wild (their SD past
            # WILD x the spread every run shows), which that launch moves little
            wild = m >= 3 and float(np.std(logs, ddof=1)) > WILD * spread
            y.append(float(np.median(logs) if wild else np.mean(logs)))
            w.append(spread * spread * (MEDIAN3 if wild else 1.0) / m)
            dfw.append(m - 1)
        else:
            y.append(math.log(o.median))
            known = o.ci_lo and o.ci_hi and 0 < o.ci_lo <= o.ci_hi
            half = (math.log(o.ci_hi) - math.log(o.ci_lo)) / (2 * 1.96) if known else spread
            w.append(half * half)
            dfw.append(0)
    return Runs(np.array(y), np.array(w), np.array(dfw, dtype=float), spread)


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
    A run at a step agrees with one side; the first and the last run have one side only."""
    sd = max(_robust_sd(y), floor, 1e-12)
    out = []
    for i in range(1, len(y) - 1):
        za = (y[i] - np.median(y[max(0, i - 3) : i])) / sd
        zb = (y[i] - np.median(y[i + 1 : i + 4])) / sd
        if min(abs(za), abs(zb)) > OUTLIER_Z and za * zb > 0:
            out.append(i)
    return out


@dataclass(frozen=True)
class Found:
    """A change a search found in a span: the runs i..j-1 differ from the rest of the span (a
    step: j is the span's end; a temporary change: runs after j are back with those before i)."""

    i: int
    j: int
    d: float  # the runs i..j-1 less the rest, log scale
    lo: float
    hi: float
    p: float  # two-sided, times the changes the search could have chosen in its span
    temporary: bool


def _candidates(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Every change a span of n runs may hold: steps (i, n) with MIN_SEGMENT runs each side,
    and runs i..j-1 differing from both sides (at least MIN_SEGMENT of them, at least one run
    on each side and MIN_SEGMENT outside)."""
    ii, jj = [], []
    for i in range(MIN_SEGMENT, n - MIN_SEGMENT + 1):
        ii.append(i)
        jj.append(n)
    for i in range(1, n - MIN_SEGMENT):
        for j in range(i + MIN_SEGMENT, n):
            if i + (n - j) >= MIN_SEGMENT:
                ii.append(i)
                jj.append(j)
    return np.array(ii, dtype=int), np.array(jj, dtype=int)


def best_change(r: Runs, a: int, b: int) -> Found | None:
    """The most significant change in the runs a..b-1 (a step, or runs that differ and come
    back), its p-value two-sided from the t distribution times the number of changes the
    search chose from in its family, over the family's weight (Bonferroni: analytic, never
    below what so many tries could give by chance).  None when the span is too short to hold one."""
    y = r.y[a:b]
    n = len(y)
    if n < 2 * MIN_SEGMENT:
        return None
    ii, jj = _candidates(n)
    c1, c2 = np.concatenate([[0.0], np.cumsum(y)]), np.concatenate([[0.0], np.cumsum(y * y)])
    s_in, q_in, n_in = c1[jj] - c1[ii], c2[jj] - c2[ii], (jj - ii).astype(float)
    s_out, q_out, n_out = c1[n] - s_in, c2[n] - q_in, n - n_in
    sse = np.maximum(q_in - s_in**2 / n_in, 0) + np.maximum(q_out - s_out**2 / n_out, 0)
    pooled = sse / (n - 2)
    within, df_w = float(np.mean(r.w[a:b])), float(np.sum(r.df_w[a:b]))
    var = np.maximum(pooled, within) if df_w > 0 else pooled
    d = s_in / n_in - s_out / n_out
    se = np.sqrt(np.maximum(var, 1e-300) * (1 / n_in + 1 / n_out))
    t = np.abs(d) / se
    steps = jj == n
    # two families, a weighted Bonferroni over both (the weights sum to 1): the steps, few and
    # the common change, at STEP_WEIGHT of the level, and the runs that come back, many, at the
    # rest: a step is not charged for every interval the search could try
    best = []
    for family, weight in ((steps, STEP_WEIGHT), (~steps, 1 - STEP_WEIGHT)):
        if family.any():
            k = int(np.flatnonzero(family)[np.argmax(t[family])])
            df = float(n - 2) if (df_w <= 0 or pooled[k] >= within) else df_w
            best.append((min(1.0, 2 * t_cdf(df, -float(t[k])) * int(family.sum()) / weight), k, df))
    p, k, df = min(best)
    half = t_quantile(df, 0.975) * float(se[k])
    i, j = int(ii[k]), int(jj[k])
    dk = float(d[k])
    if j == n:  # a step: the runs after it less the runs before it
        return Found(a + i, b, dk, dk - half, dk + half, p, False)
    return Found(a + i, a + j, dk, dk - half, dk + half, p, True)


def search(r: Runs, a: int = 0, b: int | None = None) -> list[Found]:
    """Every change in the runs a..b-1 that the search finds (circular binary segmentation,
    Olshen et al. 2004, with analytic p-values): the best change of the span, then the best of
    each part it leaves, while they stay significant at SEARCH_P."""
    b = len(r.y) if b is None else b
    f = best_change(r, a, b)
    if f is None or f.p > SEARCH_P:
        return []
    parts = [(a, f.i), (f.i, f.j), (f.j, b)] if f.temporary else [(a, f.i), (f.i, b)]
    out = [f]
    for lo, hi in parts:
        out += search(r, lo, hi)
    return out


def line(y: np.ndarray) -> tuple[float, float, float, float]:
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


def _step_sse(y: np.ndarray, k: int) -> float:
    return float(((y[:k] - y[:k].mean()) ** 2).sum() + ((y[k:] - y[k:].mean()) ** 2).sum())


def drift(y: np.ndarray, spread: float):
    """A slow drift across the whole series: a straight line fits it better than the best single
    step does, its slope is significant (p < 0.001) and the drift over the series is larger than
    twice the launches' spread.  (total log change, its 95 % half-width, p, the line) or None."""
    n = len(y)
    if n < DRIFT_RUNS:  # fewer runs cannot tell a line from a step
        return None
    a, b, se, p = line(y)
    fitted = a + b * np.arange(n, dtype=float)
    best_step = min(_step_sse(y, k) for k in range(MIN_SEGMENT, n - MIN_SEGMENT + 1))
    total = b * (n - 1)
    if float(((y - fitted) ** 2).sum()) >= best_step or p >= 0.001 or abs(total) <= 2 * spread:
        return None
    return total, t_quantile(n - 2, 0.975) * se * (n - 1), p, fitted


def drift_explains(y: np.ndarray, k: int) -> bool:
    """Whether a straight line fits y as well as the step at k (both with two parameters), and
    its slope is significant: slow drift, not a step.  Fewer than DRIFT_RUNS runs cannot tell
    a line from a step (three and three fit either), and stay a step."""
    if len(y) < DRIFT_RUNS:
        return False
    a, b, _, p = line(y)
    sse_line = float(((y - (a + b * np.arange(len(y), dtype=float))) ** 2).sum())
    return sse_line <= _step_sse(y, k) * 1.05 and p < 0.01


def newest_band(r: Runs, off=None) -> tuple[float, float, float] | None:
    """What the runs before the newest predict for it: (the newest centre less the level of the
    runs since their last change, the standard error of that difference, its degrees of
    freedom), or None with fewer than MIN_SEGMENT runs before it.  The error holds the runs' own
    offset beyond their launches, the newest run's launches, and the level's own error.

    `off(band, spread)`: whether a band says its run is off (the caller's alarm test).  When the
    run before the newest was itself off what its own predecessors predicted (last night's
    alarm), it is no run of the old level, nor yet a level of its own: the newest is judged
    against each (the old level without it; it alone as the new one) and the nearer stands.  A
    search that must give a level MIN_SEGMENT runs would pair it with the last old run and call
    the newest, agreeing with it, a second alarm half its size."""
    if len(r.y) < MIN_SEGMENT + 1:
        return None
    prev = r.part(list(range(len(r.y) - 1)))
    odd = set(outliers(prev.y, prev.spread))
    prev = prev.part([i for i in range(len(prev.y)) if i not in odd])
    if len(prev.y) < MIN_SEGMENT:
        return None
    last = newest_band(prev) if off is not None and len(prev.y) > MIN_SEGMENT else None
    if last is not None and off(last, prev.spread):
        head = prev.part(list(range(len(prev.y) - 1)))
        old = _cuts(head)
        bands = [_band(r, head, old), _band(r, prev, [*old, len(head.y)])]
        return min(bands, key=lambda b: abs(b[0]))
    return _band(r, prev, _cuts(prev))


def _cuts(r: Runs) -> list[int]:
    """Where the search cuts the runs into levels, inside them."""
    return sorted({x for f in search(r) for x in (f.i, f.j) if 0 < x < len(r.y)})


def _band(r: Runs, prev: Runs, cuts: list[int]) -> tuple[float, float, float]:
    """The newest run of `r` against the last of `prev`'s segments cut at `cuts`."""
    edges = [0, *cuts, len(prev.y)]
    segments = [prev.y[a:b] for a, b in zip(edges, edges[1:]) if b > a]
    level = segments[-1]
    sse = sum(float(((s - s.mean()) ** 2).sum()) for s in segments)
    df_runs = len(prev.y) - len(segments)
    pooled = sse / df_runs if df_runs > 0 else 0.0
    within, df_w = float(np.mean(prev.w)), float(np.sum(prev.df_w))
    between = max(0.0, pooled - within)  # the runs' own offset, beyond their launches
    run_var, df = (pooled, df_runs) if pooled >= within or df_w <= 0 else (within, df_w)
    se = math.sqrt(between + float(r.w[-1]) + max(run_var, 1e-300) / len(level))
    return float(r.y[-1] - level.mean()), se, max(df, 1.0)
