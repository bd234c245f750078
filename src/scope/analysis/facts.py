"""Everything SCOPE derives from a stored run, computed once: per series the Hockney and
piecewise fits; per run the LogGP parameters, the collective models, the layer table, the
clock summary and the warnings.  Views render these facts; none of them fits anything.

Which series feed which model is the engine's word (the roles of its descriptors): a test
with the role `model:hockney` gives the run's Hockney model, `model:loggp` its LogGP fit,
`model:collective` a collective model of its operation."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

from scope.analysis.apps import (
    GetShare,
    Overlap,
    Switch,
    Verification,
    ft_overlaps,
    ft_switches,
    lu_get_shares,
    verifications,
)
from scope.analysis.breakpoints import Piecewise, fit_piecewise
from scope.analysis.clock import ClockSummary, clock_summary
from scope.analysis.cluster import KindFigure, per_kind
from scope.analysis.collectives import CollectiveModel, WindowFacts, collective_models, windows_of
from scope.analysis.datasheet import Figure, datasheet
from scope.analysis.frozen import inputs_of, prediction_of
from scope.analysis.hockney import HockneyFit, fit_hockney, unphysical
from scope.analysis.inputs import gather_inputs
from scope.analysis.kernels import (
    PHASED_LEVELS,
    KernelPoint,
    Scaling,
    attach_loop_figures,
    kernel_points,
    rate_of,
    scaling,
)
from scope.analysis.layers import Layer, layers_of
from scope.analysis.links import beyond_link, link_limit_MBps
from scope.analysis.loggp import LogGP, fit_loggp
from scope.analysis.node_screen import NodeScreen, Place, flagged_places, node_screens
from scope.analysis.noise import CanaryReading, Drift, canary_readings, next_interval, steal_pct
from scope.analysis.predict import OWN_RATE, Inputs, Prediction, curve, predict
from scope.analysis.rma import PINGPONG, Overhead, Progress, library_overhead, progress_ratios
from scope.analysis.screen import Screen, screens
from scope.analysis.timeline import TimelineFacts, timeline_facts
from scope.analysis.transport import TransportFacts, transport_facts
from scope.analysis.warnings import ScopeWarning, model_warnings, run_warnings
from scope.catalog.names import DGEMM, NODE_STREAM
from scope.model import Point, Run, Series


@dataclass(frozen=True)
class Rate:
    """A series' peak rate in the unit that fits it: MB/s where the test moves bytes, GFLOP/s,
    Mop/s, Mkeys/s or Mupdates/s where it counts work (analysis/kernels.rate_of)."""

    value: float
    unit: str
    size: int | None  # the size it peaks at (MB/s of a sized test), else None


@dataclass
class SeriesFacts:
    series: Series
    hockney: HockneyFit | None
    piecewise: Piecewise | None
    link_MBps: float | None = None  # the link its traffic crosses carries at most this (per crossing)
    # per point (id of the Point): its next-launch interval, widened by the drift between runs
    next_launch: dict[int, tuple[float, float]] = field(default_factory=dict)

    @property
    def rinf_beyond_link(self) -> bool:
        """The Hockney r_inf is more than the link can carry: not a rate to show."""
        k = int(self.series.info.role("link") or 0)
        return bool(self.hockney) and beyond_link(self.hockney.rinf_MBps, k, self.link_MBps)

    @property
    def smallest(self) -> Point:
        """The point at the smallest size: the series' latency."""
        return min(self.series.points, key=lambda p: p.size or 0)

    @property
    def peak(self) -> Point:
        """The point of highest bandwidth."""
        return max(self.series.points, key=lambda p: p.bw_median or 0)

    @property
    def peak_rate(self) -> Rate | None:
        """None where no rate is defined (a barrier moves no bytes and counts no work)."""
        p = self.peak
        work = rate_of(p)
        if work:
            return Rate(work[0], work[1], None)
        return Rate(p.bw_median, "MB/s", p.size) if p.bw_median else None

    @functools.cached_property
    def residuals(self) -> dict[int, float]:
        return self.hockney.by_size() if self.hockney else {}


@dataclass
class RunFacts:
    run: Run
    series: list[SeriesFacts]
    hockney_models: list[SeriesFacts] = field(default_factory=list)
    loggp: list[LogGP] = field(default_factory=list)
    collective_models: list[CollectiveModel] = field(default_factory=list)
    layers: list[Layer] = field(default_factory=list)
    clock: ClockSummary | None = None
    warnings: list[ScopeWarning] = field(default_factory=list)
    overhead: list[Overhead] = field(default_factory=list)  # one-sided library overhead per size
    progress: list[Progress] = field(default_factory=list)  # rma.get with a busy target vs idle
    kernels: list[KernelPoint] = field(default_factory=list)
    scaling: list[Scaling] = field(default_factory=list)
    predicted: list[Prediction] = field(default_factory=list)  # one per kernel point, same order
    curves: list[list[Prediction]] = field(default_factory=list)  # per scaling group, 1 .. 10^4 ranks
    overlaps: list[Overlap] = field(default_factory=list)  # app.ft: the non-blocking transpose's
    get_shares: list[GetShare] = field(default_factory=list)  # app.lu: the time in one-sided gets
    switches: list[Switch] = field(default_factory=list)  # app.ft: each transpose against alltoall
    verified: list[Verification] = field(default_factory=list)  # NPB's checks, value beside reference
    drift: Drift | None = None  # between runs of this configuration (analysis/noise.py), stored runs only
    inputs: Inputs | None = None  # what the kernel predictions drew on
    frozen: dict | None = None  # the stored prediction they come from: {id, made_utc}; None: made now
    transport: TransportFacts | None = None  # what the MPI chose (analysis/transport.py)
    canary: list[CanaryReading] = field(default_factory=list)  # the machine during the run, per probe
    steal_pct: float | None = None  # the most CPU time a hypervisor took in any launch, %
    datasheet: list[Figure] = field(default_factory=list)  # the run's headline figure per level
    per_kind: dict[int, list[KindFigure]] = field(default_factory=dict)  # node-level point (id) -> per kind
    screens: list[Screen] = field(default_factory=list)  # pairs-timed points: matrices and flags
    node_screens: list[NodeScreen] = field(default_factory=list)  # node tests on every host: slow hosts
    flagged: list[Place] = field(default_factory=list)  # the slow parts, all screens together
    timeline: TimelineFacts | None = None  # a program's own events (an events import)
    _windows: dict = field(default_factory=dict, repr=False)

    def windows(self, ranks: list[int] | None = None) -> list[WindowFacts]:
        """The window- and barrier-timed points' distribution figures (analysis/collectives.py),
        over all ranks or the subset `ranks`; derived on first asking (a bootstrap per
        nonblocking point: not for a run nobody shows), then kept.  ValueError when `ranks`
        names a rank the run's points do not have."""
        key = tuple(ranks) if ranks else None
        if key not in self._windows:
            self._windows[key] = windows_of(self.run, ranks)
        return self._windows[key]


def series_facts(s: Series) -> SeriesFacts:
    sizes, medians = s.sizes, s.medians
    return SeriesFacts(s, fit_hockney(sizes, medians), fit_piecewise(sizes, medians))


def unphysical_fits(series: list[SeriesFacts]) -> list[ScopeWarning]:
    """One warning naming the fits whose parameters no transfer can have."""
    bad = []
    for f in series:
        fits = [("fit", f.hockney)] if f.hockney else []
        if f.piecewise and len(f.piecewise.segments) > 1:
            fits += [(f"segment {sg.first_size} B .. {sg.last_size} B", sg) for sg in f.piecewise.segments]
        for what, fit in fits:
            why = unphysical(fit.t0_us, fit.rinf_MBps)
            if why:
                bad.append(f"{f.series.test} {what}: {why} (t0 = {fit.t0_us:.3g} us)")
    if not bad:
        return []
    return [
        ScopeWarning(
            "unphysical",
            f"{len(bad)} fitted models have parameters no transfer can have, e.g. {bad[0]}",
            "the model does not describe those sizes: read the measured points, not the fit",
        )
    ]


def beyond_link_fits(series: list[SeriesFacts]) -> list[ScopeWarning]:
    """One warning naming the fits whose r_inf the link cannot carry."""
    bad = [f for f in series if f.rinf_beyond_link]
    if not bad:
        return []
    f = bad[0]
    return [
        ScopeWarning(
            "beyond_link",
            f"{len(bad)} Hockney fits give an r_inf the link cannot carry, e.g. {f.series.test}: "
            f"{f.hockney.rinf_MBps:.4g} MB/s over a link of {f.link_MBps:.4g} MB/s; not shown as a rate",
            "the curve still bends at the largest size measured: measure larger sizes, or read the measured peak",
        )
    ]


def cores_of(run: Run) -> int | None:
    """Cores of the first rank's host, from the context record."""
    place = (run.context_record or {}).get("placement") or [{}]
    return place[0].get("cores") or None


def l2_of(run: Run) -> float | None:
    """A core's L2 on the first node, bytes, from the context record."""
    nodes = (run.context_record or {}).get("nodes") or [{}]
    return (nodes[0].get("cache_bytes") or {}).get("l2") or None


def kernel_facts(facts: RunFacts, lower: list[Run], frozen: dict | None = None) -> None:
    """The kernel level: phases, operations in context beside their loop figures (from this
    run or `lower`, the runs of the same MPI and hosts that hold the lower levels), scaling,
    and each point's prediction from the lower levels: as frozen when the run was stored
    (`frozen`, Store.prediction_for), else from `lower` now."""
    run = facts.run
    facts.kernels = kernel_points(run)
    if not facts.kernels:
        return
    runs = [run, *lower]
    attach_loop_figures(facts.kernels, runs)
    facts.scaling = scaling(facts.kernels, runs)
    if frozen:
        inp = inputs_of(frozen["inputs"])
        facts.frozen = {"id": frozen["id"], "made_utc": frozen["made_utc"]}
    else:
        inp = gather_inputs(runs, cores_of(run), l2_of(run))
        inp.one_host = bool(run.context) and len(run.context.hosts) == 1
        inp.bcast = next((m for m in facts.collective_models if m.op == "bcast" and not m.setting.get("nb")), None)
    facts.inputs = inp
    stored = [prediction_of(d) for d in (frozen or {}).get("predicted") or []]
    if len(stored) == len(facts.kernels):  # as it was said, even if the model has changed since
        facts.predicted = stored
    else:
        facts.predicted = [predict(k.test, k.setting, k.procs, inp) for k in facts.kernels]
    facts.curves = [curve(sc.test, sc.setting, inp) for sc in facts.scaling]
    facts.overlaps = ft_overlaps(facts.kernels)
    facts.get_shares = lu_get_shares(facts.kernels)
    facts.switches = ft_switches(facts.kernels)
    facts.verified = verifications(facts.kernels)


def derive(
    run: Run,
    reference: Run | None = None,
    lower: list[Run] | None = None,
    frozen: dict | None = None,
    drift: Drift | None = None,
) -> RunFacts:
    """`reference`: a run of the same MPI and hosts whose ping-pong the one-sided library
    overhead may use when this run has none (Store.reference_for finds it); `lower`: runs
    the kernel level's loop figures and predictions may draw on; `drift`: the drift between
    stored runs of this configuration that the next-launch intervals take in."""
    series = [series_facts(s) for s in run.series()]
    limit = link_limit_MBps(run)
    for f in series:
        if f.series.info.role("link"):
            f.link_MBps = limit
    # per series, not per point: a million imported points asked run.info three million times
    loggp = fit_loggp([p for f in series if "model:loggp" in f.series.info.roles for p in f.series.points])
    models = collective_models(run)
    facts = RunFacts(
        run=run,
        series=series,
        hockney_models=[f for f in series if "model:hockney" in f.series.info.roles and f.hockney],
        loggp=loggp,
        collective_models=models,
        layers=layers_of([run]),
        clock=clock_summary(run.events),
        warnings=run_warnings(run) + unphysical_fits(series) + beyond_link_fits(series) + model_warnings(loggp, models),
        overhead=library_overhead(run, reference),
        progress=progress_ratios(run),
        transport=transport_facts(run),
        canary=canary_readings(run),
        screens=screens(run) if run.pairs else [],
        node_screens=node_screens(run, lambda t: run.info(t).level),
        steal_pct=steal_pct(run),
        datasheet=datasheet(run),
        per_kind={
            id(p): k
            for f in series
            if f.series.info.level == "node"
            for p in f.series.points
            if (k := per_kind(p, run.context))
        },
        drift=drift,
        timeline=timeline_facts(run.timeline),
    )
    facts.flagged = flagged_places(facts.screens, facts.node_screens)
    kernel_facts(facts, lower or [], frozen)
    for f in series:  # each point's next-launch interval, widened by the drift between runs
        if run.launches and run.launches > 1:  # one launch (or an import) has none to give
            f.next_launch = {id(p): nxt for p in f.series.points if (nxt := next_interval(p, drift))}
    return facts


def lower_tests(run: Run) -> list[str]:
    """The tests whose runs (of the same MPI and hosts) hold what a kernel run's figures and
    predictions draw on and the run lacks, in the order they are asked for (fetch/facts.py
    finds their runs; analysis/inputs.py takes what the rule says of them)."""
    tests = {p.test for p in run.points}
    if not any(run.info(t).level in PHASED_LEVELS for t in tests):
        return []
    wanted = {PINGPONG, DGEMM, NODE_STREAM}
    wanted |= {o.get("test") for p in run.points for o in p.record.get("ops") or [] if o.get("test")}
    wanted -= tests
    # the kernels predicted from their own rate on one rank, when this run has no such point
    wanted |= {t for t in OWN_RATE if not any(p.test == t and p.procs == 1 for p in run.points)}
    return sorted(wanted)
