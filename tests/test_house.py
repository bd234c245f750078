"""The house (issue 56), by what can be counted: a run's options, followed from the command line
to the store, enter each file of the front end at most twice."""

import argparse
import collections
import sys

import pytest

from scope.run.prepared import PreparedRun
from scope.run.request import RunOptions
from tests.conftest import run_scope


def _takes_options(frame) -> bool:
    return any(
        isinstance(v, (RunOptions, PreparedRun))
        or (isinstance(v, argparse.Namespace) and getattr(v, "cmd", "") == "run")
        for v in frame.f_locals.values()
    )


@pytest.mark.mpi
def test_a_runs_options_enter_each_file_at_most_twice(engine, db):
    """Every function that is handed the options (the parsed command line, RunOptions, the
    PreparedRun), in the order first called; an entry is a stretch of them in one file."""
    order: list[str] = []
    seen: set = set()

    def profile(frame, event, arg):
        code = frame.f_code
        if event == "call" and "/scope/" in code.co_filename and code not in seen and _takes_options(frame):
            seen.add(code)
            order.append(code.co_filename.split("/scope/", 1)[1])

    sys.setprofile(profile)
    try:
        p = run_scope("run", "p2p.pingpong", "--sizes", "8", "--launches", "1", "--budget", "0.01", "--quiet", db=db)
    finally:
        sys.setprofile(None)
    assert p.returncode == 0, p.stderr
    entries = collections.Counter(f for i, f in enumerate(order) if i == 0 or order[i - 1] != f)
    assert {"cli/runcmd.py", "run/runner.py", "run/prepared.py"} <= set(entries), order
    assert max(entries.values()) <= 2, entries
