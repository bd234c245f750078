"""The progress of a run on stderr: test, point, share done and time left.  Drawn in place on
a terminal (run/livebar.py); on a pipe or a CI log, one line per quarter of the run instead of
a redraw per point."""

from __future__ import annotations

import importlib
import sys
import time

from scope.sizes import format_size


def _clock(seconds: float) -> str:
    seconds = max(0, int(round(seconds)))
    return (
        f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"
        if seconds >= 3600
        else f"{seconds // 60}:{seconds % 60:02d}"
    )


class Progress:
    def __init__(self, stream=None, enabled: bool = True, launches: int = 1):
        self.stream = stream or sys.stderr
        self.tty = enabled and hasattr(self.stream, "isatty") and self.stream.isatty()
        self.enabled = enabled
        self.launches = launches
        self.launch = 1
        self.per_launch = 0
        self.total = 0
        self.done = 0
        self.quarter = -1
        self.budget = 1.0
        self.start = time.monotonic()
        self.last_test = None
        self.bar = None  # run/livebar.py's, once there is something to draw
        self.task = None

    def plan(self, rec: dict, launch: int = 1) -> None:
        """A launch's plan: the points of every launch are counted in one bar."""
        self.per_launch = int(rec.get("points") or 0)
        self.total = self.per_launch * self.launches
        self.budget = float(rec.get("budget_s") or 1.0)
        self.launch = launch
        self.done = self.per_launch * (launch - 1)
        if launch == 1:
            self.start = time.monotonic()
        if self.enabled and not self.tty and self.launches > 1:
            print(f"scope: launch {launch} of {self.launches} ...", file=self.stream, flush=True)

    def eta(self) -> float:
        left = self.total - self.done
        if self.done == 0:
            return left * self.budget
        # Measured pace so far, never more than the budget allows.
        pace = (time.monotonic() - self.start) / self.done
        return left * min(pace, self.budget * 1.2)

    def _bar(self):
        if self.bar is None:  # rich loaded only where a bar is drawn, as cli/main loads a command
            self.bar, self.task = importlib.import_module("scope.run.livebar").live_bar(self.stream, self.total)
        return self.bar

    def record(self, rec: dict) -> None:
        kind = rec.get("type")
        if kind == "end":
            self.done = self.per_launch * self.launch  # points of tests skipped whole count as done
        if not self.enabled or kind not in ("point", "skip", "error", "end"):
            return
        if kind == "point" or kind == "error" or (kind == "skip" and rec.get("params")):
            self.done += 1
        test = rec.get("test", "")
        if not self.tty:
            # Points come in a shuffled order: a line per quarter of the run, not per test.
            q = 4 * self.done // self.total if self.total else 0
            if q != self.quarter and q < 4:
                self.quarter = q
                print(
                    f"scope: {self.done}/{self.total} points, {_clock(self.eta())} left", file=self.stream, flush=True
                )
            return
        size = (rec.get("params") or {}).get("size")
        what = f"{test} {format_size(size)}" if size is not None else test
        if self.launches > 1:
            what = f"[{self.launch}/{self.launches}] {what}"
        bar = self._bar()
        bar.update(self.task, completed=self.done, total=self.total or None, what=what, left=_clock(self.eta()))
        bar.refresh()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()
            self.bar = None
