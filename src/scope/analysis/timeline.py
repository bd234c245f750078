"""A program's own events on the global clock (issue 57): per rank how many, over what span,
with what bound; and, where every rank read one counter, each event's true error: rank 0's
clock read at the event's counter value is its true global time (as the engine's clock record
computes its truth, engine/engine_clock.c)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from scope.model import RankEvents


@dataclass(frozen=True)
class RankTimeline:
    rank: int
    host: str
    clock_of: int  # the rank whose counter and map this rank's clock is
    depth: int  # edges from rank 0 along the synchronisation tree
    events: int
    max_bound_ns: float | None
    errors_ns: np.ndarray | None  # each event's true error, where the truth is known
    within: int | None  # events whose true error is within their bound
    max_error_ns: float | None


@dataclass(frozen=True)
class TimelineFacts:
    ranks: list[RankTimeline]
    names: list[str]  # every rank's names, first stamped first
    counts: dict[str, int]  # events of each name, over the ranks
    t0_ns: float  # the earliest event's global time: the timeline's zero
    span_ns: float  # from the earliest event to the latest
    events: int
    max_bound_ns: float
    truth_known: bool
    within: int | None
    max_error_ns: float | None
    timer: str
    method: str
    clock_domain: str
    planted: bool  # a test planted offsets and drifts on the ranks' clocks (SCOPE_TEST_CLOCK)


def true_global_ns(reference: RankEvents, ticks: np.ndarray) -> np.ndarray:
    """Rank 0's clock at these counter values: the true global time where every rank reads one
    counter (with any offset and drift a test planted on rank 0's clock)."""
    h = reference.header
    t = ticks.astype(np.float64) * h.tick_ns
    return t + h.injected_offset_ns + h.injected_drift * (t - h.injected_base_ns)


def timeline_facts(ranks: list[RankEvents]) -> TimelineFacts | None:
    if not ranks:
        return None
    ref = next((r for r in ranks if r.rank == 0), None)
    truth = ref is not None and all(r.header.truth_known for r in ranks)
    rows = []
    counts: dict[str, int] = {}  # in first-stamped order, rank by rank
    lo, hi = np.inf, -np.inf
    for r in ranks:
        per_name = np.bincount(np.frombuffer(r.name_of, dtype=np.int64), minlength=len(r.names))
        for n, k in zip(r.names, per_name):
            counts[n] = counts.get(n, 0) + int(k)
        t, b = np.frombuffer(r.t_ns, dtype=np.float64), np.frombuffer(r.bound_ns, dtype=np.float64)
        errors = ok = worst = None
        if truth and len(t):
            errors = np.abs(t - true_global_ns(ref, np.frombuffer(r.ticks, dtype=np.int64)))
            ok, worst = int(np.count_nonzero(errors <= b)), float(errors.max())
        if len(t):
            lo, hi = min(lo, float(t.min())), max(hi, float(t.max()))
        rows.append(
            RankTimeline(
                rank=r.rank,
                host=r.header.host,
                clock_of=r.header.clock_of,
                depth=r.header.depth,
                events=len(t),
                max_bound_ns=float(b.max()) if len(t) else None,
                errors_ns=errors,
                within=ok,
                max_error_ns=worst,
            )
        )
    h = ranks[0].header
    errors_max = [x.max_error_ns for x in rows if x.max_error_ns is not None]
    return TimelineFacts(
        ranks=rows,
        names=list(counts),
        counts=counts,
        t0_ns=lo if np.isfinite(lo) else 0.0,
        span_ns=hi - lo if np.isfinite(lo) else 0.0,
        events=sum(x.events for x in rows),
        max_bound_ns=max((x.max_bound_ns for x in rows if x.max_bound_ns is not None), default=0.0),
        truth_known=truth,
        within=sum(x.within or 0 for x in rows) if truth else None,
        max_error_ns=max(errors_max) if errors_max else None,
        timer=h.timer,
        method=h.method,
        clock_domain=h.clock_domain,
        planted=any(r.header.injected_offset_ns or r.header.injected_drift for r in ranks),
    )
