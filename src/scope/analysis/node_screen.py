"""Screening the nodes (issue 43): a node-level test run on every rank at once (node.stream's
triad, node.dgemm at procs=all, as `--module screen` runs them) judged host by host with the
rule of analysis/screen.py.  A rank's figure is its own time per repetition, from the window
record (start and end of each kept repetition, every rank): its median and the median's 95 %
distribution-free interval; a host's figure is the median of its ranks'.  A host is slow when
its whole interval lies above the threshold its peers set: a CPU throttled, a memory channel
missing, a neighbour taking the cores."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from scope.analysis.placement import host_names
from scope.analysis.screen import Flag, Judged, finite, threshold
from scope.analysis.stats import median_ci_ranks
from scope.model import Run


@dataclass
class NodeScreen:
    """A node-level point run on every rank at once (node.stream, node.dgemm at procs=all),
    judged per host: each rank's own time per repetition (the window record's), its median and
    that median's 95 % interval; a host's figure the median of its ranks'."""

    test: str
    params: dict
    hosts: list[str]
    figure_us: list[float]  # per host
    lo_us: list[float]
    hi_us: list[float]
    judged: Judged | None
    flags: list[Flag] = field(default_factory=list)
    no_interval: int = 0  # hosts whose ranks kept fewer than 2 repetitions: a figure, not judged

    def as_dict(self) -> dict:
        return {
            "test": self.test,
            "params": self.params,
            "hosts": self.hosts,
            "figure_us": [finite(x) for x in self.figure_us],
            "ci_lo_us": [finite(x) for x in self.lo_us],
            "ci_hi_us": [finite(x) for x in self.hi_us],
            "no_interval": self.no_interval,
            "flags": [
                {"kind": f.kind, "hosts": list(f.hosts), "figure_us": f.figure_us, "ci_lo_us": f.lo_us,
                 "ci_hi_us": f.hi_us, "typical_us": f.typical_us, "threshold_us": f.threshold_us,
                 "ratio": finite(f.ratio)}
                for f in self.flags
            ],
        }  # fmt: skip


def _rank_interval(own: np.ndarray) -> tuple[float, float, float]:
    x = np.sort(own[np.isfinite(own)])
    if x.size < 2:  # one repetition: a figure, but no interval to judge it by
        return (float(x[0]) if x.size else float("nan")), float("nan"), float("nan")
    ranks = median_ci_ranks(x.size)
    med = float(np.median(x))
    return (med, float(x[ranks[0] - 1]), float(x[ranks[1] - 1])) if ranks else (med, float(x[0]), float(x[-1]))


def _hosts_judged(test: str, params: dict, names: list[str], host_list: list[int], rows: list) -> NodeScreen:
    """Per rank (median, low, high) -> per host the medians of its ranks', judged."""
    fig, lo, hi = (np.full(len(names), np.nan) for _ in range(3))
    ranks_of: dict[int, list[int]] = {}
    for r, h in enumerate(host_list):  # one pass, not one a host (a 1,024-host screen)
        ranks_of.setdefault(h, []).append(r)
    per = np.asarray(rows, dtype=float).reshape(len(rows), 3)
    for h, mine in ranks_of.items():
        fig[h], lo[h], hi[h] = np.median(per[mine], axis=0)
    ok = np.isfinite(fig)
    ns = NodeScreen(test, params, names, list(fig), list(lo), list(hi), None)
    ns.no_interval = int((ok & np.isnan(lo)).sum())
    if ok.sum() >= 3:
        typical, mad, thr = threshold(fig[ok])
        ns.judged = Judged("hosts", int(ok.sum()), typical, mad, thr)
        for h in np.flatnonzero(ok & (lo > thr)):
            ns.flags.append(Flag("host", (names[h],), float(fig[h]), float(lo[h]), float(hi[h]), typical, thr, 1))
    return ns


def node_screens(run: Run, level_of) -> list[NodeScreen]:
    """Every node-level point whose window record has every rank's own times, and the canary's
    probes where every rank's readings were kept (runs across nodes), over 3 hosts or more;
    `level_of(test)` the test's level."""
    names, host_list = host_names(run)
    if len(set(host_list)) < 3:
        return []
    out = []
    for p in run.points:
        if level_of(p.test) != "node":
            continue
        per = (p.whole_record or {}).get("per_rank") or {}
        start, end = per.get("start_us") or [], per.get("end_us") or []
        if len(start) != len(host_list):
            continue
        rows = [_rank_interval(np.asarray(e, dtype=float) - np.asarray(s, dtype=float)) for s, e in zip(start, end)]
        out.append(_hosts_judged(p.test, dict(p.params), names, host_list, rows))
    # the canary: each probe read at the start and the end of every launch, all ranks at once;
    # a rank's figure the median of its readings, their span its interval
    readings = [
        e.record["per_rank"] for e in getattr(run, "events", []) if e.type == "canary" and e.record.get("per_rank")
    ]
    for probe in ("compute_us", "copy_us"):
        per_rank = [r.get(probe) or [] for r in readings]
        if len(per_rank) < 2 or any(len(x) != len(host_list) for x in per_rank):
            continue
        x = np.array([[np.nan if v is None else v for v in r] for r in per_rank], dtype=float).T
        rows = [(float(np.nanmedian(v)), float(np.nanmin(v)), float(np.nanmax(v))) for v in x]
        out.append(_hosts_judged(f"canary {probe[:-3]}", {}, names, host_list, rows))
    return out


@dataclass(frozen=True)
class Evidence:
    test: str  # the screen: a pairs-timed test at `size`, or a node test (size None)
    size: int | None
    kind: str  # the flag's own kind there
    where: tuple[str, ...]
    ratio: float
    weak: str | None = None  # why the screen's flags are weak evidence (screen.weak_reason)


@dataclass(frozen=True)
class Place:
    """One slow part of the cluster, all screens together."""

    kind: str  # host | link
    where: tuple[str, ...]
    evidence: tuple[Evidence, ...]

    @property
    def weak(self) -> str | None:
        """Why the place is weak evidence, where all of its evidence is; None otherwise."""
        reasons = [e.weak for e in self.evidence]
        return reasons[0] if reasons and all(reasons) else None

    def as_dict(self) -> dict:
        return {
            "kind": self.kind,
            "where": list(self.where),
            "weak": self.weak,
            "evidence": [
                {"test": e.test, "size": e.size, "kind": e.kind, "where": list(e.where), "ratio": finite(e.ratio)}
                for e in self.evidence
            ],
        }


def flagged_places(screens: list, nodes: list[NodeScreen]) -> list[Place]:
    """The run's flagged list: every host any screen flagged (a slow host, or slow pairs inside
    it), then every link flagged between two hosts not flagged; a slow link that touches a
    flagged host is that host's evidence, not a place of its own (a host slow to some peers only
    in the pairs, where its stalls fell, is still the one slow host)."""
    ev: list[Evidence] = [
        Evidence(sc.test, sc.size, f.kind, f.hosts, f.ratio, sc.weak) for sc in screens for f in sc.flags
    ] + [Evidence(ns.test, None, f.kind, f.hosts, f.ratio) for ns in nodes for f in ns.flags]
    hosts: dict[str, list[Evidence]] = {}
    for e in ev:
        if e.kind in ("host", "within"):
            hosts.setdefault(e.where[0], []).append(e)
    links: dict[tuple[str, ...], list[Evidence]] = {}
    for e in ev:
        if e.kind != "link":
            continue
        touched = [h for h in e.where if h in hosts]
        if touched:
            hosts[touched[0]].append(e)
        else:
            links.setdefault(tuple(sorted(e.where)), []).append(e)
    return [Place("host", (h,), tuple(es)) for h, es in hosts.items()] + [
        Place("link", w, tuple(es)) for w, es in links.items()
    ]
