"""Collectives: distributions (MPIBench), subsets of ranks, and SCOPE's cost models.

Distributions: the share of samples above n x minimum (n = 1 ... 4), as MPIBench reports,
and outliers: samples beyond 10 x the median, where a retransmission time-out or a
descheduled rank shows up.

Subsets: window-timed records keep every valid repetition's start and end per rank (relative
to the repetition's common start), so the completion time of any subset of ranks is
max over the subset of end - 0.

Models (SCOPE §6.5.4), with L = ceil(log2 p):
    barrier    t(p)    = t_oc + t_init p + t_s L
    broadcast  t(n, p) = t_oc + t_init p + (t_s + t_w n) L
    reduce     t(n, p) = t_oc + t_init p + (t_s + (t_w + t_op) n) L
fitted by least squares over the measured (n, p) points; effective bandwidth
B_eff = sum of bytes moved / t(n, p)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from scope.model import WindowInfo


def shares_above_min(samples, factors=(1, 2, 3, 4)) -> dict[int, float]:
    """Share of samples strictly above factor x minimum (MPIBench's view of a distribution)."""
    x = np.asarray([s for s in samples if s is not None and math.isfinite(s)], dtype=float)
    if not len(x):
        return {}
    lo = x.min()
    return {f: float(np.mean(x > f * lo)) for f in factors}


def outliers(samples, factor: float = 10.0) -> dict:
    x = np.asarray([s for s in samples if s is not None and math.isfinite(s)], dtype=float)
    if not len(x):
        return {"count": 0, "max_over_median": float("nan")}
    med = float(np.median(x))
    big = x[x > factor * med]
    return {
        "count": int(len(big)),
        "max_over_median": float(x.max() / med) if med > 0 else float("nan"),
        "largest_us": float(big.max()) if len(big) else None,
    }


def parse_ranks(spec: str) -> list[int]:
    """'0,3-5' -> [0, 3, 4, 5]."""
    out: list[int] = []
    for part in spec.split(","):
        part = part.strip()
        if not part:
            continue
        a, dash, b = part.partition("-")
        try:
            lo, hi = int(a), int(b) if dash else int(a)
        except ValueError:
            raise ValueError(f"'{part}' is not a rank or range (e.g. 0,3-5)") from None
        if lo < 0 or hi < lo:
            raise ValueError(f"'{part}' is not a rank range")
        out += [r for r in range(lo, hi + 1) if r not in out]
    if not out:
        raise ValueError("empty rank list")
    return out


def subset_completion(w: WindowInfo, ranks: list[int]) -> list[float]:
    """Per valid repetition: completion time (us) of the given ranks only."""
    ends = w.end_us
    if not ends:
        return []
    bad = [r for r in ranks if r >= len(ends)]
    if bad:
        raise ValueError(f"rank {bad[0]} is not in this point ({len(ends)} ranks)")
    if w.timing == "barrier":
        starts = w.start_us
        return [max(ends[r][i] - starts[r][i] for r in ranks) for i in range(len(ends[0]))]
    return [max(ends[r][i] for r in ranks) for i in range(len(ends[0]))]


@dataclass
class CollectiveModel:
    op: str
    params: dict[str, float]
    points: int
    max_abs_residual: float


MODELS = {
    "barrier": ["t_oc", "t_init", "t_s"],
    "bcast": ["t_oc", "t_init", "t_s", "t_w"],
    "reduce": ["t_oc", "t_init", "t_s", "t_w+t_op"],
}


def _features(op: str, n: float, p: int) -> list[float]:
    L = math.ceil(math.log2(p)) if p > 1 else 0
    if op == "barrier":
        return [1.0, p, L]
    return [1.0, p, L, n * L]


def fit_collective(op: str, points: list[tuple[float, int, float]]) -> CollectiveModel | None:
    """points: (bytes per rank, processes, time us).  None when they cannot determine it."""
    names = MODELS.get(op)
    if not names or len(points) < len(names) + 1:
        return None
    a = np.array([_features(op, n, p) for n, p, _ in points], dtype=float)
    t = np.array([x[2] for x in points], dtype=float)
    if np.linalg.matrix_rank(a) < len(names):
        return None
    w = 1.0 / t  # relative residuals, as for Hockney
    coef, *_ = np.linalg.lstsq(a * w[:, None], t * w, rcond=None)
    model = a @ coef
    resid = np.abs((t - model) / model)
    return CollectiveModel(op, dict(zip(names, map(float, coef))), len(points), float(resid.max()))


def overlap(total_us: float, compute_us: float, pure_us: float) -> float | None:
    """1 - (t_total - t_compute) / t_pure (OSU's definition), not clamped: below 0 the
    computation made the operation slower than running it alone, above 1 is noise.  With
    nothing computed (nonblocking=yes) it is 1 - t_total / t_pure, 0 up to noise."""
    if compute_us is None or not pure_us or total_us is None:
        return None
    return 1.0 - (total_us - compute_us) / pure_us


@dataclass(frozen=True)
class Overlap:
    value: float
    ci_lo: float
    ci_hi: float


def overlap_ci(
    total: list[float], pure: list[float], compute_us: float, resamples: int = 1000, seed: int = 0
) -> Overlap | None:
    """Overlap from the two variants' samples (timed alike, in one loop) with a 95 % percentile
    bootstrap interval (each variant resampled on its own; 4000 samples a side are plenty for
    a median)."""
    t = np.asarray([x for x in total if x is not None and math.isfinite(x)], dtype=float)
    r = np.asarray([x for x in pure if x is not None and math.isfinite(x)], dtype=float)
    if len(t) < 5 or len(r) < 5 or compute_us is None:
        return None
    rng = np.random.default_rng(seed)
    t = rng.choice(t, 4000, replace=False) if len(t) > 4000 else t
    r = rng.choice(r, 4000, replace=False) if len(r) > 4000 else r
    value = overlap(float(np.median(t)), compute_us, float(np.median(r)))
    mt = np.median(rng.choice(t, (resamples, len(t))), axis=1)
    mr = np.median(rng.choice(r, (resamples, len(r))), axis=1)
    boot = 1.0 - (mt - compute_us) / mr
    lo, hi = np.quantile(boot, [0.025, 0.975])
    return Overlap(float(value), float(lo), float(hi))
