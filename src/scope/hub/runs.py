"""Runs as the hub handles them: an upload read strictly and summarised, and stored bundles
opened again as SCOPE's own runs (a scratch store in a temporary folder), so the hub's pages and
comparisons are made by the same analysis as `scope show`, `compare` and `report`."""

from __future__ import annotations

import contextlib
import itertools
import json
import tempfile
from pathlib import Path
from typing import NamedTuple

import msgspec

from scope import secrets
from scope.analysis.compare import compare_runs
from scope.analysis.facts import derive
from scope.analysis.headline import HEADLINE_TESTS, collective_cells, headlines, where_measured
from scope.analysis.history import Obs, Series, detect, observed
from scope.analysis.layers import layers_of
from scope.analysis.noise import canary_shifts, judge_machine
from scope.analysis.provenance import differ, provenance
from scope.analysis.verdict import verdicts
from scope.catalog.testinfo import written
from scope.hub import events
from scope.hub.series import SERIES_LIMIT
from scope.model.run import kind_of
from scope.sizes import format_size
from scope.store import Store, bundle_stream, gz
from scope.store.bundle import checked, load, scrubbed
from scope.views.export import to_json

UPLOAD_LIMIT = 64 << 20  # bytes on the wire (gzip'd); a 10^6-point import is ~2 MB
INFLATED_LIMIT = 512 << 20  # bytes once decompressed: what a stored bundle is read with
INFLATION = 8  # a push may grow this much when decompressed (a bundle of numbers grows 3-4x)


@contextlib.contextmanager
def scratch(*bundles):
    """The bundles (each checked, or a stored bundle's bytes, a stream read a line at a time)
    stored as runs 1, 2, ... of a store that lives as long as the block."""
    with tempfile.TemporaryDirectory(prefix="scope-hub-") as d:
        store = Store(Path(d) / "runs.db")
        try:
            ids = [
                bundle_stream.load_data(store, b, INFLATED_LIMIT) if isinstance(b, bytes) else load(store, b)
                for b in bundles
            ]
            yield store, ids
        finally:
            store.close()


def ingest(data: bytes, upload_limit: int = UPLOAD_LIMIT, token: str | None = None, grew=None) -> Ingested:
    """An upload checked through and summarised: its digest, the hub's row of it, the bundle as
    the hub keeps it and its points as series (hub/series.py).  Raises ScopeError, saying why,
    for anything that is not a whole run; a gzip bomb is stopped at INFLATION times the upload
    limit.  A run pushed by a scope older than secrets.py's rule is kept under it: its
    credentials (and the push token) redacted."""
    if bundle_stream.streamed_bytes(data):  # version 2: stored a line at a time, never held whole
        got = _ingest_stream(data, upload_limit, token, grew)
        if got is not None:
            return got
    b, sha = checked(data, INFLATION * upload_limit, grew)
    if exposed(b, token):
        secret = (token,) if token and len(token) >= secrets.SHORTEST else ()
        data = gz.compress(scrubbed(b, secret))
        b, sha = checked(data, INFLATION * upload_limit)
    # the run's points: each measured one once (however many launches), each imported row
    npoints = len({p.record.get("index") for p in b.points}) + sum(len(i.sizes) // 8 for i in b.imported)
    with scratch(b) as (store, (rid,)):
        return _summary(store, rid, b, npoints, data, sha)


def _ingest_stream(data: bytes, upload_limit: int, token: str | None, grew) -> Ingested | None:
    """A stream stored in a scratch store as it is read (bundle_stream.load_bytes) and summarised
    there: a run of 10^5 points held whole took 3.5 GB of the hub.  None where it shows a
    credential (a scope older than secrets.py's rule): ingest reads it whole and scrubs it."""
    with tempfile.TemporaryDirectory(prefix="scope-hub-") as d:
        store = Store(Path(d) / "runs.db")
        try:
            rid, s = bundle_stream.load_bytes(store, data, INFLATION * upload_limit, grew)
            if exposed(s, token):
                return None
            return _summary(store, rid, s, s.points, data, s.digest)
        finally:
            store.close()


def _summary(store, rid: int, b, npoints: int, data: bytes, sha: str) -> Ingested:
    """The hub's row of a run stored as `rid` in a scratch store, and its points as series;
    `b`: the bundle, or a stream's summary (bundle_stream.Summary)."""
    # a run of a million imported points is not built: its headline tests and collectives only
    run = store.load_run(rid, samples=False, tests=None if npoints <= SERIES_LIMIT else _summarised(b))
    heads = headlines(run)
    known = provenance(run)
    if b.samples != "kept":  # the pusher's choice (--no-samples), said beside the run wherever it is listed
        known["samples"] = b.samples
    cells = collective_cells(run)
    where = where_measured(run)
    points = list(itertools.islice(observed(run), SERIES_LIMIT))  # a large run: its first points
    row = {
        "started_utc": b.run.started_utc,
        "status": b.run.status,
        "label": b.run.label,
        "origin": run.kind if run.kind.startswith("simulated") else b.run.origin,  # marked wherever it is listed
        "ranks": b.run.ranks,
        "mpi": _first_line(((b.context or {}).get("mpi") or {}).get("library")),
        "launches": b.run.launches,
        "points": npoints,
        "bytes": len(data),
        "collectives": json.dumps(cells),
        "provenance": json.dumps(known),
        **{k: (int(v) if isinstance(v, bool) else v) for k, v in where.items()},
    }
    for name, h in heads.items():
        at = format_size(h.size) if h.size is not None else ""  # 2 MiB, not 2097152 B (issue 70)
        at += f", {h.procs} procs" if h.procs else ""
        row.update({name: h.value, f"{name}_lo": h.ci_lo, f"{name}_hi": h.ci_hi, f"{name}_at": at})
    return Ingested(sha, row, data if data[:2] == GZIP else gz.compress(data), points)


class Ingested(NamedTuple):
    digest: str
    row: dict
    bundle: bytes  # gzip'd
    points: list  # analysis/history.observed's (key, unit, Obs): the run's points as series


def _summarised(b) -> set[str]:
    """The tests a large run's summary reads: the headline tests and the collectives."""
    names = {t["name"]: t.get("level") or t["name"].split(".")[0] for t in b.tests}
    names.update({i.test: i.test.split(".")[0] for i in b.imported if i.test not in names})
    return {n for n, level in names.items() if n in HEADLINE_TESTS or level == "coll"}


def series_points(data: bytes) -> list:
    """A stored bundle's points as series (a run stored before the hub kept them)."""
    return ingest(data, INFLATED_LIMIT // INFLATION).points


GZIP = b"\x1f\x8b"


def exposed(b, token: str | None) -> bool:
    """Whether a checked bundle shows a credential where a run keeps its provenance and text: a
    credential-named variable with its value, a private folder, or the push token anywhere but
    its measured records (a quick look; leaving() is the rule)."""
    ctx = b.context or {}
    env = ctx.get("env") if isinstance(ctx.get("env"), dict) else {}
    if any(secrets.credential(k) and v != secrets.REDACTED for k, v in env.items()):
        return True
    if any(not secrets.measured(k) for k in env) or secrets.private_paths(msgspec.structs.asdict(b.run), ctx):
        return True
    text = msgspec.json.encode([b.run, ctx, b.events])
    if token and len(token) >= secrets.SHORTEST and token.encode() in text:
        return True
    return secrets.URL_PASSWORD.search(text.decode()) is not None


def _first_line(text: str | None) -> str | None:
    """An MPI's version string names it on its first line (MPICH's runs on for twenty)."""
    return text.strip().splitlines()[0][:200] if text and text.strip() else None


def run_json(data: bytes) -> str:
    """A stored run as `scope export --format json` writes it."""
    with scratch(data) as (store, (rid,)):
        return "".join(to_json(derive(store.load_run(rid))))


def compared(
    a: bytes,
    b: bytes,
    alpha: float = 0.05,
    min_effect: float = 0.02,
    names: tuple[str, str] = ("A", "B"),
    between: bool = False,
) -> dict:
    """Two stored runs point by point (scope compare's rows and verdicts, the machine's canary
    shifts), the answer a test (analysis/verdict.py), their layer tables, and each run's medians
    by test for the overlaid curves.  `between` two clusters the machine differs by definition:
    it is what is compared, so the canaries' shift is context and the verdicts stand (issue 70);
    within one cluster a moved machine withholds them ("machine changed")."""
    with scratch(a, b) as (store, (ia, ib)):
        ra, rb = store.load_run(ia, samples=True), store.load_run(ib, samples=True)
        rows = compare_runs(ra, rb, alpha, min_effect)
        shifts = []
        if not (ra.imported or rb.imported):
            shifts = canary_shifts(ra, rb, alpha, min_effect)
            if not between:
                rows = judge_machine(rows, shifts)
        layers = [layers_of([ra]), layers_of([rb])]
        curves = [_curves(ra), _curves(rb)]
    answers = [v.as_dict() for v in verdicts(rows, *names)]
    return {"rows": rows, "shifts": [s.text() + ": " + s.verdict for s in shifts], "layers": layers,
            "curves": curves, "verdicts": answers}  # fmt: skip


def _curves(run) -> dict[str, list[tuple[int, float, float | None, float | None]]]:
    """Each test's default-setting series: (size, median, ci_lo, ci_hi), by size."""
    out: dict[str, list] = {}
    for p in run.points:
        if p.size is None or not p.median:
            continue
        key = p.test + "".join(f" {k}={written(v)}" for k, v in sorted(p.params.items()))
        out.setdefault(key, []).append((int(p.size), p.median, p.ci_lo, p.ci_hi))
    for v in out.values():
        v.sort()
    return {k: v for k, v in out.items() if len(v) >= 2}  # a curve needs two sizes


HIGHER_IS_BETTER = {"bandwidth"}  # the headline figures a rise of is a gain, not a slowdown


def regression(changes: list[dict]) -> str | None:
    """A cluster's badge: its newest change that left a headline figure worse and still holds
    (a step, or the newest run's alarm; a temporary change has ended), as a phrase, or None."""
    worse = [c for c in changes if c.get("kind") in ("step", "alarm")
             and (c["step"] < 0 if c.get("figure") in HIGHER_IS_BETTER else c["step"] > 0)]  # fmt: skip
    if not worse:
        return None
    c = max(worse, key=lambda c: (c["run"], c["figure"]))
    what = "slower than the history allows" if c["kind"] == "alarm" else "a step"
    return f"{c['figure']} {c['step'] * 100:+.0f} % since run {c['run']} ({what})"


def _kind(row: dict) -> str:
    """A hub run's kind (model/run.py, kind_of): its origin says simulated or imported."""
    origin = row.get("origin") or "scope"
    return origin if origin.startswith("simulated") else kind_of(origin, None)


FIGURE_UNITS = {"latency": "us", "bandwidth": "MB/s", "allreduce": "us"}


def cluster_changes(c: dict) -> list[dict]:
    """The changes in a cluster's headline figures over its runs (analysis/history.py, the
    detector `scope history` uses), each with the provenance that differs across it."""
    series, rows = [], c["history"]
    kinds = sorted({_kind(r) for r in rows})  # a simulated platform's runs are never one series with measured ones
    for f, unit in FIGURE_UNITS.items():
        for kind in kinds:
            obs = [Obs(r["id"], r["started_utc"], r[f], r.get(f"{f}_lo"), r.get(f"{f}_hi"))
                   for r in rows if r.get(f) and _kind(r) == kind]  # fmt: skip
            if len(obs) >= 4:
                series.append(Series(f, {}, None, unit, obs, kind))
    return explained(detect(series), {r["id"]: r["provenance"] for r in rows}, c.get("events", ()))


def explained(changes, provenance: dict[int, dict], known=()) -> list[dict]:
    """Changes as the hub shows them, each with the provenance that differs across it and the
    events the site announced between its run and the one before (hub/events.py)."""
    out = []
    for ch in changes:
        d = ch.as_dict()
        if ch.kind != "outlier" and ch.index > 0:
            prior = ch.series.obs[ch.index - 1]
            d["changed"] = {k: list(v) for k, v in differ(provenance[prior.run], provenance[ch.run]).items()}
            said = events.between(list(known), prior.started, ch.series.obs[ch.index].started)
            d["announced"] = [{"text": e["text"], "at_utc": e["at_utc"]} for e in said]
        d["figure"], d["index"] = ch.series.test, ch.index
        out.append(d)
    return out


def series_changes(head: dict, rows: list[dict], known=()) -> list[dict]:
    """The changes in one kept series (hub/series.py's history), judged as `scope history`
    judges it: each run's launches its replicates."""
    if len(rows) < 4:  # the detector's shortest history (scope history --min-runs)
        return []
    provenance = {r["id"]: json.loads(r["provenance"] or "{}") for r in rows}
    return explained(detect([as_series(head, rows)]), provenance, known)


def as_series(head: dict, rows: list[dict]) -> Series:
    """A kept series (hub/series.py's history) as analysis/history.py's Series."""
    obs = [Obs(r["id"], r["started_utc"], r["median"], r["lo"], r["hi"], tuple(json.loads(r["launches"] or "[]")))
           for r in rows]  # fmt: skip
    return Series(head["test"], head["params"], head["size"], head["unit"] or "us", obs, head["kind"])
