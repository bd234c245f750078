"""Figures drawn to SVG image tags: at once, or, while a page is made (`together`), afterwards,
on every core.  Drawing is nearly all of a report's time (matplotlib lays out every tick and
label twice for a tight box: ~0.3 s a figure, 17 s for the baseline's 41 on one core), and the
figures do not depend on one another, so a report draws them side by side in forked copies of
this process, which hold the figures already built and need nothing sent to them."""

from __future__ import annotations

import base64
import html
import io
import multiprocessing
import os
import re
from typing import Callable

# Forked workers at most: beyond a few the figures run out before the cores do.
MOST_WORKERS = 16
_PLACE = re.compile(r"<!--scope-figure-(\d+)-->")
_pending: list | None = None  # (figure, alt text) waiting, while a page is made; else None


def svg(fig, alt: str) -> str:
    """The figure as an <img> of inline SVG, drawn now; while `together` makes a page, a
    placeholder it fills once every figure is drawn."""
    if _pending is None:
        return _draw(fig, alt)
    _pending.append((fig, alt))
    return f"<!--scope-figure-{len(_pending) - 1}-->"


def _draw(fig, alt: str) -> str:
    from matplotlib import pyplot as plt

    buf = io.StringIO()
    # no date in the SVG's metadata: one run's report is the same file whenever it is made
    fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None})
    plt.close(fig)
    data = base64.b64encode(buf.getvalue().encode()).decode()
    return f'<img class="plot" alt="{html.escape(alt)}" src="data:image/svg+xml;base64,{data}">'


def _draw_nth(i: int) -> str:  # in a forked worker, which inherited _pending
    return _draw(*_pending[i])  # type: ignore[index]


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def together(make: Callable[[], str]) -> str:
    """The page make() returns, its figures drawn after it is made, side by side where this
    system can fork (one at a time where it cannot, or with one core)."""
    global _pending
    _pending = figures = []
    try:
        page = make()
        workers = min(len(figures), _cores(), MOST_WORKERS)
        if workers >= 2 and "fork" in multiprocessing.get_all_start_methods():
            with multiprocessing.get_context("fork").Pool(workers) as pool:
                imgs = pool.map(_draw_nth, range(len(figures)), chunksize=1)
            from matplotlib import pyplot as plt

            for fig, _ in figures:  # drawn and closed in the workers; this copy closed too
                plt.close(fig)
        else:
            imgs = [_draw(fig, alt) for fig, alt in figures]
    finally:
        _pending = None
    return _PLACE.sub(lambda m: imgs[int(m.group(1))], page)
