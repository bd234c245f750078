"""Exports of a run: CSV (one row per point, or per sample) and JSON (everything: the run, its
context, every point's record with samples, the fits, the events)."""

from __future__ import annotations

import csv
import io
import operator
from collections.abc import Iterator

from scope.analysis.facts import RunFacts
from scope.model import POINT_STATS, Run
from scope.views.jsonout import dumps, stream
from scope.views.timeline import timeline_doc

POINT_COLUMNS = [
    "run",
    "module",  # baseline-1, advanced-1, standard-1, or empty: never compare across them unawares
    "kind",  # measured, imported TOOL, or simulated PLATFORM-DIGEST (model/run.py, kind_of)
    "test",
    "size",
    "unit",
    "count",
    *POINT_STATS,
    "bw_median_MBps",
    "batch",
    "stop",
    "warmup_iterations",
    "warmup_converged",
    "seconds",
    "ci_covers",  # what ci_lo .. ci_hi covers: launch-to-launch variation, or one launch's samples
]


def module_of(run: Run) -> str:
    m = run.context.module if run.context else None
    return f"{m['name']}-{m['version']}" if m else ""


def to_csv(run: Run, with_samples: bool = False) -> str:
    module, kind = module_of(run), run.kind
    pnames: list[str] = []
    for p in run.points:
        pnames += [k for k in p.params if k not in pnames]
    # the named numbers a test reports (NPB's verified values and references, flop counts ...);
    # an import has none, and reading a million imported records for them would cost seconds
    xnames: list[str] = []
    for p in [] if run.imported or with_samples else run.points:
        xnames += [k for k in p.extra if k not in xnames]
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    if with_samples:
        w.writerow(["run", "module", "kind", "test", *pnames, "size", "unit", "sample", "value"])
    else:
        w.writerow([*POINT_COLUMNS[:4], *pnames, *POINT_COLUMNS[4:], *(f"extra.{x}" for x in xnames)])
    if with_samples:
        for p in run.points:
            pv = [p.params.get(k, "") for k in pnames]
            w.writerows(
                [run.id, module, kind, p.test, *pv, p.size, p.unit, i, repr(v)] for i, v in enumerate(p.samples)
            )
        return buf.getvalue()
    # the run's replicate design says what every interval covers (run.launches: launches asked)
    covers = (
        "no interval: one average per size (imported)"
        if run.imported
        else f"launch to launch ({run.launches} launches)"
        if (run.launches or 1) > 1
        else "this launch's samples only"
    )
    # one attribute getter for the columns after the parameters: a million rows take seconds
    tail = operator.attrgetter("size", "unit", "count", *POINT_STATS, "bw_median", "batch", "stop", "warmup_iterations")
    w.writerows(
        [
            run.id,
            module,
            kind,
            p.test,
            *[p.params.get(k, "") for k in pnames],
            *tail(p),
            None if p.warmup_converged is None else int(p.warmup_converged),
            p.seconds,
            covers,
            *([p.extra.get(x) for x in xnames] if xnames else ()),
        ]
        for p in run.points
    )
    return buf.getvalue()


def to_json(facts: RunFacts, with_samples: bool = True) -> Iterator[str]:
    """`scope export --format json`'s text, in pieces (jsonout.stream)."""
    return stream(export_doc(facts, with_samples))


def export_doc(facts: RunFacts, with_samples: bool = True, ranks: list[int] | None = None) -> dict:
    """`scope export --format json`'s document (docs/json.md); `windows` over all ranks, or
    over the subset `ranks`."""
    run = facts.run
    head = {
        "id": run.id,
        "started_utc": run.started_utc,
        "finished_utc": run.finished_utc,
        "status": run.status,
        "reason": run.reason,
        "command": run.command,
        "launcher": run.launcher,
        "ranks": run.ranks,
        "hosts": run.context.hosts if run.context else None,
        "label": run.label,
        "module": run.context.module if run.context else None,
        "origin": run.origin,
        "kind": run.kind,
        "source": run.source,
        "mpi_library": run.context.mpi_library if run.context else None,
        "context": run.context_record,
        "stderr": run.stderr,
    }
    # made as they are written (jsonout.stream): a point's record lives no longer than its line
    points = (dict(p.whole_record, samples=p.samples) if with_samples else p.whole_record for p in run.points)
    fits = [
        {"test": f.series.test, "params": f.series.params, "hockney": f.hockney.as_dict() if f.hockney else None}
        for f in facts.series
    ]
    doc = {
        "format": "scope-export",
        "version": 1,
        "run": head,
        "points": points,
        "fits": fits,
        "windows": [w.as_dict() for w in facts.windows(ranks)],
        "screens": [sc.as_dict() for sc in facts.screens],
        "node_screens": [ns.as_dict() for ns in facts.node_screens],
        "flagged": [p.as_dict() for p in facts.flagged],
        "events": [e.record for e in run.events],
        "timeline": timeline_doc(facts.timeline, run.timeline),
    }
    return doc


def show_json(facts: RunFacts, ranks: list[int] | None = None) -> Iterator[str]:
    """`scope show --json`: the export document without samples, and what show judges of the
    run: its warnings, the machine's canary readings, the drift between runs its intervals
    took in, and the window-timed points' figures over `ranks` when given (docs/json.md)."""
    doc = export_doc(facts, with_samples=False, ranks=ranks)
    doc["format"] = "scope-show"
    doc["warnings"] = [{"kind": w.kind, "message": w.message, "hint": w.hint} for w in facts.warnings]
    doc["canary"] = facts.canary
    doc["drift"] = facts.drift
    return stream(doc)


RUN_FIELDS = (
    "id",
    "started_utc",
    "finished_utc",
    "status",
    "reason",
    "ranks",
    "npoints",
    "tests",
    "label",
    "origin",
    "kind",
)


def runs_json(rows: list[dict]) -> str:
    """`scope runs --json`: one object a run (docs/json.md)."""
    out = []
    for r in rows:
        d = {k: r.get(k) for k in RUN_FIELDS}
        d["tests"] = (r.get("tests") or "").split(",") if r.get("tests") else []
        d["mpi_library"] = ((r.get("mpi_library") or "").strip().splitlines() or [None])[0]
        d["launches"] = r.get("launches")
        out.append(d)
    return dumps(out)
