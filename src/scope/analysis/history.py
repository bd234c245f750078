"""A figure's history across runs, and the changes in it that are real (issues 54 and 68).

A series is one test, parameter setting, size and rank count measured by several runs of one
kind (measured here, imported from a peer, simulated on one platform), in the order they
started.  Each run brings its launches, its replicates, and the series is judged on them, not
on one number per run.  On the log scale (a change is a ratio), launch j of run i is

    y_ij = level(the segment run i is in) + b_i + e_ij,    b_i ~ (0, sd_b),   e_ij ~ (0, sd_w):

runs differ by their own offset b_i (the day, the nodes) and launches by e_ij.  A run's centre
is the median of its launches (one wild launch moves it little); the launches' spread sd_w is
the median over runs of their launches' SD (one wild run moves it little).  The noise of a
run's centre is never taken below what its launches show (sd_w^2 / m): a history of 3 runs
before and 3 after, with 3 launches each, is judged with the launches' degrees of freedom
where the runs agree better than their launches, and with the runs' where they do not.

- **step**: the level changed at a run and stayed.  Optimal partitioning (an exact search of
  every segmentation, each segment at least MIN_SEGMENT runs, penalised per change) proposes the
  change points; each is tested by the t statistic of the two segments it separates, an
  analytic p-value multiplied by the number of places the change could have taken in that span
  (the search chose the best).  A step must also leave its interval clear of nil and be larger
  than SPREAD_FACTOR times the launches' spread: what a user sees between launches of every run
  is no change.
- **temporary**: a step that came back (its next change returns to where it started, within
  what the runs can tell): found with its start and its end, where binary segmentation's first
  split could not see it.
- **outlier**: one run away from both sides (a robust z beyond OUTLIER_Z), named and left out.
- **drift**: a straight line explains the series as well as the best step, its slope is
  significant and the drift is larger than twice the launches' spread.
- **alarm**: the newest run is slower than the runs before it allow (`newest`): its centre
  against the band the last segment predicts for a new run (the segment's mean, the runs' own
  offset and the newest run's launches), one-sided at ALARM_P; the first night of a
  regression.  The next run that agrees makes it a step (two runs after it).  **faster**: the
  same the other way (news, never an alarm).

**One decision per series.**  Each series is one family of hypotheses (its change points);
the families are selected by Benjamini-Hochberg at FDR over every series tested (a series' p
is Simes' combination of its change points'), and within the R selected of m the change points
are kept at FDR * R / m (Benjamini & Bogomolov 2014): the expected share of false discoveries
among the selected series is at most FDR, and a clear step in one series is not drowned by
many quiet ones (its p-value is analytic, not a permutation count: 8 values have only 70
distinct balanced splits).

References: Killick, Fearnhead & Eckley (2012) and Jackson et al. (2005) for optimal
partitioning; Daly et al. (ICPE 2020) and Fleming et al. (ICPE 2023, Hunter, now Apache
Otava) for change points in performance series; Benjamini & Hochberg (1995), Simes (1986) and
Benjamini & Bogomolov (2014) for the error rate.  Pure: values in, changes out."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from scope.analysis.changepoints import (
    MIN_SEGMENT,
    Found,
    Runs,
    drift,
    drift_explains,
    newest_band,
    outliers,
    runs_of,
    search,
)
from scope.analysis.compare import launch_medians
from scope.analysis.student import t_cdf, t_quantile
from scope.catalog.testinfo import written
from scope.sizes import format_size

FDR = 0.05
MIN_RUNS = 3  # a series of fewer runs says nothing: two before the newest, to judge the newest
ALARM_P = 0.02  # the newest run's one-sided test: a false alarm on at most 1 night in 50
SPREAD_FACTOR = 1.0  # a change must be larger than the launches' own spread (the estimate of it)


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
    kind: str = "measured"  # measured | imported (osu, imb, csv) | simulated (on one platform)

    @property
    def name(self) -> str:
        where = ", ".join(f"{k}={v}" for k, v in sorted(self.params.items()))
        size = f" {format_size(self.size)}" if self.size is not None else ""
        mark = "" if self.kind == "measured" else f" [{self.kind}]"
        return f"{self.test}{size}" + (f" ({where})" if where else "") + mark


@dataclass
class Change:
    series: Series
    index: int  # the first run after the change, as an index into series.obs
    kind: str  # step | temporary | outlier | drift | alarm (the newest run slower) | faster (it faster)
    step: float  # relative: after / before - 1
    step_lo: float
    step_hi: float
    p_value: float
    q_value: float = float("nan")  # its series' false-discovery-adjusted p (one decision per series)
    changed: dict = field(default_factory=dict)  # provenance name -> (before, after)
    machine: str | None = None  # the canaries' verdict where they moved between the two runs
    end: int | None = None  # a temporary change: the first run back at the level before it

    @property
    def run(self) -> int:
        return self.series.obs[self.index].run

    @property
    def end_run(self) -> int | None:
        return self.series.obs[self.end].run if self.end is not None else None

    def as_dict(self) -> dict:
        s = self.series
        return {
            "test": s.test,
            "params": s.params,
            "size": s.size,
            "unit": s.unit,
            "series_kind": s.kind,
            "run": self.run,
            "started_utc": s.obs[self.index].started,
            "kind": self.kind,
            "step": self.step,
            "step_ci": [self.step_lo, self.step_hi],
            "p_value": self.p_value,
            "q_value": self.q_value,
            "end_run": self.end_run,
            "changed": {k: list(v) for k, v in self.changed.items()},
            "machine": self.machine,
        }


def _simes(p: list[float]) -> float:
    if not p:
        return 1.0
    s = sorted(p)
    return min(1.0, min(len(s) * v / (i + 1) for i, v in enumerate(s)))


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


@dataclass
class _Family:
    """One series' candidate changes before the decision across series."""

    series: Series
    runs: Runs
    keep: list[int]  # indices into series.obs of the runs the changes were searched in
    found: list[Found]
    p: float = 1.0  # the series' p: Simes over its changes'


def _family(s: Series, named: list[Change]) -> _Family | None:
    """A series prepared: its outliers, its newest run's alarm and its drift named (into
    `named`), a newest run that is off left out of the search (a wild newest run hides no
    step), and its changes searched."""
    r = runs_of(s.obs)
    if r is None or len(r.y) < 2 * MIN_SEGMENT:
        return None
    odd = outliers(r.y, r.spread)
    for i in odd:
        rel = float(np.exp(r.y[i] - np.median(np.delete(r.y, odd)))) - 1
        named.append(Change(s, i, "outlier", rel, rel, rel, float("nan")))
    keep = [i for i in range(len(r.y)) if i not in odd]
    rk = r.part(keep)
    if len(rk.y) < 2 * MIN_SEGMENT:
        return None
    slow = drift(rk.y, r.spread)
    if slow is not None:  # named once; the newest run and the changes judged on top of it
        total, half, p, fitted = slow
        named.append(Change(s, keep[0], "drift", math.expm1(total), math.expm1(total - half),
                            math.expm1(total + half), p))  # fmt: skip
        rk = Runs(rk.y - fitted, rk.w, rk.df_w, rk.spread)
    band = newest_band(rk, _off)
    if band is not None:
        news = _alarm(s, band, r.spread)
        if news is not None:
            named.append(news)
        if _off(band, r.spread):
            keep, rk = keep[:-1], rk.part(list(range(len(rk.y) - 1)))  # judged alone: it hides no step
    if len(rk.y) < 2 * MIN_SEGMENT:
        return None
    found = search(rk)
    return _Family(s, rk, keep, found, _simes([f.p for f in found]))


def detect(series: list[Series]) -> list[Change]:
    """Every real change in every series: one decision per series (the module's docstring)."""
    named: list[Change] = []
    families = [f for f in (_family(s, named) for s in series) if f is not None]
    m = len(families)
    q = _bh([f.p for f in families])
    level = FDR * sum(qv <= FDR for qv in q) / m if m else 0.0
    for fam, qv in zip(families, q):
        if qv > FDR:
            continue
        for f in fam.found:
            if f.p > level or f.lo <= 0 <= f.hi or abs(f.d) <= SPREAD_FACTOR * fam.runs.spread:
                continue
            named.append(_change(fam, f, qv))
    named.sort(key=lambda c: (c.series.obs[c.index].started, c.series.name), reverse=True)
    return named


def _change(fam: _Family, f: Found, qv: float) -> Change:
    s, keep = fam.series, fam.keep
    rel = (math.expm1(f.d), math.expm1(f.lo), math.expm1(f.hi))
    if f.temporary:
        return Change(s, keep[f.i], "temporary", *rel, f.p, qv, end=keep[f.j])
    y = fam.runs.y
    edges = sorted({x for g in fam.found for x in (g.i, g.j)} | {0, len(y)})
    a = max(x for x in edges if x < f.i)
    b = min(x for x in edges if x > f.i)
    kind = "drift" if drift_explains(y[a:b], f.i - a) else "step"  # the runs between its neighbours
    return Change(s, keep[f.i], kind, *rel, f.p, qv)


def newest(s: Series) -> Change | None:
    """The newest run, judged at once: slower than the runs before it allow (one-sided at
    ALARM_P, by more than the launches' spread, on top of any drift), as an `alarm`, or None."""
    named: list[Change] = []
    _family(s, named)
    return next((c for c in named if c.kind == "alarm"), None)


def _off(band: tuple[float, float, float], spread: float) -> bool:
    """A run off what the runs before it predict, either way (the test that keeps it out of the
    search, and that makes it last night's pending change)."""
    d, se, df = band
    return 2 * t_cdf(df, -abs(d) / se) < ALARM_P and abs(d) > SPREAD_FACTOR * spread


def _alarm(s: Series, band: tuple[float, float, float], spread: float) -> Change | None:
    """The newest run against its band: an `alarm` when slower (one-sided at ALARM_P), a
    `faster` change when faster (at ALARM_P / 2), by more than the launches' spread."""
    d, se, df = band
    p = t_cdf(df, -abs(d) / se)  # one-sided, on the side it went
    if p >= (ALARM_P if d > 0 else ALARM_P / 2) or abs(d) <= SPREAD_FACTOR * spread:
        return None  # faster news needs twice the evidence: it is no alarm, and quiet series stay quiet
    half = t_quantile(df, 0.975) * se
    kind = "alarm" if d > 0 else "faster"  # every series is of times: up is slower
    return Change(s, len(s.obs) - 1, kind, math.expm1(d), math.expm1(d - half), math.expm1(d + half), p)


def observed(run, tests=None, sizes=None):
    """Each of a run's points as the series it joins: (key, unit, Obs), the key its test,
    parameters (as written), size, the run's rank count and kind (measured, imported from OSU,
    IMB or a CSV, simulated on one platform: never mixed).  `tests`: a predicate on test
    names; `sizes`: the sizes to keep (None: all).  scope history and the hub's series both."""
    kind = run.kind  # model/run.py's kind_of
    for p in run.points:
        if not p.median or p.median <= 0 or (tests and not tests(p.test)):
            continue
        if sizes is not None and p.size not in sizes:
            continue
        params = tuple((k, written(v)) for k, v in sorted(p.params.items()))
        key = (p.test, params, p.size, run.ranks, kind)
        yield key, p.unit, Obs(run.id, run.started_utc, p.median, p.ci_lo, p.ci_hi, launch_medians(p))


def series_of(runs: list, tests=None, sizes=None, min_runs: int = 4) -> list[Series]:
    """The series several runs share (observed's keys), runs in the order they started."""
    by: dict[tuple, Series] = {}
    for run in sorted(runs, key=lambda r: (r.started_utc, r.id)):
        for key, unit, obs in observed(run, tests, sizes):
            s = by.get(key)
            if s is None:
                s = by[key] = Series(key[0], dict(key[1]), key[2], unit, [], key[4])
            s.obs.append(obs)
    return [s for s in by.values() if len(s.obs) >= min_runs]


def check(changes: list[Change], max_slowdown: float) -> list[Change]:
    """What fails an operator's alarm, each on its own: a series' latest step when it leaves
    the series slower than before by more than max_slowdown; its newest run's alarm past it
    (the newest run against the level it should hold, which may already sit past a step);
    and a drift past it over the series."""
    latest: dict[int, Change] = {}
    out = []
    for c in changes:
        if c.kind in ("drift", "alarm") and c.step > max_slowdown:
            out.append(c)
        if c.kind == "step" and (id(c.series) not in latest or c.index > latest[id(c.series)].index):
            latest[id(c.series)] = c
    out += [c for c in latest.values() if c.step > max_slowdown]
    return out


def raised_by(series: list[Series], run: int, least: float) -> list[Change]:
    """What run `run`, just pushed, raises across the series it measured (issue 71's alerts):
    its own alarm (slower than the runs before allow) and a step it confirms (one at the run
    before it, which it agrees with), each slower by more than `least`.  The alarms are judged
    together: Benjamini-Hochberg over the series judged (a series without an alarm counted at
    p = 1), FDR 5 %, so a push of 200 series does not raise 4 false alarms a night at 2 % each."""
    changes = detect(series)
    alarms = [c for c in changes if c.kind == "alarm" and c.run == run]
    q = _bh([c.p_value for c in alarms] + [1.0] * (len(series) - len(alarms)))
    out = [c for c, qv in zip(alarms, q) if qv <= FDR and c.step > least]
    for c in changes:
        if c.kind == "step" and c.step > least and c.index >= 1 and c.index == len(c.series.obs) - 2:
            if c.series.obs[-1].run == run:
                out.append(c)
    return out
