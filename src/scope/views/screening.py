"""Cluster screening rendered (analysis/screen.py computes it): the flagged hosts and links
first, each beside the typical figure, then the host x host matrix where it fits the terminal;
in the report a heat map of the matrix (host order, a colour scale in µs) and a histogram of
the pair figures."""

from __future__ import annotations

import os

import numpy as np
from markupsafe import Markup

from scope.analysis.node_screen import NodeScreen, Place
from scope.analysis.screen import Flag, Screen
from scope.views.fmt import html_text, num, safe, size
from scope.views.plots import pyplot, svg_img

MATRIX_WIDTH = 9  # characters a matrix cell takes


def title(sc: Screen) -> str:
    sampled = sc.steps_measured < sc.steps
    steps = f"{sc.steps_measured:,} of {sc.steps:,} steps (a sample)" if sampled else f"{sc.steps:,} steps"
    return (
        f"{sc.test} {size(sc.size)} ({sc.mode}): {len(sc.hosts)} hosts, {sc.ranks} ranks, "
        f"{sc.pairs_measured:,} of {sc.pairs_expected:,} rank pairs in {steps}, "
        f"{sc.launches} launch{'es' if sc.launches != 1 else ''}"
    )


def _rate(sc: Screen, us: float) -> str:
    r = sc.mbps(us)
    return f" ({num(r)} MB/s)" if r else ""


def flag_line(sc: Screen, f: Flag) -> str:
    what = {"host": "host", "link": "link", "within": "within host"}[f.kind]
    return (
        f"{what} {' <-> '.join(f.hosts)}: {num(f.figure_us)} us{_rate(sc, f.figure_us)}, "
        f"{f.ratio:.2f}x the typical {num(f.typical_us)} us{_rate(sc, f.typical_us)}; "
        f"interval {num(f.lo_us)}-{num(f.hi_us)} us, above the threshold {num(f.threshold_us)} us"
        + (f" (median of its {f.links} links)" if f.kind == "host" else "")
    )


def rule_line(sc: Screen) -> str:
    among = "; ".join(
        f"{j.what}: {j.count}, typical {num(j.typical_us)} us, MAD {num(j.mad_us)} us, "
        f"threshold {num(j.threshold_us)} us"
        for j in sc.judged
    )
    return "flagged when the whole interval lies above max(1.25 x typical, typical + 4 x 1.4826 x MAD) of its peers" + (
        f" ({among})" if among else " (too few hosts or links to judge)"
    )


def matrix_lines(sc: Screen, columns: int) -> list[str]:
    H = len(sc.hosts)
    if (H + 1) * MATRIX_WIDTH + 2 > columns:
        return [f"  host x host matrix: {H} hosts do not fit {columns} columns (scope report draws it)"]
    short = [h[-(MATRIX_WIDTH - 1) :] for h in sc.hosts]
    out = [
        "  host x host, one-way us (diagonal: pairs within a host):",
        "  " + " " * MATRIX_WIDTH + "".join(f"{h:>{MATRIX_WIDTH}}" for h in short),
    ]
    for i, h in enumerate(short):
        cells = "".join(f"{'-' if np.isnan(v) else num(v):>{MATRIX_WIDTH}}" for v in sc.matrix_us[i])
        out.append(f"  {h:>{MATRIX_WIDTH}}{cells}")
    return out


def node_title(ns: NodeScreen) -> str:
    setting = ", ".join(f"{k}={v}" for k, v in ns.params.items())
    return f"{ns.test}{f' ({setting})' if setting else ''} on every host at once: {len(ns.hosts)} hosts"


def node_flag_line(f: Flag) -> str:
    return (
        f"host {f.hosts[0]}: {num(f.figure_us)} us a repetition, {f.ratio:.2f}x the typical {num(f.typical_us)} us; "
        f"interval {num(f.lo_us)}-{num(f.hi_us)} us, above the threshold {num(f.threshold_us)} us"
    )


def node_lines(nodes: list[NodeScreen]) -> list[str]:
    out = []
    for ns in nodes:
        out.append(f"  {node_title(ns)}")
        out += [f"    FLAGGED {node_flag_line(f)}" for f in ns.flags] or ["    nothing flagged"]
        if ns.no_interval:
            out.append(
                f"    {ns.no_interval} of {len(ns.hosts)} hosts not judged: fewer than 2 repetitions a rank, "
                "no interval (give it a larger --budget)"
            )
        if ns.judged:
            j = ns.judged
            out.append(
                f"    hosts: {j.count}, typical {num(j.typical_us)} us, MAD {num(j.mad_us)} us, "
                f"threshold {num(j.threshold_us)} us (the rule above)"
            )
    return out


def place_line(p: Place) -> str:
    said = "; ".join(
        f"{e.test}{f' {size(e.size)}' if e.size is not None else ''}: {e.kind} {' <-> '.join(e.where)} "
        f"{e.ratio:.2f}x typical"
        for e in p.evidence
    )
    weak = f"; WEAK evidence: {safe(p.weak)}" if p.weak else ""
    return f"{p.kind} {' <-> '.join(p.where)} ({said}){weak}"


def screen_lines(screens: list[Screen], nodes: list[NodeScreen] = (), places: list[Place] = ()) -> list[str]:
    if not screens and not nodes:
        return []
    columns = int(os.environ.get("COLUMNS") or 100)
    out = ["", "Screening (every pair of ranks: hosts and links slower than their peers)"]
    out += [f"  SLOW {place_line(p)}" for p in places] or ["  nothing flagged by any screen"]
    for sc in screens:
        out.append(f"  {title(sc)}: typical pair {num(sc.typical_us)} us{_rate(sc, sc.typical_us)}")
        out += [f"    FLAGGED {flag_line(sc, f)}" for f in sc.flags] or ["    nothing flagged"]
        if sc.weak and sc.flags:
            out.append(f"    weak: {safe(sc.weak)}: these flags are no proof of a slow part")
        out.append(f"    {rule_line(sc)}")
        out += ["  " + x for x in matrix_lines(sc, columns - 2)]
    return out + node_lines(list(nodes))


def screen_figure(sc: Screen) -> str:
    """The heat map of the host matrix beside a histogram of every rank pair's figure."""
    plt = pyplot()
    H = len(sc.hosts)
    fig, (ax_m, ax_h) = plt.subplots(1, 2, figsize=(11, 4.2), gridspec_kw={"width_ratios": [1.2, 1], "wspace": 0.5})
    m = np.ma.masked_invalid(sc.matrix_us)
    im = ax_m.imshow(m, cmap="viridis", interpolation="nearest", aspect="equal")
    ax_m.grid(False)
    cb = fig.colorbar(im, ax=ax_m, fraction=0.046, pad=0.04)
    cb.set_label("one-way time (µs)")
    if H <= 32:
        ax_m.set_xticks(range(H), sc.hosts, rotation=90, fontsize=7)
        ax_m.set_yticks(range(H), sc.hosts, fontsize=7)
    else:
        ax_m.set_xlabel("host (in rank order)")
        ax_m.set_ylabel("host (in rank order)")
    for f in sc.flags:
        idx = [sc.hosts.index(h) for h in f.hosts]
        if f.kind == "link":
            for i, j in ((idx[0], idx[1]), (idx[1], idx[0])):
                ax_m.add_patch(plt.Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, ec="#e03020", lw=2))
        else:
            i = idx[0]
            ax_m.add_patch(plt.Rectangle((-0.5, i - 0.5), H, 1, fill=False, ec="#e03020", lw=2))
    ax_m.set_title(f"host x host, one-way µs ({size(sc.size)})", fontsize=9)
    x = sc.pair_us[np.isfinite(sc.pair_us) & (sc.pair_us > 0)]
    if x.size:
        lo, hi = x.min(), x.max()
        wide = hi > lo * 3  # a log scale only where the figures span one
        bins = np.geomspace(lo, hi * 1.0001, 40) if wide else 30
        ax_h.hist(x, bins=bins, color="#3b6fb6", alpha=0.85, histtype="stepfilled")
        if wide:
            ax_h.set_xscale("log")
        ax_h.axvline(sc.typical_us, color="#d04020", lw=1, label=f"typical {num(sc.typical_us)} µs")
        for j in sc.judged[:1]:
            ax_h.axvline(j.threshold_us, color="#e03020", lw=1, ls="--", label=f"threshold {num(j.threshold_us)} µs")
        ax_h.legend(fontsize=7)
    ax_h.set_xlabel("one-way time of a rank pair (µs)")
    ax_h.set_ylabel("rank pairs")
    ax_h.set_title(f"{x.size:,} rank pairs", fontsize=9)
    return svg_img(fig, f"{sc.test} {size(sc.size)} host matrix and pair histogram")


def flag_table(sc: Screen) -> str:
    """The flagged list as an HTML table (escaped), first in the test's section."""
    rate = html_text(_rate(sc, sc.typical_us))
    head = f"<p><b>{html_text(title(sc))}</b>: typical pair {num(sc.typical_us)} µs{rate}</p>"
    if not sc.flags:
        return head + f"<p>Nothing flagged. {html_text(rule_line(sc))}.</p>"
    rows = "".join(
        f"<tr><td>{html_text(f.kind)}</td><td>{html_text(' ↔ '.join(f.hosts))}</td><td>{num(f.figure_us)}</td>"
        f"<td>{num(f.lo_us)}–{num(f.hi_us)}</td><td>{num(f.typical_us)}</td><td>{f.ratio:.2f}×</td>"
        f"<td>{html_text(_rate(sc, f.figure_us).strip(' ()') or '-')}</td></tr>"
        for f in sc.flags
    )
    return (
        head
        + "<table><tr><th>flagged</th><th>where</th><th>one-way µs</th><th>interval µs</th><th>typical µs</th>"
        + f"<th>× typical</th><th>rate</th></tr>{rows}</table><p>{html_text(rule_line(sc))}.</p>"
        + (f"<p><b>Weak evidence:</b> {html_text(sc.weak)}.</p>" if sc.weak else "")
    )


def node_figure(ns: NodeScreen) -> str:
    """Each host's median time a repetition with its interval, the threshold drawn."""
    plt = pyplot()
    H = len(ns.hosts)
    fig, ax = plt.subplots(figsize=(min(11, 2 + 0.35 * H), 3))
    y = np.asarray(ns.figure_us)
    err = np.vstack([y - np.asarray(ns.lo_us), np.asarray(ns.hi_us) - y])
    flagged = {f.hosts[0] for f in ns.flags}
    colours = ["#e03020" if h in flagged else "#3b6fb6" for h in ns.hosts]
    ax.bar(range(H), y, yerr=err, color=colours, capsize=2)
    if ns.judged:
        ax.axhline(ns.judged.threshold_us, color="#e03020", ls="--", lw=1, label="threshold")
        ax.axhline(ns.judged.typical_us, color="#333333", lw=1, label="typical")
        ax.legend(fontsize=7)
    if H <= 32:
        ax.set_xticks(range(H), ns.hosts, rotation=90, fontsize=7)
    ax.set_ylabel("time a repetition (µs)")
    ax.set_title(node_title(ns), fontsize=9)
    return svg_img(fig, f"{ns.test} per host")


def node_table(ns: NodeScreen) -> str:
    unjudged = (
        f" {ns.no_interval} of {len(ns.hosts)} hosts not judged: fewer than 2 repetitions a rank, no interval "
        "(give it a larger --budget)."
        if ns.no_interval
        else ""
    )
    if not ns.flags:
        return f"<p><b>{html_text(node_title(ns))}</b>: nothing flagged.{html_text(unjudged)}</p>"
    rows = "".join(f"<li>{html_text(node_flag_line(f))}</li>" for f in ns.flags)
    return f"<p><b>{html_text(node_title(ns))}</b>: flagged</p><ul>{rows}</ul>"


def places_list(places: list[Place]) -> str:
    """The run's flagged list, all screens together (first in the report's screening)."""
    if not places:
        return "<p><b>Flagged, all screens together:</b> nothing.</p>"
    items = "".join(f"<li>{html_text(place_line(p))}</li>" for p in places)
    return f"<p><b>Flagged, all screens together:</b></p><ul>{items}</ul>"


def report_parts(
    screens: list[Screen], test: str, nodes: list[NodeScreen] = (), places: list[Place] | None = None
) -> list[Markup]:
    """places: the run's flagged list, given to the first test that shows a screen."""
    out = [Markup(places_list(places))] if places is not None else []
    for sc in screens:
        if sc.test == test:
            out += [Markup(flag_table(sc)), Markup(screen_figure(sc))]
    for ns in nodes:  # the block's own node tests, and the canary's probes on the first block that screens
        out += [Markup(node_table(ns)), Markup(node_figure(ns))]
    return out
