"""Launches as replicates: one point measured in L separate launches, summarised so that its
interval covers what another launch would see.

A launch is the unit of replication (ReproMPI, Hunold & Carpen-Amarie 2016: run-to-run
variation of MPI timings exceeds what the samples of one run show).  Within a launch the
engine's samples are not independent of each other; between launches they are.  So:

- the point estimate is the median of the launch medians (one disturbed launch cannot move
  it, as one 7.9x launch would move a mean);
- its 95 % interval is a two-stage (hierarchical) bootstrap: launches resampled with
  replacement, then each chosen launch's median redrawn from its own sampling distribution
  (the rank of a resampled median is asymptotically normal about n/2 with sd sqrt(n)/2), and
  the median of those taken again;
- the interval a *next* launch's median falls in (95 %, under a log-normal spread of launch
  medians): exp(mean(log m) +/- t(0.975, L-1) s sqrt(1 + 1/L)), never narrower than the
  bootstrap interval.  With one launch there is no such interval: nothing has been seen of
  launch-to-launch variation, and the views say so.
- Three launches give s with 2 degrees of freedom: often far too small by chance (a machine
  state the three launches happened to share).  So s is also moderated towards the run's
  pooled spread s0 (the root mean square of every point's s; empirical Bayes, as limma does
  for gene-wise variances, Smyth 2004): s~^2 = ((L-1) s^2 + PRIOR_DF s0^2) / (L-1 + PRIOR_DF),
  with t on L-1 + PRIOR_DF degrees of freedom; the interval reported is the wider of the
  point's own and the moderated one.  On 16 launches of 20 points, triples predicting the
  other 13 launches: own interval 89 % coverage, wider of the two 95 % (bench/replicates.py).

Multimodality is judged on the pooled samples: a (binned) Gaussian kernel density of log times, peaks
that hold at least 10 % of the samples and lie at least 3 % apart are modes."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from scope.analysis.stats import ci_rel, quantiles, row_medians
from scope.analysis.stats import median as stats_median
from scope.analysis.student import t_quantile

RESAMPLES = 2000
GRID = 512  # bins of the density's histogram
MODE_MIN_SHARE = 0.10
MODE_MIN_GAP = 0.03
PRIOR_DF = 4  # weight of the run's pooled launch spread in each point's, in degrees of freedom


@dataclass(frozen=True)
class Mode:
    at: float  # the mode's location, in the samples' unit
    share: float  # share of the samples in its basin


@dataclass(frozen=True)
class Launch:
    median: float
    ci_lo: float | None
    ci_hi: float | None
    count: int
    relaxed: bool = False  # measured to a target its earlier launches' spread loosened (rep_target)


@dataclass
class Replicated:
    launches: list[Launch]
    median: float
    ci_lo: float | None
    ci_hi: float | None
    next_lo: float | None = None  # where a next launch's median falls (95 %), L >= 2
    next_hi: float | None = None
    pooled_sd: float | None = None  # the run's launch spread (log scale) the interval drew on
    within_rel: float | None = None  # median relative half-width of the launches' own CIs (as asked)
    spread_rel: float | None = None  # (largest - smallest launch median) / median
    modes: list[Mode] = field(default_factory=list)

    @property
    def n(self) -> int:
        return len(self.launches)

    @property
    def spread_exceeds_within(self) -> bool:
        """Launch medians further apart than one launch's interval claims: the within-launch
        interval alone would have been overconfident."""
        return (
            self.n >= 2
            and self.spread_rel is not None
            and self.within_rel is not None
            and self.spread_rel / 2 > self.within_rel
        )


def _resampled_medians(sorted_samples: np.ndarray, draws: int, rng: np.random.Generator) -> np.ndarray:
    """Draws from the bootstrap distribution of one launch's median (order-statistic form)."""
    n = len(sorted_samples)
    if n == 1:
        return np.full(draws, sorted_samples[0])
    ranks = n / 2 + rng.standard_normal(draws) * math.sqrt(n) / 2
    idx = np.clip(np.rint(ranks).astype(int), 0, n - 1)
    return sorted_samples[idx]


def hierarchical_ci(
    launches: list[np.ndarray], rng: np.random.Generator, resamples: int = RESAMPLES
) -> tuple[float, float]:
    """95 % two-stage bootstrap interval of the median of launch medians."""
    L = len(launches)
    pick = rng.integers(0, L, size=(resamples, L))  # stage 1: which launches each resample holds
    meds = np.empty((resamples, L))
    for i, x in enumerate(launches):  # stage 2: each pick of launch i redraws its median
        chosen = pick == i
        meds[chosen] = _resampled_medians(np.sort(x), int(chosen.sum()), rng)
    lo, hi = np.quantile(row_medians(meds), [0.025, 0.975])
    return float(lo), float(hi)


def launch_sd(medians: list[float]) -> float | None:
    """The spread of launch medians on the log scale (sd, L - 1 degrees of freedom)."""
    m = np.log([x for x in medians if x > 0])
    return float(np.std(m, ddof=1)) if len(m) >= 2 else None


def pooled_sd(points: list[list[float]]) -> float | None:
    """A run's launch spread: the root mean square of its points' launch sds."""
    sds = [sd for sd in map(launch_sd, points) if sd is not None]
    return math.sqrt(float(np.mean(np.square(sds)))) if sds else None


def next_launch_interval(medians: list[float], prior_sd: float | None = None) -> tuple[float, float] | None:
    """95 % prediction interval of one more launch's median, from L >= 2 launch medians
    (log-normal spread, Student t with L - 1 degrees of freedom); with the run's pooled spread
    `prior_sd`, the wider of that and the moderated interval (module docstring)."""
    m = np.log([x for x in medians if x > 0])
    L = len(m)
    if L < 2:
        return None
    s2, df = float(np.var(m, ddof=1)), L - 1
    halves = [t_quantile(df, 0.975) * math.sqrt(s2)]
    if prior_sd is not None:
        moderated = (df * s2 + PRIOR_DF * prior_sd**2) / (df + PRIOR_DF)
        halves.append(t_quantile(df + PRIOR_DF, 0.975) * math.sqrt(moderated))
    half = max(halves) * math.sqrt(1 + 1 / L)
    mu = float(np.mean(m))
    return math.exp(mu - half), math.exp(mu + half)


def _prominent_peaks(y: np.ndarray, prominence: float) -> list[int]:
    """Local maxima that rise at least `prominence` above the valley towards each neighbouring
    peak (neighbours that do not are merged into the higher one)."""
    inner = (y[1:-1] > y[:-2]) & (y[1:-1] >= y[2:])
    peaks = [int(i) + 1 for i in np.flatnonzero(inner)]
    merged = True
    while merged and len(peaks) > 1:
        merged = False
        for j in range(len(peaks) - 1):
            a, b = peaks[j], peaks[j + 1]
            valley = float(y[a : b + 1].min())
            if min(y[a], y[b]) - valley < prominence:
                peaks.pop(j + 1 if y[a] >= y[b] else j)
                merged = True
                break
    return peaks


def modes_of(samples: np.ndarray) -> list[Mode]:
    """The modes of a sample (two or more), or [] when it is unimodal or too small to say."""
    x = samples[np.isfinite(samples) & (samples > 0)]
    if len(x) < 50:
        return []
    logx = np.log(x)
    # Trim the far tail so a few huge outliers do not flatten the grid around the body.
    logx = np.sort(logx)
    lo, hi = quantiles(logx, [0.005, 0.995])
    body = logx[(logx >= lo) & (logx <= hi)]
    if len(body) < 50 or hi - lo < MODE_MIN_GAP:
        return []
    # Binned Gaussian kernel density (the kernel applied to a fine histogram): linear in the
    # samples, so 200,000 cost what 2,000 do.  Bandwidth: half of Silverman's rule, which
    # over-smooths mixtures.
    q75, q25 = quantiles(body, [0.75, 0.25])  # body is sorted: a slice of the sorted logx
    spread = min(float(np.std(body)), (q75 - q25) / 1.34) or float(np.std(body))
    bw = 0.5 * 0.9 * spread * len(body) ** -0.2
    counts, edges = np.histogram(body, bins=GRID, range=(lo, hi))
    sigma = max(bw / (edges[1] - edges[0]), 1.0)
    k = np.arange(-int(4 * sigma), int(4 * sigma) + 1)
    dens = np.convolve(counts.astype(float), np.exp(-0.5 * (k / sigma) ** 2), mode="same")
    grid = (edges[:-1] + edges[1:]) / 2
    peaks = _prominent_peaks(dens, 0.05 * dens.max())
    if len(peaks) < 2:
        return []
    # Each peak's basin ends at the lowest point between it and its neighbour.
    cuts = [lo] + [grid[a + int(np.argmin(dens[a : b + 1]))] for a, b in zip(peaks[:-1], peaks[1:])] + [hi + 1]
    out: list[Mode] = []
    for i, p in enumerate(peaks):
        share = float(np.mean((body >= cuts[i]) & (body < cuts[i + 1])))
        at = math.exp(grid[p])
        if share >= MODE_MIN_SHARE and (not out or at / out[-1].at - 1 >= MODE_MIN_GAP):
            out.append(Mode(at, share))
    return out if len(out) >= 2 else []


def combine(launches: list[tuple[Launch, np.ndarray]], seed: int = 0, prior_sd: float | None = None) -> Replicated:
    """One point from its launches: each launch's own summary (from the engine) and samples;
    prior_sd: the run's pooled launch spread (pooled_sd), if known."""
    infos = [info for info, _ in launches]
    medians = [i.median for i in infos]
    pooled = np.concatenate([s for _, s in launches]) if launches else np.array([])
    median = stats_median(medians)
    # a launch's own interval as asked: a relaxed launch's is wide on purpose (it stopped once
    # small beside the spread), so it does not speak for what one launch claims
    asked = [i for i in infos if not i.relaxed] or infos
    within = [w for w in (ci_rel(i.median, i.ci_lo, i.ci_hi) for i in asked) if w is not None]
    r = Replicated(infos, median, None, None, within_rel=stats_median(within) if within else None)
    r.modes = modes_of(pooled) if len(pooled) else []
    if len(infos) == 1:
        r.ci_lo, r.ci_hi = infos[0].ci_lo, infos[0].ci_hi
        return r
    r.spread_rel = (max(medians) - min(medians)) / median if median > 0 else None
    samples = [s for _, s in launches]
    if all(len(s) for s in samples):
        # seeded here, past the one-launch return: numpy.random is a further import that a
        # one-launch run, with no interval to resample, never needs (issue 52)
        r.ci_lo, r.ci_hi = hierarchical_ci(samples, np.random.default_rng(seed))
    nxt = next_launch_interval(medians, prior_sd)
    r.pooled_sd = prior_sd
    if nxt:
        lo, hi = nxt
        r.next_lo = min(lo, r.ci_lo) if r.ci_lo is not None else lo
        r.next_hi = max(hi, r.ci_hi) if r.ci_hi is not None else hi
    return r
