"""`scope tune --report FILE`: per collective and process count, every algorithm's curve with
the chosen algorithm's band behind it, and the choices as a table; a page of its own, like the
run report (self-contained, no network)."""

from __future__ import annotations

from pathlib import Path

from markupsafe import Markup

from scope.analysis.tuning import DEFAULT, Band, Choice
from scope.model import Point
from scope.views.fmt import html_text, num, size
from scope.views.page import CSS
from scope.views.plots import pyplot, svg_img


def figure(coll: str, procs: int, points: dict[str, list[Point]], bands: list[Band]) -> str:
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7, 3.8))
    colours = {}
    for alg, pts in sorted(points.items()):
        mine = sorted((p for p in pts if p.procs == procs and p.size and p.median), key=lambda p: p.size)
        if mine:
            style = dict(lw=2.2, color="black") if alg == DEFAULT else dict(lw=1.2)
            (line,) = ax.loglog([p.size for p in mine], [p.median for p in mine], "o-", ms=3, label=alg, **style)
            colours[alg] = line.get_color()
    for b in (b for b in bands if b.procs == procs):
        ax.axvspan(b.lo / 1.41, b.hi * 1.41, color=colours.get(b.algorithm, "grey"), alpha=0.12, lw=0)
        ax.text((b.lo * b.hi) ** 0.5, 0.02, f"use: {b.algorithm}", transform=ax.get_xaxis_transform(), ha="center",
                va="bottom", fontsize=7)  # fmt: skip
    ax.set_xlabel("message size (bytes)")
    ax.set_ylabel("time (µs)")
    ax.set_title(f"coll.{coll}, {procs} processes: every algorithm; shaded, the one to use")
    ax.legend(fontsize=7, ncols=2)
    return svg_img(fig, f"coll.{coll} algorithms at {procs} processes")


def write_report(path: str, sections: list[tuple[str, dict[str, list[Point]], list[Choice], list[Band]]]) -> Path:
    """A section a collective (and placement): its points by algorithm, the choices, their bands
    (analysis/tuning.py)."""
    body = []
    for coll, points, choices, bands in sections:
        body.append(f"<section><h2>coll.{html_text(coll)}</h2>")
        for procs in sorted({c.procs for c in choices}):
            body.append(figure(coll, procs, points, bands))
        rows = "".join(
            f"<tr><td>{c.procs}</td><td>{size(c.size)}</td><td>{num(c.default_us)}</td><td class=l>{c.fastest}</td>"
            f"<td>{num(c.fastest_us)}</td><td>{c.ratio:.3f}</td><td class=l>{c.verdict}</td>"
            f"<td class=l><b>{c.algorithm}</b></td></tr>"
            for c in choices
        )
        body.append(
            "<table><tr><th>procs</th><th>size</th><th>default (µs)</th><th class=l>fastest</th><th>its (µs)</th>"
            f"<th>ratio</th><th class=l>verdict</th><th class=l>use</th></tr>{rows}</table></section>"
        )
    page = (
        f"<!doctype html><html><head><meta charset=utf-8><title>scope tune</title><style>{CSS}</style></head>"
        "<body><header><h1>Collective tuning</h1><p>An algorithm replaces the library's default (auto) only where "
        "it is faster across launches (Welch on launch medians, as scope compare).</p></header><main>"
        + "".join(body)
        + "</main></body></html>"
    )
    out = Path(path)
    out.write_text(str(Markup(page)))
    return out
