"""A figure fitted to its space before it is drawn: legends larger than their plot moved below
it, x tick labels that run into each other thinned (views/plots.py's svg_img calls both)."""

from __future__ import annotations

import textwrap


def _clashes(ax, r) -> list[tuple[str, str]]:
    shown = [t for t in ax.get_xticklabels() if t.get_visible() and t.get_text()]
    boxes = sorted(((t.get_window_extent(r), t.get_text()) for t in shown), key=lambda b: b[0].x0)
    return [(a[1], b[1]) for a, b in zip(boxes, boxes[1:]) if b[0].x0 < a[0].x1 - 0.5]


def label_clashes(fig) -> list[str]:
    """The x tick labels that overlap their neighbour, plot by plot (extents need a renderer)."""
    r = fig.canvas.get_renderer()
    return [f"{ax.get_title() or 'a plot'}: {a!r} and {b!r}" for ax in fig.axes for a, b in _clashes(ax, r)]


def fit_labels(fig) -> None:
    """Where x tick labels run into each other (a narrow plot, long size names), every other
    one is left out until none does: a readable axis with fewer labels, not one smeared line."""
    r = fig.canvas.get_renderer()
    for ax in fig.axes:
        for _ in range(4):
            if not _clashes(ax, r):
                break
            shown = [t for t in ax.get_xticklabels() if t.get_visible() and t.get_text()]
            for t in shown[1::2]:
                t.set_visible(False)


def legend_overflow(fig) -> list[str]:
    """The legends larger than the axes they belong to: they cover the data, and beside a
    second plot they run into it (what the report at 375 px showed with a series named by
    every parameter)."""
    r = fig.canvas.get_renderer()  # extents need a renderer, not a drawing
    out = []
    for ax in fig.axes:
        lg = ax.get_legend()
        if lg is None:
            continue
        lb, ab = lg.get_window_extent(r), ax.get_window_extent(r)
        if lb.width > ab.width + 1 or lb.height > ab.height + 1:
            out.append(f"{ax.get_title() or 'a plot'}: legend {lb.width:.0f} x {lb.height:.0f} px over axes "
                       f"{ab.width:.0f} x {ab.height:.0f}")  # fmt: skip
    return out


def fit_legends(fig) -> None:
    """A legend larger than its axes goes below them, one entry a line, long names wrapped to
    the axes' width: the figure grows (bbox_inches='tight') instead of covering or cutting."""
    if not legend_overflow(fig):
        return
    r = fig.canvas.get_renderer()
    for ax in fig.axes:
        lg = ax.get_legend()
        if lg is None:
            continue
        size = lg.get_texts()[0].get_fontsize() if lg.get_texts() else 7
        chars = max(12, int(ax.get_window_extent(r).width / (0.6 * size * fig.dpi / 72)))
        handles, labels = ax.get_legend_handles_labels()
        labels = [textwrap.fill(lb, chars) for lb in labels]
        ax.legend(handles, labels, fontsize=size, loc="upper left", bbox_to_anchor=(0, -0.18), frameon=False)
