"""What the commands share: the results database as each opens it, an output file checked
before anything is written, the engine's test descriptors."""

from __future__ import annotations

import sys
from pathlib import Path

from scope.errors import ScopeError
from scope.model import TestInfo
from scope.run.reaper import reap
from scope.run.toolchain import engine_path, find_toolchain, list_tests
from scope.store import Store, default_path


def open_store(args, create=True):
    """The results database: created and written by run and import; opened for reading only
    (create=False) by every command that only reads it.  A writable open closes the runs a
    killed scope left `running` and removes what their jobs left (run/reaper.py)."""
    store = Store(args.db, create=create, readonly=not create)
    reap(store)
    return store


def stored_descriptors(args) -> list[dict]:
    """The engine's descriptors of the tests earlier runs stored (none without a database)."""
    return open_store(args, create=False).descriptors() if Path(args.db or default_path()).exists() else []


def descriptors(args):
    """The engine's test descriptors: those stored with earlier runs, else the engine's own
    (built if needed); none when no MPI is at hand (imports then keep the peers' names)."""
    stored = stored_descriptors(args)
    if stored:
        return [TestInfo.of(d) for d in stored]
    try:
        return [TestInfo.of(t) for t in list_tests(engine_path(find_toolchain(None), quiet=True))]
    except ScopeError:
        return []


def warn_damaged(*runs) -> None:
    """A run the store read with parts left out says so on stderr (show and report say it in
    their warnings): one line each."""
    for run in runs:
        for e in run.events:
            if e.type == "warning" and e.kind == "corrupt":
                print(f"scope: warning [corrupt]: {e.message} ({e.hint})", file=sys.stderr)
