import io

import pytest

from scope.run.progress import Progress

pytestmark = pytest.mark.unit


class Tty(io.StringIO):
    def isatty(self):
        return True


def test_bar_counts_points_and_estimates_time_left():
    s = Tty()
    p = Progress(s)
    p.plan({"points": 4, "budget_s": 1.0})
    assert p.eta() == 4.0  # nothing measured yet: the budget bounds it
    p.record({"type": "point", "test": "p2p.pingpong", "index": 0, "params": {"size": 1024}})
    text = s.getvalue()
    assert "1/4" in text and "p2p.pingpong 1 KiB" in text and "0:04 left" not in text and "left" in text
    assert p.eta() <= 3 * 1.2
    p.record({"type": "point", "test": "p2p.pingpong", "index": 1, "params": {"size": 2048}})
    assert "\r" in s.getvalue()[len(text) :]  # redrawn in place, not a new line per point
    p.close()
    assert s.getvalue().endswith("\x1b[2K")  # the bar is erased when the run ends


def test_no_redraw_on_a_pipe():
    """On a pipe: a line per launch and per quarter of the points, whatever order they come in."""
    s = io.StringIO()
    p = Progress(s, launches=2)
    for launch in (1, 2):
        p.plan({"points": 4}, launch)
        for i in (3, 0, 2, 1):  # shuffled
            p.record({"type": "point", "test": "a.x", "index": i})
        p.record({"type": "end"})
    lines = s.getvalue().splitlines()
    assert lines[0] == "scope: launch 1 of 2 ..." and "scope: launch 2 of 2 ..." in lines
    done = [ln.split()[1] for ln in lines if "points" in ln]
    assert done == ["1/8", "2/8", "4/8", "6/8"] and p.done == 8
