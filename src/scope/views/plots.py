"""The report's figures (matplotlib, SVG as data URIs so the HTML needs no network): time and
bandwidth against size with CI bands and the fitted models, collectives against process
count and per rank, and sample distributions.  They draw the facts; they fit nothing."""

from __future__ import annotations

import math

import numpy as np

from scope.analysis.facts import RunFacts, SeriesFacts
from scope.analysis.kernels import PHASES
from scope.model import Point
from scope.views import drawing
from scope.views.figfit import fit_labels, fit_legends
from scope.views.fmt import num, params_label, size, spread


def pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams.update(
        {
            "svg.fonttype": "none",
            "svg.hashsalt": "scope",
            # a report holds its figures open until they are drawn together (views/drawing.py)
            "figure.max_open_warning": 0,
            "font.size": 9,
            "axes.grid": True,
            "grid.alpha": 0.3,
            "axes.spines.top": False,
            "axes.spines.right": False,
        }
    )
    return plt


def sizes_on(axis) -> None:
    """Sizes as people read them (4 KiB, 1 MiB) on a log-2 axis: also spares the mathtext
    parser matplotlib's 2^k labels go through, most of a figure's cost."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    axis.set_major_formatter(FuncFormatter(lambda v, _: size(v) if v >= 1 else ""))
    axis.set_minor_formatter(NullFormatter())
    axis.set_major_locator(LogLocator(base=2, numticks=8))  # 4 B to 4 MiB: every other power, not 21 labels


def measured_ticks(axis, sizes) -> None:
    """A log-2 size axis with few sizes measured: a tick at each (one size is one tick with room
    on both sides, not an axis with a single unlabelled mark), but none nearer its neighbour
    than a sixth of the span (issue 70: 512 KiB beside 64 KiB printed as "64 KiB512 KiB")."""
    distinct = sorted({float(x) for x in sizes if x and x > 0})
    if not distinct or len(distinct) > 6:
        return
    span = math.log2(distinct[-1] / distinct[0])
    kept = [distinct[0]]
    for x in distinct[1:]:
        if math.log2(x / kept[-1]) >= max(1.0, span / 6):
            kept.append(x)
    distinct = kept
    axis.set_ticks(distinct)
    if len(distinct) == 1:
        x = distinct[0]
        axis.axes.set_xlim(x / 2, x * 2)


def no_offset(axis) -> None:
    """Plain numbers on a linear axis: no "1e6" or "+1.234e3" offset text beside it."""
    from matplotlib.ticker import ScalarFormatter

    f = ScalarFormatter(useOffset=False)
    f.set_scientific(False)
    axis.set_major_formatter(f)


def plain_on(axis) -> None:
    """Plain numbers (0.5, 10, 1000) on a log-10 axis, not 10^k."""
    from matplotlib.ticker import FuncFormatter, NullFormatter

    axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    axis.set_minor_formatter(NullFormatter())


def svg_img(fig, alt: str) -> str:
    """The figure as an <img> (views/drawing.py: drawn now, or with the rest of a report's)."""
    fit_legends(fig)
    fit_labels(fig)
    return drawing.svg(fig, alt)


# A Hockney line is drawn only where it is a model of the points: within this of each
FIT_DRAWN_MAX = 0.25

# Points drawn per curve at most: a million-row import would make an SVG of a million
# markers (a minute to write, megabytes to open) that no eye can tell from a thousand.
MAX_DRAWN = 512


def _time_curve(ax_t, ax_b, c, label: str, f: SeriesFacts) -> None:
    pts = sorted((p for p in f.series.points if p.size is not None), key=lambda p: p.size)
    if not pts:
        return
    if len(pts) > MAX_DRAWN:
        label = f"{label} ({MAX_DRAWN:,} of {len(pts):,} points drawn, evenly spread over the sizes)"
        pts = [pts[i] for i in spread(len(pts), MAX_DRAWN)]
    xs = np.array([max(p.size, 0.5) for p in pts], dtype=float)  # 0 B drawn at 0.5 on a log axis
    med = np.array([p.median for p in pts], dtype=float)
    lo = np.array([p.ci_lo if p.ci_lo is not None else p.median for p in pts], dtype=float)
    hi = np.array([p.ci_hi if p.ci_hi is not None else p.median for p in pts], dtype=float)
    ax_t.plot(xs, med, "o-", ms=3, lw=1.2, color=c, label=label)
    ax_t.fill_between(xs, lo, hi, color=c, alpha=0.2, lw=0)
    fit = f.hockney
    off = max((abs(r) for r in f.residuals.values() if r is not None), default=0.0)
    if fit and off > FIT_DRAWN_MAX:  # a line that misses the points by this much explains nothing
        ax_t.plot([], [], " ", label=f"Hockney fit not drawn: off by up to {off * 100:.0f} % at a size")
        fit = None
    if fit:
        grid = np.geomspace(max(xs.min(), 0.5), xs.max(), 200)
        model_label = f"Hockney t0={num(fit.t0_us)} us, r∞={num(fit.rinf_MBps)} MB/s"
        ax_t.plot(grid, fit.t0_us + grid / fit.rinf_MBps, "--", lw=1, color=c, alpha=0.8, label=model_label)
    if f.piecewise:
        for k, x in enumerate(f.piecewise.switch_positions()):
            a, b = f.piecewise.switches[k]
            ax_t.axvline(x, color=c, ls=":", lw=1, alpha=0.9, label=f"switch {size(a)}→{size(b)}")
            ax_b.axvline(x, color=c, ls=":", lw=1, alpha=0.9)
    nz = [p for p in pts if p.size and p.median]
    if not nz:
        return
    bx = np.array([p.size for p in nz], dtype=float)
    bw = np.array([p.bandwidth_at(p.median) for p in nz], dtype=float)  # None (no bytes) is NaN: not drawn
    bw_lo, bw_hi = np.array([p.bandwidth_interval for p in nz], dtype=float).T
    ax_b.plot(bx, bw, "o-", ms=3, lw=1.2, color=c, label=label)
    ax_b.fill_between(bx, bw_lo, bw_hi, color=c, alpha=0.2, lw=0)
    if fit:
        grid = np.geomspace(bx.min(), bx.max(), 200)
        credit = nz[-1].bytes_per_op / nz[-1].size
        ax_b.plot(grid, credit * grid / (fit.t0_us + grid / fit.rinf_MBps), "--", lw=1, color=c, alpha=0.8)


def test_figure(test: str, groups: list[tuple[str, SeriesFacts]]) -> str:
    """Time and bandwidth against size, log axes, CI bands, the Hockney model over the points."""
    plt = pyplot()
    fig, (ax_t, ax_b) = plt.subplots(1, 2, figsize=(11, 3.8))
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for i, (label, f) in enumerate(groups):
        _time_curve(ax_t, ax_b, colors[i % len(colors)], label, f)
    sizes = [max(p.size, 0.5) for _, f in groups for p in f.series.points if p.size is not None]
    for ax in (ax_t, ax_b):
        ax.set_xscale("log", base=2)
        ax.set_xlabel("message size")
        measured_ticks(ax.xaxis, sizes)
        sizes_on(ax.xaxis)
    no_offset(ax_b.yaxis)
    ax_t.set_yscale("log")
    plain_on(ax_t.yaxis)
    ax_t.set_ylabel("time (µs)")
    ax_t.set_title(f"{test}: time, median with 95 % CI")
    ax_b.set_ylabel("bandwidth (MB/s = 10⁶ B/s)")
    ax_b.set_title(f"{test}: bandwidth")
    ax_t.legend(fontsize=7, loc="upper left")
    return svg_img(fig, f"{test} time and bandwidth against size")


RANKS_DRAWN = 64  # ranks whose own times a collective's figure draws, at most


def collective_figure(test: str, label: str, pts: list[Point]) -> str | None:
    """Time against process count per size, and each rank's own time (box plot) at the
    largest process count and middle size, from the per-rank data the record keeps."""
    pts = [p for p in pts if p.window is not None and p.window.end_us and p.median]
    if not pts:
        return None
    plt = pyplot()
    fig, (ax_p, ax_r) = plt.subplots(1, 2, figsize=(11, 3.4))
    _against_procs(ax_p, test, pts)
    top = max(p.procs for p in pts)
    cand = [p for p in pts if p.procs == top]
    p = cand[len(cand) // 2]
    # at most RANKS_DRAWN boxes, evenly spread over the ranks: 16,384 boxes and their labels took
    # 110 s and 2 GB of a report (issue 55), and no reader tells them apart
    n = len(p.window.start_us)
    ranks = spread(n, RANKS_DRAWN)
    own = [[e - s for s, e in zip(p.window.start_us[r], p.window.end_us[r])] for r in ranks]
    if own and own[0]:
        ax_r.boxplot(own, showfliers=False)
        ax_r.set_xticks(range(1, len(own) + 1), [str(r) for r in ranks], fontsize=7 if len(ranks) > 16 else None)
    ax_r.set_xlabel("rank" if len(ranks) == n else f"rank ({len(ranks)} of {n:,}, evenly spread)")
    ax_r.set_ylabel("own time (µs)")
    title = f"{test}: each rank's own time, {size(p.size)}, {top} processes ({label.split(':')[0]})"
    ax_r.set_title(title, fontsize=9)
    return svg_img(fig, f"{test} against process count and per rank")


def _against_procs(ax, test: str, pts: list[Point]) -> None:
    """Time against process count, a line a size; over one process count (an axis from 1.9 to
    2.1 says nothing) time against message size at that count instead."""
    counts = sorted({p.procs for p in pts})
    sized = sorted((p for p in pts if p.size), key=lambda p: p.size)
    if len(counts) == 1 and len(sized) >= 2:
        ax.plot([p.size for p in sized], [p.median for p in sized], "o-", ms=3)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        sizes_on(ax.xaxis)
        plain_on(ax.yaxis)
        ax.set_xlabel("message size")
        ax.set_ylabel("time (µs)")
        ax.set_title(f"{test}: against message size, {counts[0]} processes", fontsize=9)
        return
    by_size: dict = {}
    for p in pts:
        by_size.setdefault(p.size, []).append((p.procs, p.median))
    for n, vals in sorted(by_size.items(), key=lambda kv: kv[0] or 0):
        vals.sort()
        ax.plot([v[0] for v in vals], [v[1] for v in vals], "o-", ms=3, label=size(n))
    if len(counts) == 1:  # one count and one size: a single point, its count the only tick
        ax.set_xticks(counts)
    ax.set_xlabel("processes")
    ax.set_ylabel("time (µs)")
    ax.set_title(f"{test}: against process count", fontsize=9)
    ax.legend(fontsize=7, title="size", title_fontsize=7)


def distribution_figure(test: str, label: str, pts: list[Point]) -> str | None:
    """Histograms of the raw samples at the smallest, a middle and the largest size."""
    by_size = sorted(pts, key=lambda p: p.size or 0)
    if not by_size:
        return None
    # only the three drawn are read: a point's samples are a query of their own
    picks = [by_size[0], by_size[len(by_size) // 2], by_size[-1]]
    picks = [p for p in {p.size: p for p in picks}.values() if p.samples]
    if not picks:
        return None
    plt = pyplot()
    from matplotlib.ticker import LogLocator

    fig, axes = plt.subplots(1, len(picks), figsize=(11, 2.6), squeeze=False)
    for ax, p in zip(axes[0], picks):
        x = np.asarray(p.samples)
        x = x[np.isfinite(x) & (x > 0)]
        if not len(x):
            continue
        # every sample, the tail too: bins even on a log scale, so a tail 100x the median is
        # drawn beside the body instead of cut off or squeezing it into one bin
        lo, hi = x.min(), x.max()
        bins = np.geomspace(lo, hi * 1.0001, 60) if hi > lo * 1.05 else 30
        ax.hist(x, bins=bins, color="#3b6fb6", alpha=0.85, histtype="stepfilled")  # one outline, not 60 bars
        if hi > lo * 1.05:
            ax.set_xscale("log")
            plain_on(ax.xaxis)
            if hi < lo * 100:  # a few labels in a narrow range, not the one power of ten in it
                subs = (1.0, 2.0, 3.0, 5.0, 7.0) if hi < lo * 10 else (1.0, 2.0, 5.0)
                ax.xaxis.set_major_locator(LogLocator(subs=subs))
        ax.axvline(p.median, color="#d04020", lw=1)
        tail = f", max {num(hi)} µs" if hi > 2 * p.median else ""
        ax.set_title(f"{size(p.size)}: n={len(x)}, median {num(p.median)} µs{tail}", fontsize=8)
        ax.set_xlabel("time (µs)")
    axes[0][0].set_ylabel("samples")
    fig.suptitle(f"{test} — {label}: distribution of samples", fontsize=9, y=1.08)
    return svg_img(fig, f"{test} distributions")


def scalability_figure(facts: RunFacts, i: int) -> str | None:
    """Predicted time against process count (1 .. 10^4) with the measured points on it."""
    sc, preds = facts.scaling[i], facts.curves[i]
    if not preds:
        return None
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6, 3.4))
    ax.loglog([p.procs for p in preds], [p.total_us for p in preds], "-", lw=1.2, label="predicted T")
    ax.loglog([p.procs for p in preds], [p.comp_us for p in preds], ":", lw=1, label="predicted T_comp")
    ax.loglog([p.procs for p in preds], [max(p.comm_us, 1e-3) for p in preds], "--", lw=1, label="predicted T_comm")
    ax.loglog([r.procs for r in sc.rows], [r.median_us for r in sc.rows], "o", ms=5, label="measured")
    ax.set_xlabel("processes")
    ax.set_ylabel("time (µs)")
    label = params_label(sc.setting)
    ax.set_title(f"{sc.test} {label}")
    ax.legend(fontsize=8)
    return svg_img(fig, f"predicted scalability of {sc.test} {label}")


def phases_figure(facts: RunFacts, test: str, setting: dict) -> str | None:
    """Every rank's phases, stacked, at each process count of one application setting: where
    the time goes and how evenly."""
    ks = sorted((k for k in facts.kernels if k.test == test and k.setting == setting), key=lambda k: k.procs)
    if not ks:
        return None
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 3.2))
    labels, x = [], 0
    ticks = []
    for k in ks:
        for r in range(len(k.phases["comp"])):
            bottom = 0.0
            for q, colour in zip(PHASES, ("#9aa5b8", "#3b6fb6", "#e39b3b", "#c9463d")):
                v = k.phases[q][r] if r < len(k.phases[q]) else 0.0
                v = v if v == v else 0.0
                ax.bar(x, v, bottom=bottom, color=colour, width=0.8, label=q if x == 0 else None)
                bottom += v
            ticks.append(x)
            labels.append(f"{r}/{k.procs}")
            x += 1
        x += 1  # a gap between process counts
    ax.set_xticks(ticks, labels, fontsize=7)
    ax.set_xlabel("rank / processes")
    ax.set_ylabel("time (µs)")
    label = params_label(setting)
    ax.set_title(f"{test} {label}: phases per rank")
    # below the axis title, not over the bars it names (issue 70)
    ax.legend(fontsize=8, ncols=4, loc="upper center", bbox_to_anchor=(0.5, -0.28), frameon=False)
    return svg_img(fig, f"phases per rank of {test} {label}")
