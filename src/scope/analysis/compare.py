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
from scipy import stats

from scope.model import Run

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
    """Two-sided p-value of the Mann-Whitney U test (scipy.stats), normal approximation with
    tie and continuity correction: exact enough from ~8 samples per side, and fast for the
    thousands of samples a point holds."""
    p = stats.mannwhitneyu(a, b, alternative="two-sided", use_continuity=True, method="asymptotic").pvalue
    return 1.0 if not math.isfinite(p) else float(p)


def _ratio_of_medians(a, b, axis=-1):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.median(b, axis=axis) / np.median(a, axis=axis)


def bootstrap_ratio_ci(
    a: np.ndarray, b: np.ndarray, rng: np.random.Generator, resamples: int = 1000, level: float = 0.95
) -> tuple[float, float]:
    """Percentile bootstrap CI of median(b) / median(a), each sample resampled on its own
    (scipy.stats.bootstrap)."""
    if len(a) > MAX_BOOT_SAMPLES:
        a = rng.choice(a, MAX_BOOT_SAMPLES, replace=False)
    if len(b) > MAX_BOOT_SAMPLES:
        b = rng.choice(b, MAX_BOOT_SAMPLES, replace=False)
    res = stats.bootstrap(
        (a, b),
        _ratio_of_medians,
        n_resamples=resamples,
        confidence_level=level,
        method="percentile",
        vectorized=True,
        random_state=rng,
    )
    lo, hi = res.confidence_interval
    return (float(lo), float(hi)) if math.isfinite(lo) and math.isfinite(hi) else (float("nan"), float("nan"))


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


def _pairs(a: Run, b: Run):
    """Points of B with their counterpart in A: same test, parameters and size.  A run whose
    points carry no parameters (an import: OSU and IMB name none) is matched by test and size
    to each parameter setting of the other run, which is then named in the row."""

    def key(p, with_params):
        return (p.test, tuple(sorted(p.params.items())) if with_params else (), p.size)

    bare_a = a.imported and not any(p.params for p in a.points)
    bare_b = b.imported and not any(p.params for p in b.points)
    with_params = not (bare_a or bare_b)
    index: dict = {}
    for q in a.points:
        index.setdefault(key(q, with_params), []).append(q)
    for p in b.points:
        for q in index.get(key(p, with_params), []):
            yield q, p


def compare_runs(a: Run, b: Run, alpha: float, min_effect: float) -> list[dict]:
    """Per point of B that A has too: B against A."""
    rows = []
    for q, p in _pairs(a, b):
        c = compare_samples(q.samples, p.samples, alpha, min_effect)
        if c.n_a == 0 or c.n_b == 0:  # imported points carry no samples: compare the values, no verdict
            c.median_a, c.median_b = q.median, p.median
            c.ratio = p.median / q.median if q.median and p.median is not None else float("nan")
        rows.append({"test": p.test, "params": p.params or q.params, "size": p.size, **c.as_dict()})
    return rows
