"""scope history's views: the changes newest first, then every series as a sparkline; and the
JSON document (docs/json.md).  They render what analysis/history.py found."""

from __future__ import annotations

import math

from scope.analysis.history import Change, Series
from scope.views.fmt import safe, table


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


def changes_table(changes: list[Change]) -> str:
    if not changes:
        return "No change: every series stays within what its runs' launches differ by."
    rows = []
    for c in changes:
        o = c.series.obs[c.index]
        if c.kind == "outlier":
            step, ci, q = _pct(c.step), "", ""
        else:
            step, ci, q = _pct(c.step), f"[{c.step_lo * 100:+.1f}, {c.step_hi * 100:+.1f}]", f"{c.q_value:.2g}"
        rows.append([str(o.run), o.started[:10], c.kind, safe(c.series.name), step, ci, q, safe(_changed(c))])
    head = ["run", "date", "kind", "series", "step", "95 % CI (%)", "q", "what changed"]
    return "Changes, newest first (step: the level after against before; q: its FDR-adjusted p)\n" + table(
        head, rows, "rllllrrl"
    )


def series_table(series: list[Series]) -> str:
    rows = []
    for s in sorted(series, key=lambda s: s.name):
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
