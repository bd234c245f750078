"""The progress bar drawn in place on a terminal (rich): loaded by run/progress.py only when
there is a terminal to draw on, so a run on a pipe, in a CI log or under --quiet does not pay
for rich's import (24 ms of every run's start: issue 52)."""

from __future__ import annotations

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn


def live_bar(stream, total: int) -> tuple[Progress, object]:
    """A started bar on `stream` and its one task: test, point, share done and time left."""
    console = Console(file=stream, force_terminal=True, color_system="standard", highlight=False)
    bar = Progress(
        BarColumn(bar_width=24),
        MofNCompleteColumn(),
        TextColumn("{task.fields[what]:<28}"),
        TextColumn("{task.fields[left]} left"),
        console=console,
        auto_refresh=False,
        transient=True,
        redirect_stdout=False,
        redirect_stderr=False,
    )
    bar.start()
    return bar, bar.add_task("", total=total or None, what="", left="")
