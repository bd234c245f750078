"""A run's headline figures, the ones a results hub lists clusters by (issue 53): the MPI latency
of a ping-pong at 8 B, the peak stream bandwidth, the allreduce at its most processes; each with
its interval across launches and the point it comes from.  And the collective surface, a run's
collective times by message size and process count (000 §8.2's "3-D presentation"). Pure: a
Run in, values out."""

from __future__ import annotations

import statistics
from dataclasses import asdict, dataclass

from scope.analysis.transport import transport_facts
from scope.catalog.names import ALLREDUCE, PINGPONG, STREAM
from scope.catalog.testinfo import written
from scope.model import Point, Run

LATENCY_SIZE = 8  # bytes: the size every peer quotes its latency at
HEADLINE_TESTS = (PINGPONG, STREAM, ALLREDUCE)  # and every collective, for the surface


@dataclass(frozen=True)
class Headline:
    value: float
    ci_lo: float | None
    ci_hi: float | None
    unit: str
    size: int | None
    procs: int | None
    test: str

    def as_dict(self) -> dict:
        return asdict(self)


def _procs(p: Point, run: Run) -> int | None:
    v = p.params.get("procs")
    try:
        return int(v) if v not in (None, "all") else run.ranks
    except (TypeError, ValueError):
        return run.ranks


def _default(p: Point) -> bool:
    """A point at the test's default setting: blocking standard-mode, the usual buffers."""
    return all(written(p.params.get(k, d)) == d for k, d in (("mode", "standard"), ("blocking", "yes")))


def headlines(run: Run) -> dict[str, Headline]:
    """latency (us, 8 B ping-pong, else its smallest size), bandwidth (MB/s, the stream's
    peak), allreduce (us, 8 B or its smallest size, at its most processes): those the run has."""
    out: dict[str, Headline] = {}
    by_test: dict[str, list[Point]] = {}
    for p in run.points:
        if p.median and p.median > 0:
            by_test.setdefault(p.test, []).append(p)
    pp = [p for p in by_test.get(PINGPONG, ()) if _default(p) and p.size is not None]
    if pp:
        p = min(pp, key=lambda q: (q.size != LATENCY_SIZE, q.size))
        out["latency"] = Headline(p.median, p.ci_lo, p.ci_hi, "us", p.size, _procs(p, run), p.test)
    st = [p for p in by_test.get(STREAM, ()) if p.bw_median]
    if st:
        p = max(st, key=lambda q: q.bw_median)
        bpo = p.bytes_per_op or 0
        lo = bpo / p.ci_hi if bpo and p.ci_hi else None  # a rate's interval is the time's, inverted
        hi = bpo / p.ci_lo if bpo and p.ci_lo else None
        out["bandwidth"] = Headline(p.bw_median, lo, hi, "MB/s", p.size, _procs(p, run), p.test)
    ar = by_test.get(ALLREDUCE, [])
    if ar:
        most = max(_procs(p, run) or 0 for p in ar)
        at = [p for p in ar if (_procs(p, run) or 0) == most and p.size is not None]
        if at:
            p = min(at, key=lambda q: (q.size != LATENCY_SIZE, q.size))
            out["allreduce"] = Headline(p.median, p.ci_lo, p.ci_hi, "us", p.size, most, p.test)
    return out


def collective_cells(run: Run) -> list[tuple[str, int, int, float]]:
    """(test, processes, size, median us) of every collective point at its default setting."""
    out = []
    for p in run.points:
        info = run.info(p.test)
        blocking = written(p.params.get("nonblocking", "no")) == "no"
        if info.level != "coll" or p.size is None or not p.median or not blocking:
            continue
        out.append((p.test, _procs(p, run) or 0, int(p.size), float(p.median)))
    return out


def where_measured(run: Run) -> dict:
    """Where a run's figures were measured, for a reader of the cluster list (issue 70: a
    shared-memory latency read like a network one): its nodes (shared-memory domains, or a
    testbed's hosts), what carried the messages, and whether ranks 0 and 1, the ping-pong's
    pair, sat on different nodes (None where not known)."""
    ctx = run.context
    if ctx is None:
        return {"nodes": None, "interconnect": None, "crossed": None}
    place = {p.rank: p for p in ctx.placement}
    nodes = len({(p.host, p.node, p.netns) for p in ctx.placement}) or None
    a, b = place.get(0), place.get(1)
    crossed = None if a is None or b is None else (a.host, a.node, a.netns) != (b.host, b.node, b.netns)
    if ctx.sim:
        carrier = "SimGrid's simulated network"
    elif ctx.testbed:
        carrier = str(ctx.testbed.get("transport") or "the testbed's links")[:120]
    else:
        facts = transport_facts(run)
        carrier = ", ".join(facts.layers)[:120] if facts and facts.layers else (facts.device if facts else None)
    return {"nodes": nodes, "interconnect": carrier or None, "crossed": crossed}


def trend(values: list[float]) -> float | None:
    """A figure's newest value against the median of those before it (relative: +0.05 is 5 %
    above), from three earlier values on; None before that."""
    if len(values) < 4:
        return None
    before = sorted(values[:-1])
    n = len(before)
    mid = before[n // 2] if n % 2 else (before[n // 2 - 1] + before[n // 2]) / 2
    return values[-1] / mid - 1 if mid > 0 else None


def outlying(values: list[float]) -> set[int]:
    """The values a chart marks as outliers instead of stretching its axis to them: from five
    values on, those further from the median than six robust standard deviations (1.4826 x the
    median absolute deviation) and half the median both; a step between two levels has none."""
    if len(values) < 5:
        return set()
    m = statistics.median(values)
    mad = statistics.median(abs(v - m) for v in values)
    reach = max(6 * 1.4826 * mad, 0.5 * abs(m))
    return {i for i, v in enumerate(values) if abs(v - m) > reach}
