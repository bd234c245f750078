"""Protocol switch points: a piecewise Hockney fit of time against size.

MPI libraries and transports change strategy with message size (eager to rendezvous, a copy
through a bounce buffer to single-copy, packets filling an MTU), and each strategy has its own
t0 and r_inf.  The curve is split into contiguous segments, each fitted by t = t0 + n/r_inf on
relative residuals; the best split for each segment count comes from dynamic programming and
the count itself from the Bayesian information criterion.  The residual sum is floored at the
measurement precision (NOISE, relative), so the criterion does not buy segments to chase
noise smaller than what a point can resolve."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from scope.analysis.hockney import usable

NOISE = 0.01  # relative: SCOPE's default precision target
MIN_POINTS = 3  # per segment: two parameters and one to judge the fit
MAX_POINTS = 4096  # the largest series a size list can make; beyond it the split is not sought
GRID = 512  # cut positions the search considers at once


@dataclass
class Segment:
    first_size: int
    last_size: int
    t0_us: float
    rinf_MBps: float  # inf when time does not grow within the segment
    max_abs_residual: float


@dataclass
class Piecewise:
    segments: list[Segment]
    bic: float

    @property
    def switches(self) -> list[tuple[int, int]]:
        """(last size of a segment, first size of the next): where each switch falls."""
        return [(a.last_size, b.first_size) for a, b in zip(self.segments, self.segments[1:])]

    def switch_positions(self) -> list[float]:
        """A single size per switch, the geometric midpoint, for marking a plot."""
        return [math.sqrt(max(a, 1) * b) for a, b in self.switches]


def _fit(n: np.ndarray, t: np.ndarray) -> tuple[float, float, float, np.ndarray]:
    """Weighted least squares of t = t0 + k n on relative residuals: (t0, k, rss, resid)."""
    a = np.column_stack([np.ones_like(n), n]) / t[:, None]
    coef, *_ = np.linalg.lstsq(a, np.ones_like(t), rcond=None)
    t0, k = float(coef[0]), float(coef[1])
    if k < 0:  # a flat (or noisy, falling) segment: time does not grow with size
        k = 0.0
        t0 = float(len(t) / np.sum(1.0 / t))  # minimises sum((t - t0)/t)^2
    model = t0 + k * n
    resid = (t - model) / model
    return t0, k, float(np.sum(resid**2)), resid


class _Sums:
    """Prefix sums that give any segment's weighted least-squares fit in O(1).  With u = 1/t and
    v = n/t, the fit minimises sum (1 - t0 u - k v)^2: normal equations in five sums."""

    def __init__(self, n: np.ndarray, t: np.ndarray):
        u, v = 1.0 / t, n / t

        def prefix(x):
            return np.concatenate([[0.0], np.cumsum(x)])

        self.su, self.sv, self.suu, self.suv, self.svv = map(prefix, (u, v, u * u, u * v, v * v))

    def rss(self, i: np.ndarray, j) -> np.ndarray:
        """Residual sum of squares of the segments [i, j), broadcast over arrays of starts and ends."""
        c = np.asarray(j - i, dtype=float)
        su, sv = self.su[j] - self.su[i], self.sv[j] - self.sv[i]
        suu, suv, svv = self.suu[j] - self.suu[i], self.suv[j] - self.suv[i], self.svv[j] - self.svv[i]
        det = suu * svv - suv * suv
        with np.errstate(divide="ignore", invalid="ignore"):
            t0 = (su * svv - sv * suv) / det
            k = (suu * sv - suv * su) / det
            full = c - 2 * (t0 * su + k * sv) + t0 * t0 * suu + 2 * t0 * k * suv + k * k * svv
            t0f = c / su  # as _fit: a segment whose time does not grow is flat at this t0
            flat = c - 2 * t0f * su + t0f * t0f * suu
        use_flat = ~(k >= 0) | ~(det > 1e-12 * suu * svv)
        return np.maximum(np.where(use_flat, flat, full), 0.0)


def _refine(sums: _Sums, bounds: list[int], step: int) -> list[int]:
    """Each inner cut moved to the best position within a grid step, its neighbours held."""
    for c in range(1, len(bounds) - 1):
        a, b = bounds[c - 1], bounds[c + 1]
        xs = np.arange(max(a + MIN_POINTS, bounds[c] - step), min(b - MIN_POINTS, bounds[c] + step) + 1)
        if len(xs):
            total = sums.rss(np.full(len(xs), a), xs) + sums.rss(xs, b)
            bounds[c] = int(xs[np.argmin(total)])
    return bounds


def fit_piecewise(sizes, times_us, max_segments: int = 4) -> Piecewise | None:
    """The best split into at most max_segments Hockney segments (BIC), by dynamic programming
    over O(1) segment fits.  None for fewer than MIN_POINTS points or more than MAX_POINTS
    (an imported file can hold any number)."""
    n, t = usable(sizes, times_us)
    m = len(t)
    if m < MIN_POINTS or m > MAX_POINTS:
        return None
    order = np.lexsort((t, n))  # by size, then time, as sorting the pairs did
    n, t = n[order], t[order]
    sums = _Sums(n, t)
    kmax = min(max_segments, m // MIN_POINTS)
    # Cuts are sought on a grid of at most GRID positions, then each is refined among the
    # positions between its grid neighbours: exact for up to GRID points, and O(GRID^2) work
    # however long the series.
    step = max(1, -(-m // GRID))
    grid = np.unique(np.concatenate([np.arange(0, m + 1, step), [m]]))
    best = np.full((kmax + 1, len(grid)), np.inf)  # best[k, g]: least rss of points [0, grid[g]) in k segments
    cut = np.zeros((kmax + 1, len(grid)), dtype=int)  # grid index where its last segment starts
    ok1 = grid >= MIN_POINTS
    best[1, ok1] = sums.rss(np.zeros(ok1.sum(), dtype=int), grid[ok1])
    # Every segment [grid[i], grid[j]) fitted at once: the same table serves every k.
    gi, gj = np.meshgrid(grid, grid, indexing="ij")
    seg = np.where(gj - gi >= MIN_POINTS, sums.rss(gi, gj), np.inf)
    for k in range(2, kmax + 1):
        prev = np.where(grid >= (k - 1) * MIN_POINTS, best[k - 1], np.inf)
        vals = prev[:, None] + seg  # vals[i, j]: k - 1 segments up to grid[i], then one to grid[j]
        cut[k] = np.argmin(vals, axis=0)
        best[k] = vals[cut[k], np.arange(len(grid))]
    choice = None
    for k in range(1, kmax + 1):
        if not math.isfinite(best[k, -1]):
            continue
        bounds, g = [m], len(grid) - 1
        for kk in range(k, 1, -1):
            g = int(cut[kk, g])
            bounds.append(int(grid[g]))
        bounds = [0, *reversed(bounds)]
        if step > 1:  # refined before judging: a switch between grid positions needs no extra segment
            bounds = _refine(sums, bounds, step)
        rss = float(sum(sums.rss(np.array([a]), np.array([b]))[0] for a, b in zip(bounds, bounds[1:])))
        params = 2 * k + (k - 1)  # t0 and r_inf per segment, one position per switch
        bic = m * math.log(rss / m + NOISE**2) + params * math.log(m)
        if choice is None or bic < choice[0] - 1e-9:
            choice = (bic, bounds)
    bic, bounds = choice
    segments = []
    for a, b in zip(bounds, bounds[1:]):
        t0, kk, _, resid = _fit(n[a:b], t[a:b])
        segments.append(
            Segment(int(n[a]), int(n[b - 1]), t0, 1.0 / kk if kk > 0 else float("inf"), float(np.max(np.abs(resid))))
        )
    return Piecewise(segments, bic)
