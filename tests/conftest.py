import contextlib
import gc
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# The tiers (pyproject.toml): every test carries exactly one.  A unit test runs with no MPI at
# hand, so one that reaches for the engine fails instead of being slow or flaky in the edit loop.
# `build` holds the few tests that compile a whole engine (or the C checks) from scratch: a
# third of the suite's time for four tests, so `make test` leaves them to `make test-all`, as it
# leaves `service`: the hub on PostgreSQL, its many clients at once, a server killed, a browser.
TIERS = ("unit", "mpi", "system", "build", "service")
NO_MPI = "/nonexistent/unit-tests-have-no-mpi"


def pytest_collection_modifyitems(config, items):
    for item in items:
        tiers = sorted({m.name for m in item.iter_markers() if m.name in TIERS})
        if len(tiers) != 1:
            raise pytest.UsageError(f"{item.nodeid}: mark it with exactly one of {', '.join(TIERS)}, has {tiers}")
    # Tests that load pyarrow (pandas imports it) run last: once it is in this process a report
    # draws its figures one at a time, not forked one a core (views/drawing.py), as `scope
    # report` itself never would.
    items.sort(key=lambda item: item.get_closest_marker("loads_pyarrow") is not None)


@pytest.fixture(autouse=True)
def _pyarrow_only_where_marked(request):
    """Keeps the order above true: a test that loads pyarrow unmarked fails, saying so."""
    before = "pyarrow" in sys.modules
    yield
    if not before and "pyarrow" in sys.modules and not request.node.get_closest_marker("loads_pyarrow"):
        pytest.fail("this test loaded pyarrow (pandas does): mark it loads_pyarrow so that it runs last")


def pytest_collection_finish(session):
    """What the session holds from here on (pytest, the collected tests, the front end's modules)
    leaves the collector's generations: the full collection after each in-process command
    (_in_process) then scans what the command made, not all of it (50 ms a command, ~800 commands)."""
    import scope.cli.main  # noqa: F401  (its modules, imported once, frozen with the rest)

    gc.collect()
    gc.freeze()


@pytest.fixture(autouse=True)
def _tier(request, monkeypatch):
    if request.node.get_closest_marker("unit"):
        if "engine" in request.fixturenames:
            pytest.fail("a unit test asked for the engine: mark it mpi")
        monkeypatch.setenv("MPICC", NO_MPI)


# A run makes 3 launches unless told (the replicates); the suite's runs, in this process or any
# it starts, make one unless a test asks for more (--launches) or for the default itself (env
# SCOPE_LAUNCHES=""): three launches of every run would take the suite past its five minutes
# for nothing it checks.
os.environ.setdefault("SCOPE_LAUNCHES", "1")
# Nor do the suite's runs probe the machine at each launch's start and end (--no-canary: ~0.2 s
# of both cores a launch, a tenth of the suite) unless a test asks (env SCOPE_NO_CANARY=""):
# test_noise.py runs with the probes and checks their records; the rest never read them.
os.environ.setdefault("SCOPE_NO_CANARY", "1")
# The last-level cache for the suite's --offcache runs (SCOPE_TEST_LLC, engine/core/testhook.h):
# their slots cycle through twice the cache on each rank, and a VM that reports its host's cache
# (480 MiB on this one) made every such run fault in about 2 GiB. What those tests check (the
# slots' count against the cache recorded, requests bound again as buffers move, the data) does
# not depend on the cache's size; test_node.py's capped STREAM case takes it too.
SMALL_LLC = {"SCOPE_TEST_LLC": str(16 << 20)}
# Open MPI 5.0.11 from PyPI spends a second in every MPI_Init here: its ofi BTL, opened and then
# let go on a machine with no OFI fabric, sleeps (strace: sleep(1) in each rank under
# mca_btl_base_select); 1.24 s against 0.24 s for a 2-rank point with it left out. The suite
# leaves it out, as a site's MCA file would (openmpi-mca-params.conf); the BTLs it measures over
# on one host, sm and self, are the same either way (test_transport reads what was chosen).
os.environ.setdefault("OMPI_MCA_btl", "^ofi")


def run_scope(*args, db=None, env=None, timeout=600):
    """The CLI as a user runs it, through its own main() in this process: its exit code, stdout
    and stderr.  A fresh interpreter would cost ~0.4 s of imports, and the suite makes ~800
    calls; the engine runs in processes of its own either way (mpiexec, as a user's does).  A
    test that signals scope, or needs it to be a process of its own (a terminal, nohup, a
    job), starts `python -m scope` itself."""
    argv = (["--db", str(db)] if db else []) + [str(a) for a in args]
    return _in_process(argv, env or {}, timeout)


def as_at_a_terminal() -> None:
    """preexec_fn for a CLI a test will signal: SIGINT, SIGQUIT and SIGHUP as a terminal delivers
    them.  A shell starts background jobs with SIGINT and SIGQUIT ignored, nohup ignores SIGHUP,
    and children inherit that (scope keeps an ignored signal ignored), so under `cmd &` (a CI
    runner) or nohup the signal would never reach the process under test."""
    for s in (signal.SIGINT, signal.SIGQUIT, signal.SIGHUP):
        signal.signal(s, signal.SIG_DFL)


class RanTooLong(Exception):
    pass


def _too_long(signum, frame):
    raise RanTooLong("the command ran past run_scope's timeout")


def _in_process(argv: list[str], env: dict, timeout: float) -> subprocess.CompletedProcess:
    from scope.cli import main

    cli = sys.modules["scope.cli.main"]
    out, err = io.StringIO(), io.StringIO()
    saved = dict(os.environ)
    kinds = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGALRM)
    handlers = {s: signal.getsignal(s) for s in kinds}
    os.environ.pop("SCOPE_DEBUG", None)
    os.environ.update(env)
    # A signal that reaches the suite's own process (Ctrl-C at the terminal, a CI job's timeout)
    # while a command runs in it is taken by that command, which closes its run and returns 130
    # or 128 + N, and the suite went on to the next test: each Ctrl-C cost one test, not the
    # suite. Such a signal is noted, and the suite stops after the command (fixtures torn down).
    got: list[int] = []
    ending = cli._on_signal

    def noted(signum, frame):
        got.append(signum)
        if signum == signal.SIGINT:
            raise KeyboardInterrupt
        ending(signum, frame)

    cli._on_signal = noted  # main() installs it for SIGTERM, SIGHUP and SIGQUIT
    signal.signal(signal.SIGINT, noted)
    signal.signal(signal.SIGALRM, _too_long)  # a hung command fails its test, not the whole suite
    signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(argv)
            except SystemExit as e:  # argparse's own exits (--help, a usage error)
                code = e.code if isinstance(e.code, int) else 1
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        cli._on_signal = ending
        os.environ.clear()
        os.environ.update(saved)
        for s, h in handlers.items():  # what main() installed, undone
            signal.signal(s, h)
        gc.collect()  # the command's database connections close with it, as at a process's exit
    if got:
        raise KeyboardInterrupt(f"{signal.Signals(got[0]).name} reached the suite while `scope {' '.join(argv)}` ran")
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


@pytest.fixture(scope="module")
def measured(tmp_path_factory):
    """The recorded run `simcal` (p2p.pingpong and p2p.stream, 0 B-4 MiB, this host) in a store
    of its own: (the store's path, the run). The sim calibration's tests read it."""
    from scope.store import Store

    db = tmp_path_factory.mktemp("simcal") / "m.db"
    rid = replay("simcal", db)
    store = Store(db)
    run = store.load_run(rid, samples=False)
    store.close()
    return db, run


def require_simgrid() -> None:
    """Skip the test where SimGrid's smpicc and smpirun are missing; in CI (whose .ci/run
    installs libsimgrid-dev) fail it instead."""
    if not (shutil.which("smpicc") and shutil.which("smpirun")):
        if os.environ.get("CI"):
            pytest.fail("SimGrid is required in CI (.ci/run installs libsimgrid-dev)")
        pytest.skip("SimGrid (libsimgrid-dev) is not installed")


def replay(name: str, db: Path) -> int:
    """A recorded fixture stored in db as `scope import` stores it: the run's id."""
    from scope.run.recorder import replay as store_stream
    from scope.store import Store

    store = Store(db)
    try:
        return store_stream(store, FIXTURES / name)[0]
    finally:
        store.close()


@pytest.fixture(scope="session")
def baseline_report(tmp_path_factory):
    """The recorded baseline module (tests/fixtures/baseline) stored and its report made by
    `scope report`, once for the tests that read it (41 figures, ~8 s): (database, page, each
    figure's (alt, legends larger than their plot, x tick labels that overlap))."""
    from scope.views import figfit, plots

    d = tmp_path_factory.mktemp("baseline")
    db, page = d / "b.db", d / "b.html"
    assert replay("baseline", db) == 1
    drawn, svg = [], plots.svg_img

    def checked(fig, alt):
        figfit.fit_legends(fig)
        drawn.append((alt, figfit.legend_overflow(fig), figfit.label_clashes(fig)))
        return svg(fig, alt)

    with pytest.MonkeyPatch.context() as m:
        m.setattr(plots, "svg_img", checked)
        p = run_scope("report", "1", "-o", page, db=db)
    assert p.returncode == 0, p.stderr
    return db, page, drawn


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


# The hub's tests (test_hub.py, test_hub_fuzz.py): the recorded runs in one store, and a PostgreSQL.
HUB_FIXTURES = ("baseline", "windows", "layers", "launches")


@pytest.fixture(scope="session")
def local(tmp_path_factory):
    """The recorded runs in one local store: (its path, {fixture: run id}, {fixture: bundle})."""
    from scope.store import Store
    from scope.store.bundle import dump, encode

    db = tmp_path_factory.mktemp("local") / "local.db"
    ids = {name: replay(name, db) for name in HUB_FIXTURES}
    store = Store(db)
    bundles = {name: encode(dump(store, rid)) for name, rid in ids.items()}
    store.close()
    return db, ids, bundles


@pytest.fixture(scope="session")
def postgres():
    from tests import pg_server

    why = pg_server.why_not()
    if why:
        if os.environ.get("CI"):
            pytest.fail(f"PostgreSQL is required in CI: {why}")
        pytest.skip(why)
    with pg_server.server() as url:
        yield url
