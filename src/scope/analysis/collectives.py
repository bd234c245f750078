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

import concurrent.futures
import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from scope.analysis.stats import finite_array, row_medians
from scope.cores import usable_cores
from scope.model import Point, Run, WindowInfo


def shares_above_min(samples, factors=(1, 2, 3, 4)) -> dict[int, float]:
    """Share of samples strictly above factor x minimum (MPIBench's view of a distribution)."""
    if not len(samples):  # a point without samples (a large run's, left out): no array made
        return {}
    x = finite_array(samples)
    if not len(x):
        return {}
    lo = x.min()
    return {f: float(np.mean(x > f * lo)) for f in factors}


def outliers(samples, factor: float = 10.0) -> dict:
    if not len(samples):
        return {"count": 0, "max_over_median": float("nan")}
    x = finite_array(samples)
    if not len(x):
        return {"count": 0, "max_over_median": float("nan")}
    med = float(np.median(x))
    big = x[x > factor * med]
    return {
        "count": int(len(big)),
        "max_over_median": float(x.max() / med) if med > 0 else float("nan"),
        "largest_us": float(big.max()) if len(big) else None,
    }


MOST_RANKS = 1 << 24  # the engine's plan takes no more (--plan N)


def parse_ranks(spec: str) -> list[int]:
    """'0,3-5' -> [0, 3, 4, 5]; ranks are below MOST_RANKS, so a range cannot fill the memory
    (issue 44: 0-999999999999 was built until the kernel killed it)."""
    out: list[int] = []
    seen: set[int] = set()
    for part in spec.split(","):
        part = part.strip()
        if not part:
            raise ValueError("an empty part in the rank list (e.g. 0,3-5)")
        a, dash, b = part.partition("-")
        if not (a.isascii() and a.isdigit()) or (dash and not (b.isascii() and b.isdigit())):
            raise ValueError(f"'{part}' is not a rank or range (e.g. 0,3-5)")
        lo, hi = int(a), int(b) if dash else int(a)
        if hi < lo:
            raise ValueError(f"'{part}' is not a rank range")
        if hi >= MOST_RANKS:
            raise ValueError(f"rank {hi} is beyond any run's ranks (at most {MOST_RANKS - 1})")
        for r in range(lo, hi + 1):
            if r not in seen:
                seen.add(r)
                out.append(r)
    return out


def subset_completion(w: WindowInfo, ranks: list[int]) -> list[float]:
    """Per valid repetition: completion time (us) of the given ranks only."""
    ends = w.end_us
    if not ends:
        return []
    bad = [r for r in ranks if r >= len(ends)]
    if bad:
        raise ValueError(f"rank {bad[0]} is not in this point ({len(ends)} ranks)")
    if w.timing in ("barrier", "osu"):  # each rank's own time, no common start
        starts = w.start_us
        return [max(ends[r][i] - starts[r][i] for r in ranks) for i in range(len(ends[0]))]
    return [max(ends[r][i] for r in ranks) for i in range(len(ends[0]))]


@dataclass
class CollectiveModel:
    """A SCOPE collective model fitted to the points of one operation and parameter setting,
    or the reason it was not (`refused`)."""

    op: str
    setting: dict[str, object]  # the parameters other than size and procs
    params: dict[str, float] = field(default_factory=dict)
    se: dict[str, float] = field(default_factory=dict)  # standard errors of params
    r2: float | None = None  # weighted as the fit is (weights 1/t)
    points: int = 0
    max_abs_residual: float = 0.0
    holdout_procs: int | None = None  # fitted without this process count ...
    holdout_error: float | None = None  # ... its points predicted within this relative error
    refused: str | None = None


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


def _lstsq(op: str, points: list[tuple[float, int, float]]):
    """Weighted least squares (weights 1/t: relative residuals, as for Hockney); None when
    the design is singular."""
    a = np.array([_features(op, n, p) for n, p, _ in points], dtype=float)
    t = np.array([x[2] for x in points], dtype=float)
    w = 1.0 / t
    aw, tw = a * w[:, None], t * w
    if np.linalg.matrix_rank(aw) < a.shape[1]:
        return None
    coef, *_ = np.linalg.lstsq(aw, tw, rcond=None)
    return a, t, aw, tw, coef


def _singular_reason(op: str, points) -> str:
    procs = sorted({p for _, p, _ in points})
    sizes = sorted({n for n, _, _ in points})
    if len(procs) < 3:
        return f"process counts {','.join(map(str, procs))}: the model needs at least 3 (e.g. --procs 2,3,4,8)"
    if op != "barrier" and len(sizes) < 2:
        return "one size: t_w needs at least two"
    return (
        f"process counts {','.join(map(str, procs))} make p and log2 p collinear "
        "(add counts that are not powers of two, e.g. 3 and 6)"
    )


def fit_collective(op: str, points: list[tuple[float, int, float]], setting: dict | None = None) -> CollectiveModel:
    """points: (bytes per rank, processes, time us) of one parameter setting."""
    names = MODELS[op]
    m = CollectiveModel(op, dict(setting or {}), points=len(points))
    if len(points) < len(names) + 1:
        m.refused = f"{len(points)} points for {len(names)} parameters: at least {len(names) + 1} needed"
        return m
    fit = _lstsq(op, points)
    if fit is None:
        m.refused = _singular_reason(op, points)
        return m
    a, t, aw, tw, coef = fit
    model = a @ coef
    dof = len(points) - len(names)
    rss = float(np.sum((tw - aw @ coef) ** 2))
    v = (1.0 / t) ** 2  # weighted R2: total sum of squares about the weighted mean
    tss = float(np.sum(v * (t - np.sum(v * t) / np.sum(v)) ** 2))
    cov = (rss / dof) * np.linalg.inv(aw.T @ aw) if dof > 0 else np.full((len(names),) * 2, np.nan)
    m.params = dict(zip(names, map(float, coef)))
    m.se = dict(zip(names, map(float, np.sqrt(np.clip(np.diag(cov), 0, None)))))
    m.r2 = 1 - rss / tss if tss > 0 else None
    m.max_abs_residual = float(np.max(np.abs((t - model) / model)))
    # Hold-out: fit without the largest process count, predict it (the use a model is for).
    top = max(p for _, p, _ in points)
    rest = [x for x in points if x[1] != top]
    held = [x for x in points if x[1] == top]
    sub = _lstsq(op, rest) if len(rest) > len(names) else None
    if sub is not None:
        coef2 = sub[4]
        pred = np.array([_features(op, n, p) for n, p, _ in held]) @ coef2
        obs = np.array([x[2] for x in held])
        m.holdout_procs, m.holdout_error = top, float(np.max(np.abs(pred - obs) / obs))
    return m


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
    t, r = finite_array(total), finite_array(pure)
    if len(t) < 5 or len(r) < 5 or compute_us is None:
        return None
    rng = np.random.default_rng(seed)
    t = rng.choice(t, 4000, replace=False) if len(t) > 4000 else t
    r = rng.choice(r, 4000, replace=False) if len(r) > 4000 else r
    value = overlap(float(np.median(t)), compute_us, float(np.median(r)))
    mt = row_medians(rng.choice(t, (resamples, len(t))))
    mr = row_medians(rng.choice(r, (resamples, len(r))))
    boot = 1.0 - (mt - compute_us) / mr
    lo, hi = np.quantile(boot, [0.025, 0.975])
    return Overlap(float(value), float(lo), float(hi))


@dataclass(frozen=True)
class WindowFacts:
    """What the table of a window- or barrier-timed point shows beyond its statistics, derived
    once (RunFacts.windows) so that show, show --json, export and the report say the same:
    MPIBench's shares of samples above 2x and 4x the minimum, the outliers (beyond 10x the
    median), the overlap of a nonblocking point with its 95 % bootstrap interval; with `ranks`,
    the completion time of those ranks alone (its median and the rest over that subset)."""

    point: Point = field(repr=False, compare=False)  # the point described (not in JSON: the doc has its own)
    median_us: float | None
    above_2x_min: float | None  # share of samples, 0 .. 1; None without samples
    above_4x_min: float | None
    outliers: int
    overlap: Overlap | None
    ranks: tuple[int, ...] | None = None  # the subset, or None for all ranks

    def as_dict(self) -> dict:
        p = self.point
        return {
            "test": p.test, "params": p.params, "size": p.size, "procs": p.procs, "ranks": self.ranks,
            "median_us": self.median_us, "above_2x_min": self.above_2x_min, "above_4x_min": self.above_4x_min,
            "outliers": self.outliers, "overlap": self.overlap,
        }  # fmt: skip


def _window_samples(p: Point, ranks: list[int] | None) -> tuple[list | None, float | None, tuple | None]:
    """A point's samples (its ranks' completions where `ranks` are given), their median, and
    what its overlap's bootstrap takes (None for a point without one); no samples (None) where
    the record keeps its tail and overlap (run/combine.py).  ValueError when `ranks` names a
    rank the point does not have."""
    if not ranks and "tail" in p.part:
        return None, p.median, None
    x, med = p.samples, p.median
    if ranks:  # per repetition, in the point's unit: an iteration may hold several operations
        x = [v / (p.ops_per_iter or 1) for v in subset_completion(p.window, ranks)]
        med = float(np.median(x)) if x else None
    return x, med, overlap_inputs(x, lambda: p.reference_samples, p.extra.get("compute_us"))


def overlap_inputs(samples, reference: Callable[[], list], compute_us) -> tuple | None:
    """What a paired point's overlap is bootstrapped from (overlap_ci): its samples, its
    reference variant's and its compute time; None where it has none.  `reference` is asked for
    only where there are samples enough (a record's read): overlap_ci needs 5 of each.  The
    views and the record kept where launches are combined (run/combine.py) take it alike."""
    ref = reference() if len(samples or ()) >= 5 else None
    return (samples, ref, compute_us) if ref else None


def tail_of(samples) -> dict:
    """What a window- or barrier-timed point's table says of its samples' tail: MPIBench's
    shares above 2x and 4x the minimum (None without samples) and the outliers (beyond 10x the
    median); kept in a combined point's record (run/combine.py), read back by windows_of."""
    sh = shares_above_min(samples)
    return {"above_2x_min": sh.get(2), "above_4x_min": sh.get(4), "outliers": outliers(samples)["count"]}


def _window_facts(p: Point, x, med, ov: Overlap | None, ranks: list[int] | None) -> WindowFacts:
    if x is None:  # the record's own figures
        t, kept = p.part["tail"], p.part.get("overlap")
        ov = Overlap(float(kept["value"]), float(kept["ci_lo"]), float(kept["ci_hi"])) if kept else None
    else:
        t = tail_of(x)
    return WindowFacts(p, med, t["above_2x_min"], t["above_4x_min"], int(t["outliers"]), ov,
                       tuple(ranks) if ranks else None)  # fmt: skip


SPREAD = 16  # bootstraps in a run before they are spread over the usable cores


def overlaps_ci(inputs: list[tuple | None]) -> list[Overlap | None]:
    """overlap_ci of each (total, pure, compute_us), in their order (None for a None), on the
    usable cores when there are many: threads of this process, as numpy lets go of the
    interpreter as it draws and sorts; each bootstrap has its own seeded generator, so the
    figures are one core's."""
    paired = [i for i in inputs if i is not None]
    workers = min(usable_cores(), 8)
    if len(paired) >= SPREAD and workers > 1:
        with concurrent.futures.ThreadPoolExecutor(max_workers=workers) as pool:
            got = iter(list(pool.map(lambda args: overlap_ci(*args), paired)))
    else:
        got = iter([overlap_ci(*args) for args in paired])
    return [next(got) if i is not None else None for i in inputs]


def windows_of(run: Run, ranks: list[int] | None = None) -> list[WindowFacts]:
    """The WindowFacts of every window- or barrier-timed point of `run`, in its order.  A tail
    and an overlap are read from the point's record where it keeps them (run/combine.py); those
    an older record lacks, and a subset of ranks', are worked out here (overlaps_ci).  The
    samples are read here first, on this thread, which the store's connection belongs to."""
    points = [p for p in run.points if p.window is not None]
    read = [_window_samples(p, ranks) for p in points]
    overlaps = overlaps_ci([pair for _, _, pair in read])
    return [_window_facts(p, x, med, ov, ranks) for p, (x, med, _), ov in zip(points, read, overlaps)]


def collective_models(run: Run) -> list[CollectiveModel]:
    """One model per operation the thesis models and parameter setting (root=0 and rotate,
    blocking and non-blocking are different operations); refused, with the reason, on an
    oversubscribed run, whose times are those of ranks sharing cores."""
    groups: dict[tuple, list[tuple[float, int, float]]] = {}
    settings: dict[tuple, dict] = {}
    modelled = {t for t in {p.test for p in run.points} if "model:collective" in run.info(t).roles}
    for p in run.points:
        if p.test not in modelled:  # asked per test, not per point (issue 52)
            continue
        op = p.test.split(".", 1)[1]
        if op not in MODELS or not p.median:
            continue
        setting = {k: v for k, v in p.params.items() if k not in ("procs", "size")}
        key = (op, tuple(sorted(setting.items())))
        settings[key] = setting
        groups.setdefault(key, []).append((p.size or 0, p.procs, p.median))
    out = []
    for key, data in groups.items():
        if run.context and run.context.oversubscribed:
            out.append(
                CollectiveModel(
                    key[0],
                    settings[key],
                    points=len(data),
                    refused="oversubscribed: these times are of ranks sharing cores, not of the network",
                )
            )
        else:
            out.append(fit_collective(key[0], data, settings[key]))
    return out
