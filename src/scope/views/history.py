"""scope history's views: the changes newest first, then every series as a sparkline; and the
JSON document (docs/json.md).  They render what analysis/history.py found."""

from __future__ import annotations

import math

from scope.analysis.history import Change, Series
from scope.version import __version__
from scope.views import svg
from scope.views.fmt import safe, table
from scope.views.templating import environment

MOST_CHARTS = 60  # a page of charts a reader scrolls; the rest are in --json


def sparkline(values: list[float]) -> str:
    """A series in eight heights (log scale): how it went, in one line of text."""
    bars = "▁▂▃▄▅▆▇█"
    y = [math.log(v) for v in values]
    lo, hi = min(y), max(y)
    if hi - lo < 1e-12:
        return bars[0] * len(y)
    return "".join(bars[min(7, int((v - lo) / (hi - lo) * 8))] for v in y)


def _pct(x: float) -> str:
    return f"{x * 100:+.1f} %"


def _changed(c: Change) -> str:
    said = [f"{k}: {a} -> {b}" for k, a, b in ((k, *v) for k, v in c.changed.items())]
    if c.machine:
        said.append(f"machine (canary): {c.machine}")
    return "; ".join(said) or "nothing SCOPE records"


def kind_text(kind: str, end_run: int | None = None) -> str:
    """A change's kind as every view names it (this one's tables and page, the hub's cluster page)."""
    if kind == "temporary":
        return f"temporary, back at run {end_run}" if end_run is not None else "temporary"
    return {"alarm": "alarm (newest run)", "faster": "faster (newest run)"}.get(kind, kind)


def _kind(c: Change) -> str:
    return kind_text(c.kind, c.end_run)


def _q(c: Change) -> str:
    if c.kind == "outlier":
        return ""
    return f"p {c.p_value:.2g}" if c.kind in ("alarm", "faster", "drift") else f"{c.q_value:.2g}"


def changes_table(changes: list[Change]) -> str:
    if not changes:
        return "No change: every series stays within what its runs' launches differ by."
    rows = []
    for c in changes:
        o = c.series.obs[c.index]
        ci = "" if c.kind == "outlier" else f"[{c.step_lo * 100:+.1f}, {c.step_hi * 100:+.1f}]"
        rows.append([str(o.run), o.started[:10], _kind(c), safe(c.series.name), _pct(c.step), ci, _q(c),
                     safe(_changed(c))])  # fmt: skip
    head = ["run", "date", "kind", "series", "step", "95 % CI (%)", "q", "what changed"]
    return (
        "Changes, newest first (step: the level after against before; q: its series' FDR-adjusted p; an alarm's"
        " and a drift's own p)\n" + table(head, rows, "rllllrrl")
    )


def alarm_line(c: Change, limit: float) -> str:
    """Why --check fails on a change, in one line: which kind of slowdown, how large, since when."""
    size = f"{c.step * 100:+.1f} % [{c.step_lo * 100:+.1f}, {c.step_hi * 100:+.1f}]"
    past = f"past --max-slowdown {limit * 100:g} %"
    if c.kind == "alarm":
        return f"{safe(c.series.name)}: the newest run (run {c.run}) is slower than the history allows: {size}, {past}"
    if c.kind == "drift":
        return f"{safe(c.series.name)}: drifted {size} over its runs, {past}"
    return f"{safe(c.series.name)} is {size} since run {c.run}, {past}"


def series_table(series: list[Series]) -> str:
    rows = []
    for s in sorted(series, key=lambda s: (s.test, s.kind, sorted(s.params.items()), s.size or 0)):
        first, last = s.obs[0].median, s.obs[-1].median
        rows.append(
            [safe(s.name), str(len(s.obs)), sparkline([o.median for o in s.obs]), f"{first:.3g}", f"{last:.3g}", s.unit]
        )
    return "Series (oldest to newest run)\n" + table(
        ["series", "runs", "history", "first", "newest", "unit"], rows, "lrlrrl"
    )


def history_doc(series: list[Series], changes: list[Change]) -> dict:
    return {
        "format": "scope-history",
        "series": [
            {
                "test": s.test,
                "params": s.params,
                "size": s.size,
                "unit": s.unit,
                "kind": s.kind,
                "runs": [
                    {"run": o.run, "started_utc": o.started, "median": o.median, "ci": [o.ci_lo, o.ci_hi],
                     "launches": len(o.launches)}
                    for o in s.obs
                ],
            }
            for s in series
        ],
        "changes": [c.as_dict() for c in changes],
    }  # fmt: skip


def history_page(series: list[Series], changes: list[Change], made: str) -> str:
    """One self-contained HTML page: the changes, and each series drawn with its interval band
    and its changes marked (those with a change first)."""
    marks: dict[int, list] = {}
    for c in changes:
        if c.kind != "outlier":
            marks.setdefault(id(c.series), []).append((c.index, f"{c.step * 100:+.0f} %"))
    # those with a change first, then by test, setting and size in order (8 B, 1 KiB, 64 KiB)
    ordered = sorted(series, key=lambda s: (id(s) not in marks, s.test, s.kind, sorted(s.params.items()), s.size or 0))
    shown = []
    for s in ordered[:MOST_CHARTS]:
        vals = [(f"run {o.run}", o.median, o.ci_lo, o.ci_hi) for o in s.obs]
        unit = "µs" if s.unit == "us" else s.unit
        far = {c.index for c in changes if c.kind == "outlier" and c.series is s}  # the detector's outliers
        shown.append({"title": f"{s.name} ({unit})", "svg": svg.series(vals, s.name, unit, marks.get(id(s), ()), far)})
    rows = [
        {
            "run": c.run,
            "date": c.series.obs[c.index].started[:10],
            "kind": _kind(c),
            "series": c.series.name,
            "step": _pct(c.step),
            "ci": "" if c.kind == "outlier" else f"[{c.step_lo * 100:+.1f}, {c.step_hi * 100:+.1f}] %",
            "q": _q(c),
            "changed": _changed(c),
        }
        for c in changes
    ]
    starts = sorted(o.started for s in series for o in s.obs)
    return (
        environment("scope.views")
        .get_template("history.html.j2")
        .render(
            title="SCOPE history",
            version=__version__,
            made=made,
            series_count=len(series),
            run_count=len({o.run for s in series for o in s.obs}),
            first=starts[0][:10],
            last=starts[-1][:10],
            changes=rows,
            shown=shown,
            hidden=max(0, len(series) - MOST_CHARTS),
        )
    )
