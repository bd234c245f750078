"""Comparing two samples of times: the ratio of medians with a bootstrap confidence
interval, a Mann-Whitney U test for significance, and a verdict that needs both.

A verdict of "slower" or "faster" needs p < alpha *and* a ratio beyond the minimum effect
(1 + min_effect, or its inverse).  "no difference" needs the ratio's whole CI inside the
band [1/(1 + min_effect), 1 + min_effect]: the data show the effect is small, not merely
that it was not detected.  Anything else, including too few samples, is "insufficient data"
(as asv and Google Benchmark's U-test do: silence is not evidence of equality)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

MIN_SAMPLES = 5
MAX_BOOT_SAMPLES = 4000  # per side; the bootstrap of a median needs no more


@dataclass
class Comparison:
    n_a: int
    n_b: int
    median_a: float
    median_b: float
    ratio: float  # median_b / median_a; > 1 means B takes longer
    ci_lo: float
    ci_hi: float
    p_value: float
    verdict: str  # slower | faster | no difference | insufficient data

    def as_dict(self) -> dict:
        return dict(self.__dict__)


def mann_whitney_p(a: np.ndarray, b: np.ndarray) -> float:
    """Two-sided p-value of the Mann-Whitney U test, normal approximation with tie
    correction and continuity correction (exact enough from ~8 samples per side)."""
    n1, n2 = len(a), len(b)
    both = np.concatenate([a, b])
    order = np.argsort(both, kind="mergesort")
    ranks = np.empty(len(both))
    sorted_vals = both[order]
    # average ranks for ties
    n = len(both)
    ranks_sorted = np.arange(1, n + 1, dtype=float)
    boundaries = np.flatnonzero(np.diff(sorted_vals)) + 1
    starts = np.concatenate([[0], boundaries])
    ends = np.concatenate([boundaries, [n]])
    tie_term = 0.0
    for s, e in zip(starts, ends):
        if e - s > 1:
            ranks_sorted[s:e] = (s + 1 + e) / 2.0
            t = e - s
            tie_term += t**3 - t
    ranks[order] = ranks_sorted
    r1 = ranks[:n1].sum()
    u1 = r1 - n1 * (n1 + 1) / 2.0
    mu = n1 * n2 / 2.0
    var = n1 * n2 / 12.0 * ((n + 1) - tie_term / (n * (n - 1)))
    if var <= 0:
        return 1.0
    z = (abs(u1 - mu) - 0.5) / math.sqrt(var)
    return max(0.0, min(1.0, math.erfc(max(z, 0.0) / math.sqrt(2))))


def bootstrap_ratio_ci(
    a: np.ndarray, b: np.ndarray, rng: np.random.Generator, resamples: int = 1000, level: float = 0.95
) -> tuple[float, float]:
    """Percentile bootstrap CI of median(b) / median(a)."""
    if len(a) > MAX_BOOT_SAMPLES:
        a = rng.choice(a, MAX_BOOT_SAMPLES, replace=False)
    if len(b) > MAX_BOOT_SAMPLES:
        b = rng.choice(b, MAX_BOOT_SAMPLES, replace=False)
    ma = np.median(rng.choice(a, (resamples, len(a)), replace=True), axis=1)
    mb = np.median(rng.choice(b, (resamples, len(b)), replace=True), axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        r = mb / ma
    r = r[np.isfinite(r)]
    if not len(r):
        return float("nan"), float("nan")
    q = (1 - level) / 2
    return float(np.quantile(r, q)), float(np.quantile(r, 1 - q))


def compare_samples(a, b, alpha: float = 0.05, min_effect: float = 0.02, seed: int = 1) -> Comparison:
    a = np.asarray([x for x in a if x is not None and math.isfinite(x)], dtype=float)
    b = np.asarray([x for x in b if x is not None and math.isfinite(x)], dtype=float)
    na, nb = len(a), len(b)
    if na == 0 or nb == 0:
        return Comparison(
            na,
            nb,
            float("nan"),
            float("nan"),
            float("nan"),
            float("nan"),
            float("nan"),
            float("nan"),
            "insufficient data",
        )
    ma, mb = float(np.median(a)), float(np.median(b))
    ratio = mb / ma if ma > 0 else float("nan")
    if na < MIN_SAMPLES or nb < MIN_SAMPLES:
        return Comparison(na, nb, ma, mb, ratio, float("nan"), float("nan"), float("nan"), "insufficient data")
    rng = np.random.default_rng(seed)
    lo, hi = bootstrap_ratio_ci(a, b, rng)
    p = mann_whitney_p(a, b)
    up, down = 1.0 + min_effect, 1.0 / (1.0 + min_effect)
    if p < alpha and ratio >= up and lo > 1.0:
        verdict = "slower"
    elif p < alpha and ratio <= down and hi < 1.0:
        verdict = "faster"
    elif down <= lo and hi <= up:
        verdict = "no difference"
    else:
        verdict = "insufficient data"
    return Comparison(na, nb, ma, mb, ratio, lo, hi, p, verdict)
