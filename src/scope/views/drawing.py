"""Figures drawn to SVG image tags: at once, or, while a page is made (`together`), afterwards,
on every core.  Drawing is nearly all of a report's time (matplotlib lays out every tick and
label twice for a tight box: ~0.3 s a figure, 17 s for the baseline's 41 on one core), and the
figures do not depend on one another, so a report draws them side by side in forked copies of
this process, which hold the figures already built and need nothing sent to them."""

from __future__ import annotations

import base64
import io
import multiprocessing
import re
import signal
import sys
import threading
from typing import Callable

from scope.cores import usable_cores
from scope.views.fmt import html_text

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
    return f'<img class="plot" alt="{html_text(alt)}" src="data:image/svg+xml;base64,{data}">'


def _draw_nth(i: int) -> str:  # in a forked worker, which inherited _pending
    return _draw(*_pending[i])  # type: ignore[index]


def _as_a_worker() -> None:
    """A worker ends as the pool ends it: the handlers a command installed (a signal closes its
    run, main.py) are not the worker's, and one that outlived SIGTERM was left behind."""
    for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT):
        signal.signal(s, signal.SIG_DFL)


def _forkable() -> bool:
    """Whether this process may fork workers.  A fork copies the calling thread alone: a lock
    another thread holds stays held in the copy, which can then wait forever.  So not with a
    Python thread alive, nor once pyarrow is loaded (its allocator's background thread: a
    worker forked after a parquet export waited forever); OpenBLAS's idle threads, which numpy
    starts, prepare for a fork themselves (pthread_atfork)."""
    if "fork" not in multiprocessing.get_all_start_methods():
        return False
    return threading.active_count() == 1 and "pyarrow" not in sys.modules


def together(make: Callable[[], str]) -> str:
    """The page make() returns, its figures drawn after it is made, side by side where this
    process can fork (one at a time where it cannot, with another thread alive, or one core)."""
    global _pending
    _pending = figures = []
    try:
        page = make()
        workers = min(len(figures), usable_cores(), MOST_WORKERS)
        if workers >= 2 and _forkable():
            with multiprocessing.get_context("fork").Pool(workers, initializer=_as_a_worker) as pool:
                imgs = pool.map(_draw_nth, range(len(figures)), chunksize=1)
            from matplotlib import pyplot as plt

            for fig, _ in figures:  # drawn and closed in the workers; this copy closed too
                plt.close(fig)
        else:
            imgs = [_draw(fig, alt) for fig, alt in figures]
    finally:
        _pending = None
    return _PLACE.sub(lambda m: imgs[int(m.group(1))], page)
