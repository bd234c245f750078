"""The point a run reports, from its launches' own measurements (launches as replicates):
the statistics come from analysis/replicates.py; this module builds the record the store keeps
(docs/records.md, "In the database")."""

from __future__ import annotations

import math

import numpy as np

from scope.analysis.collectives import overlap_inputs, overlaps_ci, tail_of
from scope.analysis.replicates import Launch, combine, pooled_sd
from scope.analysis.stats import ci_rel, median, summarise
from scope.model import relaxed_launches
from scope.store import Store


def combine_launches(store: Store, run_id: int, launches: int, commit: bool = True) -> None:
    """Each point's launches into the point the run reports (analysis/replicates.py); every
    point's next-launch interval also draws on the spread of launches over the whole run.
    commit=False leaves the points to the caller's next commit (the run's end, one sync)."""
    per_point = {seq: store.launch_points(run_id, seq) for seq in store.uncombined(run_id)}
    prior = pooled_sd([[_median(rec) for rec, _ in per] for per in per_point.values()])
    records = [combined_record(per, launches, seq, prior) for seq, per in per_point.items()]
    timed = [(out, per) for out, per in zip(records, per_point.values()) if "tail" in out]
    got = overlaps_ci([_overlap_inputs(out, per) for out, per in timed])  # the bootstraps, on the usable cores
    for (out, _), ov in zip(timed, got):
        out["overlap"] = None if ov is None else {"value": ov.value, "ci_lo": ov.ci_lo, "ci_hi": ov.ci_hi}
    for out in records:
        store.add_point(run_id, out, commit=False)
    if commit:
        store.commit()


def _median(rec: dict) -> float:
    """A launch's own median (NaN when it has none)."""
    return float((rec.get("stats") or {}).get("median") or "nan")


def combined_record(per: list[tuple[dict, list[float]]], planned: int, seq: int, prior_sd: float | None = None) -> dict:
    """The record of a point measured in len(per) launches: the first launch's record with the
    statistics replaced by the replicated ones (docs/method.md, "Launches as replicates"); a
    window- or barrier-timed point's samples' tail too, its overlap left to combine_launches,
    which bootstraps every point's on the usable cores."""
    launches = []
    relaxed = relaxed_launches([rec.get("precision") for rec, _ in per])
    for (rec, samples), looser in zip(per, relaxed):
        st = rec.get("stats") or {}
        launches.append(
            (
                Launch(_median(rec), st.get("ci_lo"), st.get("ci_hi"), int(rec.get("count") or 0), relaxed=looser),
                np.asarray(samples, dtype=float),
            )
        )
    launches = [(info, s[np.isfinite(s)]) for info, s in launches if math.isfinite(info.median)]
    first = per[0][0]
    out = {k: v for k, v in first.items() if k not in ("samples",)}
    if not launches:
        return out
    r = combine(launches, seed=seq, prior_sd=prior_sd)
    pooled = np.concatenate([s for _, s in launches])
    stats = dict(first.get("stats") or {})
    if len(pooled):  # the order statistics of every sample; the interval is the launches' (above)
        whole = summarise(pooled).as_dict()
        stats.update({k: whole[k] for k in ("min", "max", "mean", "sd", "p5", "p25", "p75", "p95", "p99")})
    stats.update(median=r.median, ci_lo=r.ci_lo, ci_hi=r.ci_hi, ci_rel=ci_rel(r.median, r.ci_lo, r.ci_hi))
    out["stats"] = stats
    out["count"] = sum(i.count for i in r.launches)
    out["seconds"] = sum(float(rec.get("seconds") or 0) for rec, _ in per)
    bpo = float(first.get("bytes_per_op") or 0)
    if bpo and r.median > 0:
        bw = {"median": bpo / r.median}
        if r.ci_lo and r.ci_hi:
            bw.update(ci_lo=bpo / r.ci_hi, ci_hi=bpo / r.ci_lo)
        bw["max"] = bpo / stats["min"] if stats.get("min") else None
        out["bandwidth_MBps"] = bw
    ref = [x for rec, _ in per for x in rec.get("reference_samples") or ()]
    if ref:  # a paired test's reference variant, pooled like the samples
        out["reference_samples"] = ref
        out["reference"] = {"count": len(ref), "median": median(ref)}
    faults = [rec["page_faults"] for rec, _ in per if rec.get("page_faults") is not None]
    if faults:
        out["page_faults"] = sum(faults)
    gave = sorted({g for rec, _ in per for g in rec.get("gave_up") or []})
    if gave:
        out["gave_up"] = gave
    if "window" in first:
        out["window"] = dict(
            first["window"],
            repetitions=sum(int((rec.get("window") or {}).get("repetitions") or 0) for rec, _ in per),
            invalid=sum(int((rec.get("window") or {}).get("invalid") or 0) for rec, _ in per),
        )
    if "phases" in first:
        _combine_phases(out, [rec for rec, _ in per])
    out["launches"] = {
        "planned": planned,
        "n": r.n,
        "medians": [i.median for i in r.launches],
        "counts": [i.count for i in r.launches],
        # each launch's precision target: later ones may be looser (engine/core/rep.h, rep_target)
        "precisions": [rec.get("precision") for rec, _ in per if math.isfinite(_median(rec))],
        "within_rel": r.within_rel,
        "spread_rel": r.spread_rel,
        "next": [r.next_lo, r.next_hi] if r.next_lo is not None else None,
        "pooled_sd": r.pooled_sd,
        "spread_exceeds_within": r.spread_exceeds_within,
    }
    if r.modes:
        out["modes"] = [{"at": m.at, "share": m.share} for m in r.modes]
    if "timing" in first:
        out["tail"] = tail_of([x for _, s in per for x in s])  # every launch's samples, as its views read them
    return out


def _overlap_inputs(out: dict, per: list[tuple[dict, list[float]]]) -> tuple | None:
    """What a window- or barrier-timed point's overlap is bootstrapped from, as its views read
    it (every launch's samples in launch order, the pooled reference samples, the first
    launch's compute time): worked out once and kept in the record, since the bootstrap was
    nine tenths of a sampled large run's `show` (49 s at 10^5 points, bench/large_push.py)."""
    pooled = [x for _, s in per for x in s]
    return overlap_inputs(pooled, lambda: out.get("reference_samples"), (out.get("extra") or {}).get("compute_us"))


def _weighted(recs: list[dict], get, weights: list[float]) -> list | None:
    """Per-rank values of every launch, averaged with the launches' repetition counts."""
    rows = [get(r) for r in recs]
    if not rows or any(not isinstance(x, list) or len(x) != len(rows[0]) for x in rows):
        return None
    total = sum(weights) or 1.0
    return [
        sum(w * (x[i] if x[i] is not None else math.nan) for w, x in zip(weights, rows)) / total
        for i in range(len(rows[0]))
    ]


def _combine_phases(out: dict, recs: list[dict]) -> None:
    """A kernel point's phase accounts are means over repetitions: over launches they are
    the means over all of them (each launch weighted by its repetitions)."""
    w = [float((r.get("phases") or {}).get("repetitions") or 0) for r in recs]
    ph = dict(out["phases"], repetitions=int(sum(w)))
    ph["idle_measured"] = all((r.get("phases") or {}).get("idle_measured") for r in recs)
    for k in ("init", "comp", "comm", "idle"):
        v = _weighted(recs, lambda r, k=k: (r.get("phases") or {}).get(k), w)
        if v is not None:
            ph[k] = v
    steps = dict(ph.get("steps") or {})
    for k in steps:  # T_comp's named steps, alike
        v = _weighted(recs, lambda r, k=k: ((r.get("phases") or {}).get("steps") or {}).get(k), w)
        if v is not None:
            steps[k] = v
    if steps:
        ph["steps"] = steps
    out["phases"] = ph
    ops = []
    for i, op in enumerate(out.get("ops") or []):  # every launch names the same operations in order
        op = dict(op)
        for k in ("comm_us", "idle_us"):
            v = _weighted(recs, lambda r, k=k, i=i: _nth(r.get("ops"), i).get(k), w)
            if v is not None:
                op[k] = v
        ops.append(op)
    if ops:
        out["ops"] = ops


def _nth(items, i: int) -> dict:
    return items[i] if items and i < len(items) else {}
