"""The hub's pages: server-rendered HTML from jinja2 templates, every value escaped (autoescape)
and every control character shown as an escape (views/templating.py), so no text a
push carries can run in a reader's browser or drive a terminal that prints the page."""

from __future__ import annotations

import bisect
import dataclasses
import json
import math

from scope.analysis.headline import outlying
from scope.catalog.testinfo import written
from scope.hub import series
from scope.hub.tables import FIGURES
from scope.version import __version__
from scope.views import svg
from scope.views.history import kind_text
from scope.views.templating import environment

TITLES = {
    "latency": ("MPI latency (ping-pong)", "µs"),
    "bandwidth": ("peak MPI bandwidth (stream)", "MB/s"),
    "allreduce": ("allreduce at the most processes", "µs"),
}


def _fig(v) -> str:
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "–"
    v = float(v)
    return f"{v:.3g}" if abs(v) < 1000 else f"{v:,.0f}"


def _ci(pair, digits: int = 3) -> str:
    lo, hi = pair
    if lo is None or hi is None or not (math.isfinite(lo) and math.isfinite(hi)):
        return ""
    return f"[{lo:.{digits}g}, {hi:.{digits}g}]"


def _bytes(n: int) -> str:
    return svg._label(n)


def _pval(p) -> str:
    return "" if p is None or p != p else f"{p:.2g}"


def _params(d) -> str:
    return ", ".join(f"{k}={written(v)}" for k, v in sorted((d or {}).items()) if k != "size")


def _ratio(r) -> str:
    return "" if r is None or r != r else f"{r:.3f}"


ENV = environment("scope.hub")
ENV.filters.update(fig=_fig, ci=_ci, bytes=_bytes, pval=_pval, params=_params, ratio=_ratio, kind=kind_text)


def render(name: str, **ctx) -> str:
    return ENV.get_template(name).render(version=__version__, figures=FIGURES, **ctx)


def clusters_page(rows: list[dict], base_url: str) -> str:
    rows = [dict(r) for r in rows]  # the list is kept for the API too: its sparklines drawn on copies
    for r in rows:
        for f in FIGURES:
            n = len(r.get(f"{f}_trend") or ())
            r[f"{f}_spark"] = svg.spark(
                r.get(f"{f}_trend") or [], f"{TITLES[f][0]} in its last {n} runs ({TITLES[f][1]})"
            )
    return render(
        "clusters.html.j2", title="Clusters", rows=rows, total_runs=sum(r["runs"] for r in rows), base_url=base_url
    )


MARKED = ("step", "temporary", "alarm")


def _mark(ch: dict) -> str:
    """A change as its chart marks it: its size, and what kind when it is not a step."""
    size = f"{ch['step'] * 100:+.0f} %"
    if ch["kind"] == "temporary":
        return f"{size} until run {ch['end_run']}"
    return f"alarm {size}" if ch["kind"] == "alarm" else size


def event_marks(started: list[str], known) -> list[tuple[int, str]]:
    """Announced events as a chart over runs marks them: (index of the first run started after
    the event, its text); those before the first run or after the last are not between runs."""
    out = []
    for e in sorted(known, key=lambda e: e["at_utc"]):
        i = bisect.bisect_left(started, e["at_utc"])
        if 0 < i < len(started):
            out.append((i, e["text"]))
    return out


def cluster_page(c: dict) -> str:
    charts = []
    for f in FIGURES:
        shown = [r for r in c["history"] if r[f]]
        vals = [(f"run {r['id']}", r[f], r[f"{f}_lo"], r[f"{f}_hi"]) for r in shown]  # runs named, not dates
        if vals:
            at = {r["id"]: i for i, r in enumerate(shown)}
            marks = [(at[ch["run"]], _mark(ch)) for ch in c.get("changes", ())
                     if ch["figure"] == f and ch["kind"] in MARKED and ch["run"] in at]  # fmt: skip
            title, unit = TITLES[f]
            chart = svg.series(vals, title, unit, marks, outlying([v for _, v, _, _ in vals]),
                               event_marks([r["started_utc"] for r in shown], c.get("events", ())))  # fmt: skip
            charts.append({"title": f"{title} ({unit}), each run with its interval; changes marked", "svg": chart})
    tests: dict[str, int] = {}
    for s in c.get("series", ()):
        tests[s["test"]] = tests.get(s["test"], 0) + 1
    return render("cluster.html.j2", title=f"Cluster {c['name']}", c=c, charts=charts, heat=heat_maps(c["history"]),
                  tests=sorted(tests.items()))  # fmt: skip


def series_name(s: dict) -> str:
    """A series as its picker lists it: size, ranks, parameters, and its kind when not measured."""
    bits = (["no size"] if s["size"] is None else []) + series.where(s)
    kind = "" if s["kind"] == "measured" else f" [{s['kind'][:24]}]"
    return " · ".join(bits) + kind + f" ({s['runs']} run{'s' if s['runs'] != 1 else ''})"


def series_page(name: str, every: list[dict], tests: list[str], test: str | None, picked=None, cut: int = 0,
                known=()) -> str:  # fmt: skip
    """The series picker (a test, then one of its series) and, once picked, that series' runs
    with their intervals and its changes, as the cluster page draws its headline figures."""
    test = test or (tests[0] if tests else None)
    options = [dict(s, name=series_name(s)) for s in every if s["test"] == test]
    chart, head, rows, changes = "", None, [], []
    if picked is not None:
        head, rows, changes = picked
        rows = [dict(r, n_launches=len(json.loads(r["launches"] or "[]"))) for r in rows]
        head = dict(head, name=series_name({**head, "runs": len(rows)}))
        at = {r["id"]: i for i, r in enumerate(rows)}
        marks = [(at[ch["run"]], _mark(ch)) for ch in changes if ch["kind"] in MARKED and ch["run"] in at]
        unit = "µs" if (head["unit"] or "us") == "us" else head["unit"]
        vals = [(f"run {r['id']}", r["median"], r["lo"], r["hi"]) for r in rows]
        said = event_marks([r["started_utc"] for r in rows], known)
        chart = svg.series(vals, f"{head['test']} {head['name']}", f"median ({unit})", marks,
                           outlying([r["median"] for r in rows]), said)  # fmt: skip
    return render(
        "series.html.j2",
        title=f"Cluster {name}: every series",
        cluster=name,
        tests=[(t, sum(1 for s in every if s["test"] == t)) for t in tests],
        test=test,
        options=options,
        head=head,
        rows=rows,
        changes=[c for c in changes if c["kind"] != "outlier"],
        chart=chart,
        cut=cut,
        limit=series.SERIES_LIMIT,
    )


def alerts_page(name: str, rows: list[dict], rules: list[dict], triage: dict) -> str:
    """A cluster's alerts, newest first, with their deliveries and triage, and the detector's
    precision as triage found it beside each rule's threshold."""
    return render("alerts.html.j2", title=f"Cluster {name}: alerts", cluster=name, rows=rows, rules=rules,
                  triage=triage)  # fmt: skip


def heat_maps(history: list[dict]) -> list[dict]:
    """Per collective, the newest run's median at each (processes, size) the cluster measured:
    a surface over message size and process count, time by colour."""
    cells: dict[str, dict[tuple[int, int], float]] = {}
    for r in history:  # oldest first: a newer run's cell replaces an older one's
        for test, procs, size, median in r["collectives"]:
            cells.setdefault(test, {})[(procs, size)] = median
    out = []
    for test, grid in sorted(cells.items()):
        procs = sorted({p for p, _ in grid})
        sizes = sorted({s for _, s in grid})
        lo, hi = min(grid.values()), max(grid.values())
        rows = [
            {
                "procs": p or "not given",  # an import names no process count
                "cells": [
                    {
                        "value": grid[(p, s)],
                        "colour": svg.colour(grid[(p, s)], lo, hi),
                        "ink": svg.ink(grid[(p, s)], lo, hi),
                    }
                    if (p, s) in grid
                    else None
                    for s in sizes
                ],
            }
            for p in procs
        ]
        out.append({"test": test, "sizes": sizes, "rows": rows})
    return out


def compare_page(a: str | None, b: str | None, names: list[str], ra=None, rb=None, result=None, error=None) -> str:
    charts, layer_rows, counts = [], [], {}
    if result:
        ca, cb = result["curves"]
        for key in [k for k in ca if k in cb][:12]:
            unit = "µs"
            charts.append(
                {
                    "title": f"{key}: A run {ra['id']} ({ra['cluster']}), B run {rb['id']} ({rb['cluster']})",
                    "svg": svg.curves([(f"A {ra['cluster']}", ca[key]), (f"B {rb['cluster']}", cb[key])], key, unit),
                }
            )
        la = {x["name"]: x for x in map(_layer, result["layers"][0])}
        lb = {x["name"]: x for x in map(_layer, result["layers"][1])}
        layer_rows = [
            {"name": n, "a": la.get(n, {}), "b": lb.get(n, {})} for n in [*la, *(n for n in lb if n not in la)]
        ]
        verdicts = [r["verdict"] for r in result["rows"]]
        counts = {"slower": verdicts.count("slower"), "faster": verdicts.count("faster")}
        counts["other"] = len(verdicts) - counts["slower"] - counts["faster"]
    return render(
        "compare.html.j2",
        title="Compare",
        a=a,
        b=b,
        names=names,
        ra=ra,
        rb=rb,
        result=result,
        error=error,
        charts=charts,
        layer_rows=layer_rows,
        counts=counts,
    )


def _layer(x) -> dict:
    return dataclasses.asdict(x) if dataclasses.is_dataclass(x) else dict(x)


def message_page(title: str, message: str, login: bool = False) -> str:
    return render("message.html.j2", title=title, message=message, login=login)
