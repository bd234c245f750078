"""Typed warnings with a hint, gathered from a run's records: what a reader must know before
trusting the numbers, and what to do about it."""

from __future__ import annotations

import math
from dataclasses import dataclass

from scope.analysis.collectives import CollectiveModel
from scope.analysis.loggp import LogGP
from scope.model import Point, Run
from scope.sizes import format_size


@dataclass(frozen=True)
class ScopeWarning:
    kind: str
    message: str
    hint: str

    def line(self) -> str:
        return f"warning [{self.kind}]: {self.message} (hint: {self.hint})"


def run_warnings(run: Run) -> list[ScopeWarning]:
    out: list[ScopeWarning] = []
    seen = set()
    for e in run.events:
        if e.type == "warning" and e.kind not in seen:
            seen.add(e.kind)
            out.append(ScopeWarning(e.kind or "", e.message or "", e.hint or ""))
    if run.imported:
        return out  # one average per size: none of the engine's evidence to judge
    settings = run.context.settings if run.context else {}
    precision = settings.get("precision", 0.01)
    budget = settings.get("budget_s", 1.0)
    # A pairs-timed point's samples are its pairs, each with its own count: no target or
    # warm-up of the point's own to miss (analysis/screen.py judges its pairs).
    points = [p for p in run.points if getattr(run.tests.get(p.test), "timing", None) != "pairs"]
    # A combined point's interval covers its launches: only one launch's own can miss the target.
    imprecise = [
        p
        for p in points
        if p.stop in ("budget", "max_count")
        and not (p.ci_rel is not None and p.ci_rel <= precision)
        and p.launches == 1
    ]
    if imprecise:
        # an interval too few samples cannot give is "no interval", never an infinite one
        finite = [p.ci_rel for p in imprecise if p.ci_rel is not None and math.isfinite(p.ci_rel)]
        none = len(imprecise) - len(finite)
        worst = [f"worst ±{max(finite) * 100:.1f} %"] if finite else []
        worst += [f"{none} with no interval: too few samples"] if none else []
        out.append(
            ScopeWarning(
                "imprecise",
                f"{len(imprecise)} of {len(points)} points stopped before their median's 95 % CI reached "
                f"±{precision * 100:g} % ({'; '.join(worst)})",
                f"consider --budget {max(2 * budget, budget + 1):g} or a quieter machine",
            )
        )
    cold = [p for p in points if p.warmup_converged is False]
    if cold:
        out.append(
            ScopeWarning(
                "warmup",
                f"{len(cold)} points ended warm-up at its cap without a stable time",
                "consider --warmup-max with a larger count, or look for a drifting system",
            )
        )
    late = [p for p in points if p.window and p.window.repetitions and p.window.invalid > 0.2 * p.window.repetitions]
    if late:
        worst = max(p.window.invalid / p.window.repetitions for p in late)
        out.append(
            ScopeWarning(
                "invalid",
                f"{len(late)} window-timed points had more than 20 % of their repetitions start late "
                f"(worst {worst * 100:.0f} %): their samples are the repetitions that kept the schedule",
                "a busy or oversubscribed node, or a clock error beyond --sync-bound; run on idle cores",
            )
        )
    batched = [p for p in points if (p.batch or 1) > 1]
    if batched:
        out.append(
            ScopeWarning(
                "batched",
                f"{len(batched)} points were timed in batches (operation shorter than "
                "50 timer reads), so their samples are batch means",
                "their distribution is narrower than a single operation's",
            )
        )
    return out + replication_warnings(run)


def _where(p: Point) -> str:
    return f"{p.test} {format_size(p.size)}" if p.size is not None else p.test


def replication_warnings(run: Run) -> list[ScopeWarning]:
    """What launches as replicates showed: launches that disagree beyond what one launch
    claims, samples with more than one mode, a point that gave something up to its budget,
    and a native run of one launch whose intervals say nothing of the next launch."""
    out: list[ScopeWarning] = []
    points = run.points
    apart = [p for p in points if p.replication and p.replication.spread_exceeds_within]
    if apart:
        w = max(apart, key=lambda p: p.replication.spread_rel or 0)
        meds = " / ".join(f"{m:.3g}" for m in w.replication.medians)
        out.append(
            ScopeWarning(
                "launch_spread",
                f"{len(apart)} of {len(points)} points: launch medians differ by more than one launch's own "
                f"interval, e.g. {_where(w)}: {meds} {w.unit} (spread {w.replication.spread_rel * 100:.0f} % "
                f"against ±{(w.replication.within_rel or 0) * 100:.1f} % within a launch)",
                "the intervals shown cover the launches; one launch's own interval would have been too narrow",
            )
        )
    multi = [p for p in points if len(p.modes) >= 2]
    if multi:
        w = multi[0]
        modes = ", ".join(f"{m.at:.3g} {w.unit} ({m.share * 100:.0f} %)" for m in w.modes)
        out.append(
            ScopeWarning(
                "multimodal",
                f"{len(multi)} points have samples in two or more modes, e.g. {_where(w)}: {modes}",
                "a median of a mixture moves with the mix: compare the modes, and look for what switches "
                "(placement, frequency, a protocol path)",
            )
        )
    late = [p for p in points if "window" in p.gave_up]
    if late:
        w = late[0]
        out.append(
            ScopeWarning(
                "window",
                f"{len(late)} window-timed points stopped with repetitions still starting late, e.g. {_where(w)}: "
                f"{w.window.invalid if w.window else '?'} of {w.window.repetitions if w.window else '?'} late "
                f"with a window of {w.window.window_us if w.window else '?'} us"
                + (" and no sample kept" if not w.count else ""),
                "the global clock or the node cannot keep agreed start times: --timing barrier, idle cores, "
                "or a smaller --sync-bound",
            )
        )
    faulted = [p for p in points if p.page_faults]
    if faulted:
        w = max(faulted, key=lambda p: p.page_faults)
        out.append(
            ScopeWarning(
                "page_faults",
                f"{len(faulted)} points took page faults inside their timed loops, e.g. {_where(w)}: "
                f"{w.page_faults} faults (the most of any rank), microseconds each on a VM",
                "those samples hold the kernel's time: a median shrugs off a few, a mean (--loop osu) does not; "
                "look for memory the test's iteration allocates or first touches (an MPI's pools grow on first use)",
            )
        )
    # (a warm-up cut short is the "warmup" warning's business; window timing's is above)
    gave = [p for p in points if {"min_count", "min_time"} & set(p.gave_up)]
    if gave:
        what = sorted({g for p in gave for g in p.gave_up if g in ("min_count", "min_time")})
        out.append(
            ScopeWarning(
                "budget",
                f"{len(gave)} points gave up {', '.join(what)} to stay within --budget, e.g. {_where(gave[0])}: "
                "their intervals are wider than asked",
                "a larger --budget, or smaller operations (a smaller window)",
            )
        )
    if not run.imported and points and run.launches == 1:
        out.append(
            ScopeWarning(
                "one_launch",
                "one launch: each interval covers this launch's samples only, not what another launch would see",
                "--launches 3 (the baseline's default) measures launch-to-launch variation",
            )
        )
    return out


RESIDUAL_WARN = 0.25  # a model off by more than this somewhere does not explain the curve


def model_warnings(loggp: list[LogGP], models: list[CollectiveModel]) -> list[ScopeWarning]:
    """Models shown with a large residual or a negative parameter are shown with a warning."""
    out = []
    for g in loggp:
        if g.gap_residual_max > RESIDUAL_WARN:
            out.append(
                ScopeWarning(
                    "model",
                    f"LogGP (n = {g.n}): g + (s-1)G misses by up to {g.gap_residual_max * 100:.0f} %, "
                    "so one G does not describe these sizes (a protocol switch inside them?)",
                    "fit each side of the switch: run p2p.loggp over the sizes on one side of it",
                )
            )
    for m in models:
        if m.refused:
            continue
        negative = [k for k, v in m.params.items() if v < 0]
        if m.max_abs_residual > RESIDUAL_WARN or negative:
            why = f"negative {', '.join(negative)}" if negative else ""
            why += ("; " if why else "") + f"max |residual| {m.max_abs_residual * 100:.0f} %"
            out.append(
                ScopeWarning(
                    "model",
                    f"SCOPE {m.op} model ({', '.join(f'{k}={v}' for k, v in m.setting.items()) or 'default'}): "
                    f"{why}: it does not explain these points",
                    "more process counts and sizes, and no oversubscription, give the fit something to stand on",
                )
            )
    return out
