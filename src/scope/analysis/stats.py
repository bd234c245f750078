"""Summary statistics, the front end's one implementation of what the engine's core/stats.c
computes per point: both are held to tests/data/stats_vectors.txt (the engine by
engine/unit/test_core.c, this module by tests/test_stats.py), the one-sample and all-equal
cases included.  The front end summarises where the engine cannot: samples pooled over
launches (run/combine.py), and a launch's own interval relative to its median
(analysis/replicates.py).

Quantiles interpolate linearly between order statistics (Hyndman & Fan's type 7, numpy's
default).  The median's 95 % interval is distribution-free: the number of samples below the
median is Binomial(n, 1/2), so [x_(j), x_(k)] covers it with probability P(j <= B < k); j is
exact from the binomial tail up to n = 1000, above that the normal approximation of Le Boudec,
"Performance Evaluation of Computer and Communication Systems", Thm 2.1.  Under 6 samples there
is no such interval.  An undefined figure is None (the engine writes NaN, which its JSON writer
makes null): sd of one sample, every figure of none, ci_rel of a median that is not positive."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

QUANTILES = (0.05, 0.25, 0.75, 0.95, 0.99)


@dataclass(frozen=True)
class Summary:
    n: int
    min: float | None
    max: float | None
    mean: float | None
    sd: float | None  # sample standard deviation (n - 1); None for fewer than 2 samples
    median: float | None
    p5: float | None
    p25: float | None
    p75: float | None
    p95: float | None
    p99: float | None
    ci_lo: float | None  # the median's 95 % distribution-free interval; None under 6 samples
    ci_hi: float | None
    ci_rel: float | None

    def as_dict(self) -> dict:
        """The keys of a point record's `stats` (docs/records.md), n aside."""
        return {k: v for k, v in self.__dict__.items() if k != "n"}


def median_ci_ranks(n: int) -> tuple[int, int] | None:
    """1-based ranks (j, k) of the order statistics bounding the median at 95 %, or None."""
    if n < 6:
        return None
    if n > 1000:
        rn = math.sqrt(n)
        return max(1, math.floor(0.5 * n - 0.98 * rn)), min(n, math.ceil(0.5 * n + 1 + 0.98 * rn))
    # the largest j with P(B <= j - 1) <= 0.025, the pmf summed in log space
    log_half_n, cdf, j = n * math.log(0.5), 0.0, 0
    for i in range(n // 2 + 1):
        p = math.exp(math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1) + log_half_n)
        if cdf + p > 0.025:
            break
        cdf += p
        j = i + 1
    return (j, n + 1 - j) if j >= 1 else None


def ci_rel(median: float | None, lo: float | None, hi: float | None) -> float | None:
    """An interval's half-width relative to the median it is about: the larger side, since
    a median's interval need not be symmetric; None where it is not defined."""
    if median is None or lo is None or hi is None or not median > 0:
        return None
    return max(median - lo, hi - median) / median


def quantiles(x: np.ndarray, qs) -> np.ndarray:
    """Quantiles `qs` of the sorted array `x` (n >= 1), type 7 (numpy's default): the same
    figures as np.quantile, without its first call's import of numpy.ma (8-10 ms of every
    run's start, issue 52)."""
    h = (len(x) - 1) * np.asarray(qs, dtype=float)
    lo = np.floor(h).astype(int)
    hi = np.minimum(lo + 1, len(x) - 1)
    return x[lo] + (h - lo) * (x[hi] - x[lo])


def finite_array(values) -> np.ndarray:
    """The finite values as float64, in their order (None and non-finite ones left out), in a
    pass of C: a point's samples, thousands, asked of every point of a large run."""
    x = np.asarray(values, dtype=float)  # None reads as NaN
    return x[np.isfinite(x)]


def row_medians(a: np.ndarray) -> np.ndarray:
    """np.median(a, axis=1), the same values (the middle one, or the mean of the two as numpy
    takes it), from each row sorted: numpy's partition along an axis took 4x as long on a
    bootstrap's 1000 x 300, and a large run's show bootstraps every nonblocking point."""
    s = np.sort(a, axis=1)
    n = a.shape[1]
    return s[:, n // 2] if n % 2 else (s[:, n // 2 - 1] + s[:, n // 2]) / 2


def median(values) -> float:
    """The median of a non-empty sequence of numbers (quantiles' type 7 at 1/2)."""
    return float(quantiles(np.sort(np.asarray(values, dtype=float)), 0.5))


def summarise(samples) -> Summary:
    """The summary of the finite values of `samples`."""
    x = np.sort(np.asarray([v for v in samples if v is not None], dtype=float))
    x = x[np.isfinite(x)]
    n = len(x)
    if n == 0:
        return Summary(0, *([None] * 13))
    q = [float(v) for v in quantiles(x, (0.5, *QUANTILES))]
    ranks = median_ci_ranks(n)
    lo, hi = (float(x[ranks[0] - 1]), float(x[ranks[1] - 1])) if ranks else (None, None)
    return Summary(
        n=n,
        min=float(x[0]),
        max=float(x[-1]),
        mean=float(x.mean()),
        sd=float(x.std(ddof=1)) if n > 1 else None,
        median=q[0],
        p5=q[1],
        p25=q[2],
        p75=q[3],
        p95=q[4],
        p99=q[5],
        ci_lo=lo,
        ci_hi=hi,
        ci_rel=ci_rel(q[0], lo, hi),
    )
