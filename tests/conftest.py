import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def run_scope(*args, db=None, env=None, timeout=600):
    """The CLI as a user runs it: a subprocess, its exit code, stdout and stderr."""
    e = dict(os.environ)
    e.pop("SCOPE_DEBUG", None)
    e.update(env or {})
    cmd = [sys.executable, "-m", "scope"]
    if db:
        cmd += ["--db", str(db)]
    return subprocess.run(cmd + [str(a) for a in args], capture_output=True, text=True, env=e, timeout=timeout)


@pytest.fixture(scope="session")
def engine():
    """Build the engine once for the session (later builds hit the cache)."""
    p = run_scope("build")
    assert p.returncode == 0, p.stderr
    return Path(p.stdout.strip())


@pytest.fixture
def db(tmp_path):
    return tmp_path / "results.db"
