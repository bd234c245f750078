"""Exports of a stored run: CSV (one row per point, or per sample) and JSON (everything)."""

from __future__ import annotations

import csv
import io
import json

from scope.show import fit_series
from scope.store import POINT_STATS, Store, samples_of, series

POINT_COLUMNS = [
    "run",
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
]


def to_csv(store: Store, run_id: int, with_samples: bool = False) -> str:
    points = store.points(run_id)
    pnames: list[str] = []
    for p in points:
        for k in json.loads(p["params"]):
            if k not in pnames:
                pnames.append(k)
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    if with_samples:
        w.writerow(["run", "test", *pnames, "size", "unit", "sample", "value"])
    else:
        w.writerow([*POINT_COLUMNS[:2], *pnames, *POINT_COLUMNS[2:]])
    for p in points:
        params = json.loads(p["params"])
        pv = [params.get(k, "") for k in pnames]
        if with_samples:
            for i, v in enumerate(samples_of(p)):
                w.writerow([run_id, p["test"], *pv, p["size"], p["unit"], i, repr(v)])
        else:
            w.writerow(
                [
                    run_id,
                    p["test"],
                    *pv,
                    p["size"],
                    p["unit"],
                    p["count"],
                    *(p[k] for k in POINT_STATS),
                    p["bw_median"],
                    p["batch"],
                    p["stop"],
                    p["warmup_iterations"],
                    p["warmup_converged"],
                    p["seconds"],
                ]
            )
    return buf.getvalue()


def to_json(store: Store, run_id: int, with_samples: bool = True) -> str:
    run = dict(store.run(run_id))
    run["context"] = json.loads(run["context"]) if run["context"] else None
    run["command"] = json.loads(run["command"]) if run["command"] else None
    run["hosts"] = json.loads(run["hosts"]) if run["hosts"] else None
    points = []
    for p in store.points(run_id):
        rec = json.loads(p["record"])
        if with_samples:
            rec["samples"] = samples_of(p)
        points.append(rec)
    fits = []
    for (test, params), pts in series(store.points(run_id)).items():
        f = fit_series(pts)
        fits.append({"test": test, "params": json.loads(params), "hockney": f.as_dict() if f else None})
    events = [json.loads(e["record"]) for e in store.events(run_id)]
    return json.dumps(
        {
            "format": "scope-export",
            "version": 1,
            "run": run,
            "points": points,
            "fits": fits,
            "events": events,
        },
        indent=1,
        default=str,
    )
