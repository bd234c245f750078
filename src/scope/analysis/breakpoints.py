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

NOISE = 0.01  # relative: SCOPE's default precision target
MIN_POINTS = 3  # per segment: two parameters and one to judge the fit


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


def fit_piecewise(sizes, times_us, max_segments: int = 4) -> Piecewise | None:
    pairs = sorted(
        (float(s), float(t))
        for s, t in zip(sizes, times_us)
        if t is not None and math.isfinite(t) and t > 0 and s is not None
    )
    m = len(pairs)
    if m < MIN_POINTS:
        return None
    n = np.array([p[0] for p in pairs])
    t = np.array([p[1] for p in pairs])
    seg = {}
    for i in range(m):
        for j in range(i + MIN_POINTS, m + 1):
            seg[(i, j)] = _fit(n[i:j], t[i:j])[2]
    kmax = min(max_segments, m // MIN_POINTS)
    best: dict[tuple[int, int], tuple[float, list[int]]] = {}  # (k, j) -> (rss, cut points)
    for j in range(MIN_POINTS, m + 1):
        best[(1, j)] = (seg[(0, j)], [])
    for k in range(2, kmax + 1):
        for j in range(k * MIN_POINTS, m + 1):
            options = [
                (best[(k - 1, i)][0] + seg[(i, j)], best[(k - 1, i)][1] + [i])
                for i in range((k - 1) * MIN_POINTS, j - MIN_POINTS + 1)
                if (k - 1, i) in best
            ]
            if options:
                best[(k, j)] = min(options, key=lambda o: o[0])
    choice = None
    for k in range(1, kmax + 1):
        if (k, m) not in best:
            continue
        rss, cuts = best[(k, m)]
        params = 2 * k + (k - 1)  # t0 and r_inf per segment, one position per switch
        bic = m * math.log(rss / m + NOISE**2) + params * math.log(m)
        if choice is None or bic < choice[0] - 1e-9:
            choice = (bic, cuts)
    bic, cuts = choice
    bounds = [0, *cuts, m]
    segments = []
    for a, b in zip(bounds, bounds[1:]):
        t0, k, _, resid = _fit(n[a:b], t[a:b])
        segments.append(
            Segment(int(n[a]), int(n[b - 1]), t0, 1.0 / k if k > 0 else float("inf"), float(np.max(np.abs(resid))))
        )
    return Piecewise(segments, bic)
