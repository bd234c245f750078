"""SCOPE's clock as a library (issue 57): events files read as a run, each event's true error
against its bound computed by hand, hostile files refused; the library built and installed,
the example compiled against the installed library alone and run on 2 ranks with a planted
clock offset, in C and from mpi4py."""

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from scope.records.events import Event, EventsHeader
from scope.run import testbed
from scope.run.toolchain import find_toolchain
from scope.store import Store
from tests.conftest import ROOT, run_scope
from tests.test_records import documented

EXAMPLE = ROOT / "examples" / "clock"


def header(rank: int, size: int = 2, **over) -> dict:
    h = {"type": "events", "schema": 1, "library": "1.0.0", "rank": rank, "size": size, "host": "h", "timer": "tsc",
         "tick_ns": 0.5, "method": "tree", "clock_domain": "rank", "clock_of": rank, "depth": rank,
         "truth_known": True, "injected_offset_ns": 0, "injected_drift": 0, "injected_base_ns": 0, "sync_s": 0.001,
         "bound_z": 3.5}  # fmt: skip
    h.update(over)
    return h


def event(name: str, t_ns: float, bound_ns: float, ticks: int) -> dict:
    return {"type": "event", "name": name, "t_ns": t_ns, "bound_ns": bound_ns, "ticks": ticks, "sync": 1}


def write(prefix: Path, files: dict[int, list[dict]]) -> None:
    for r, recs in files.items():
        Path(f"{prefix}.{r}.jsonl").write_text("".join(json.dumps(x) + "\n" for x in recs))


def known(prefix: Path) -> None:
    """Rank 0's clock planted 100 ns ahead and 1 ppm fast, tick 0.5 ns: at counter value T its
    true global time is 0.5 T + 100 + 1e-6 * 0.5 T.  Rank 1's two events: at T = 2e9 the truth
    is 1,000,001,100 ns, it says 1,000,001,150 +- 60 (error 50, within); at T = 4e9 the truth
    is 2,000,002,100, it says 2,000,002,200 +- 80 (error 100, not within)."""
    r0 = header(0, injected_offset_ns=100, injected_drift=1e-6)
    write(prefix, {
        0: [r0, event("halo", 1_000_001_100, 0, 2_000_000_000), event("done", 2_000_002_100, 0, 4_000_000_000)],
        1: [header(1), event("halo", 1_000_001_150, 60, 2_000_000_000),
            event("done", 2_000_002_200, 80, 4_000_000_000)],
    })  # fmt: skip


@pytest.mark.unit
def test_events_import_and_each_events_true_error_against_its_bound(tmp_path, db):
    known(tmp_path / "ev")
    p = run_scope("import", tmp_path / "ev", db=db)
    assert p.returncode == 0, p.stderr
    assert "imported 4 events of 2 ranks" in p.stdout and "[EVENTS]" in p.stdout
    run = Store(db).load_run(1)
    assert run.origin == "events" and [len(r) for r in run.timeline] == [2, 2]
    assert run.timeline[1].names == ["halo", "done"] and list(run.timeline[1].bound_ns) == [60.0, 80.0]
    shown = run_scope("show", "last", db=db).stdout
    assert "4 events of 2 ranks over 1,000,001.1 µs" in shown  # 2,000,002,200 - 1,000,001,100 ns
    assert "true error within its bound: 3 of 4 events" in shown and "worst true error 100.0 ns" in shown
    assert "events by name: halo (2), done (2)" in shown
    rank1 = next(ln for ln in shown.splitlines() if ln.split()[:1] == ["1"])
    assert rank1.split()[-3:] == ["80.0", "100.0", "1/2"]
    rows = run_scope("export", "last", "--format", "csv", db=db).stdout.splitlines()
    assert rows[0] == "run,rank,host,seq,name,t_ns,t_from_first_us,bound_ns,true_error_ns,within" and len(rows) == 5
    assert rows[4].split(",")[1:] == ["1", "h", "1", "done", "2000002200.0", "1000001.1", "80.0", "100.0", "0"]
    doc = json.loads(run_scope("export", "last", "--format", "json", db=db).stdout)["timeline"]
    assert (doc["within"], doc["events"], doc["max_error_ns"]) == (3, 4, 100.0)
    assert doc["ranks"][0]["header"]["injected_drift"] == 1e-6 and doc["ranks"][1]["events"][0]["within"] is True
    bundled = run_scope("export", "last", "--format", "bundle", "-o", tmp_path / "b.scope", db=db)
    assert bundled.returncode == 2 and "does not carry" in bundled.stderr and not (tmp_path / "b.scope").exists()
    out = tmp_path / "r.html"
    assert run_scope("report", "last", "-o", out, db=db).returncode == 0
    html = out.read_text()
    assert "id='timeline-1'" in html and "3 of 4 events" in html and "data:image/svg+xml" in html


@pytest.mark.unit
def test_a_rank_without_one_counter_has_no_truth(tmp_path, db):
    write(tmp_path / "ev", {r: [header(r, truth_known=False), event("a", 10.0 + r, 5, 20)] for r in range(2)})
    assert run_scope("import", tmp_path / "ev.1.jsonl", db=db).returncode == 0  # a rank's file names its prefix
    shown = run_scope("show", "last", db=db).stdout
    assert "true error: not known" in shown and "within its bound" not in shown


def _bad(tmp_path):
    ok = [header(0), event("a", 1.0, 1, 2)], [header(1), event("a", 1.0, 1, 2)]
    yield "a rank's file missing", {0: ok[0]}, "1 of 2 ranks' events files are missing"
    yield "a header naming another rank", {0: ok[0], 1: [header(0), event("a", 1.0, 1, 2)]}, "says rank 0, not 1"
    yield "a control character", {0: ok[0], 1: [header(1), event("\x1b[2J", 1.0, 1, 2)]}, "ev.1.jsonl"
    yield "a second header", {0: ok[0], 1: [header(1), header(1)]}, "a second `events` header"
    yield "not JSON", {0: ok[0], 1: [header(1), "{"]}, "ev.1.jsonl:2"
    yield "sizes that differ", {0: ok[0], 1: [header(1, size=3), event("a", 1.0, 1, 2)]}, "not of one program"
    yield "a name too long", {0: ok[0], 1: [header(1), event("x" * 65, 1.0, 1, 2)]}, "ev.1.jsonl"
    yield "a negative bound", {0: ok[0], 1: [header(1), event("a", 1.0, -1, 2)]}, "ev.1.jsonl"
    yield "a rank past the size", {0: ok[0], 1: [header(1, size=1)]}, "ev.1.jsonl:1"
    yield "an empty file", {0: ok[0], 1: []}, "is empty"
    yield "an infinite time", {0: ok[0], 1: [header(1), {**event("a", 1.0, 1, 2), "t_ns": 1e309}]}, "ev.1.jsonl"


@pytest.mark.unit
@pytest.mark.parametrize("case", range(11))
def test_hostile_events_files_are_refused_in_one_line_and_store_nothing(tmp_path, db, case):
    what, files, said = list(_bad(tmp_path))[case]
    for r, recs in files.items():
        Path(f"{tmp_path / 'ev'}.{r}.jsonl").write_text("".join((x if isinstance(x, str) else json.dumps(x)) + "\n"
                                                                for x in recs))  # fmt: skip
    p = run_scope("import", tmp_path / "ev", "--format", "events", db=db)
    assert p.returncode == 2, (what, p.stdout, p.stderr)
    assert said in p.stderr and len(p.stderr.strip().splitlines()) == 1, (what, p.stderr)
    assert "Traceback" not in p.stderr and not (db.exists() and Store(db).runs())


@pytest.mark.unit
def test_clock_library_md_documents_exactly_the_events_fields():
    docs = documented(ROOT / "docs" / "clock-library.md")
    for kind, struct in (("events", EventsHeader), ("event", Event)):
        assert docs.get(kind) == set(struct.__struct_fields__), (kind, docs.get(kind))


# ---------------------------------------------------------------- the library, built and run


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """The library installed by `scope build --clock-lib` under a fresh prefix, and the C example
    compiled through the installed pkg-config file alone (no engine source on its lines)."""
    if not shutil.which("pkg-config"):
        pytest.skip("pkg-config is missing (apt-get install pkg-config)")
    prefix = tmp_path_factory.mktemp("clocklib")
    p = run_scope("build", "--clock-lib", "--prefix", prefix)
    assert p.returncode == 0, p.stderr
    assert (prefix / "lib" / "libscopeclock.so.1").is_file() and "pkg-config" in p.stdout
    env = dict(os.environ, PKG_CONFIG_PATH=str(prefix / "lib" / "pkgconfig"))
    flags = subprocess.run(["pkg-config", "--cflags", "--libs", "scope-clock"], capture_output=True, text=True,
                           env=env, check=True).stdout  # fmt: skip
    assert str(ROOT / "engine") not in flags and f"-I{prefix}/include" in flags
    exe = prefix / "stamp"
    mpicc = Path(sys.prefix) / "bin" / "mpicc"
    cc = subprocess.run([str(mpicc), "-Wall", "-Wextra", "-Werror", str(EXAMPLE / "stamp.c"), "-o", str(exe),
                         *shlex.split(flags)], capture_output=True, text=True)  # fmt: skip
    assert cc.returncode == 0, cc.stderr
    return prefix, exe


def _run(argv: list[str], env: dict) -> subprocess.CompletedProcess:
    mpiexec = Path(sys.prefix) / "bin" / "mpiexec"
    return subprocess.run([str(mpiexec), "-n", "2", *argv], capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, **env))  # fmt: skip


def _every_event_within(prefix: Path, db: Path, n: int) -> str:
    assert run_scope("import", prefix, db=db).returncode == 0
    shown = run_scope("show", "last", db=db).stdout
    assert f"true error within its bound: {n:,} of {n:,} events" in shown, shown
    run = Store(db).load_run(Store(db).resolve_run("last"))
    assert [r.header.clock_of for r in run.timeline] == [0, 1]  # rank 1's planted clock: a domain of its own
    assert max(run.timeline[1].bound_ns) > 0
    return shown


@pytest.mark.build
def test_the_example_linked_to_the_installed_library_stamps_within_its_bounds(installed, tmp_path, db):
    _, exe = installed
    # rank 1's clock 250 us ahead and 15 ppm fast: synchronised across as another host's would be
    p = _run([str(exe), str(tmp_path / "ev")], {"SCOPE_TEST_CLOCK": "1:250:15"})
    assert p.returncode == 0, p.stderr
    assert "stamp: 2 ranks on" in p.stdout
    shown = _every_event_within(tmp_path / "ev", db, 120)
    assert "events by name: compute (40), halo (40), halo_done (40)" in shown


@pytest.mark.build
def test_the_python_binding_runs_the_same_example_under_mpi4py(installed, tmp_path, db):
    pytest.importorskip("mpi4py")
    prefix, _ = installed
    env = {"SCOPE_CLOCK_LIB": str(prefix / "lib" / "libscopeclock.so.1"), "SCOPE_TEST_CLOCK": "1:-300:-12",
           "PYTHONPATH": str(ROOT / "src")}  # fmt: skip
    p = _run([sys.executable, str(EXAMPLE / "stamp.py"), str(tmp_path / "py")], env)
    assert p.returncode == 0, p.stderr
    assert "stamp.py: 2 ranks on" in p.stdout and "rank 1's global time" in p.stdout
    _every_event_within(tmp_path / "py", db, 120)


BED = "scclock"


@pytest.mark.build  # and the testbed's namespaces, so root
@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("ip"), reason="the testbed needs root and iproute2")
def test_the_example_on_testbed_hosts_stamps_within_its_bounds(installed, tmp_path, db):
    """Two testbed hosts (namespaces of this kernel, MPI over TCP between them), a clock domain
    per rank: rank 1 is synchronised over the network, and the kernel's one counter gives the
    truth of every event."""
    _, exe = installed
    run_scope("testbed", "down", "--name", BED)
    try:
        assert run_scope("testbed", "up", "--hosts", "2", "--name", BED).returncode == 0
        state = testbed.load(BED)
        argv = [
            str(find_toolchain().mpiexec),
            *testbed.launch_segments(state, 2, str(exe), [str(tmp_path / "tb"), "rank"]),
        ]
        p = subprocess.run(argv, capture_output=True, text=True, timeout=300,
                           env=dict(os.environ, **testbed.testbed_env(state, 2)))  # fmt: skip
        assert p.returncode == 0, p.stderr
    finally:
        run_scope("testbed", "down", "--name", BED)
    shown = _every_event_within(tmp_path / "tb", db, 120)
    assert "a clock domain per rank" in shown
    hosts = {r.header.host for r in Store(db).load_run(1).timeline}
    assert len(hosts) == 1  # namespaces share the kernel's host name; the ranks crossed veth links


@pytest.mark.build
def test_threads_each_with_a_clock_of_their_own(installed, tmp_path):
    """Two threads a rank, each a clock on its own communicator (MPI_THREAD_MULTIPLE): each
    synchronises, reads forward with a finite bound (rank 0's: 0), synchronises again, frees."""
    prefix, _ = installed
    pc = dict(os.environ, PKG_CONFIG_PATH=str(prefix / "lib" / "pkgconfig"))
    flags = subprocess.run(["pkg-config", "--cflags", "--libs", "scope-clock"], capture_output=True, text=True,
                           env=pc, check=True).stdout  # fmt: skip
    exe = tmp_path / "threads"
    mpicc = Path(sys.prefix) / "bin" / "mpicc"
    cc = subprocess.run([str(mpicc), "-Wall", "-Wextra", "-Werror", str(ROOT / "tests" / "c" / "clock_threads.c"),
                         "-o", str(exe), *shlex.split(flags), "-lpthread"], capture_output=True, text=True)  # fmt: skip
    assert cc.returncode == 0, cc.stderr
    p = _run([str(exe)], {})
    assert p.returncode == 0, p.stderr
    assert sorted(p.stdout.split("\n")[:2]) == ["rank 0: ok", "rank 1: ok"], p.stdout


REFUSALS = """
from mpi4py import MPI
from scope.clock import Clock, ClockError
c = Clock(MPI.COMM_WORLD)
for call in (c.events_close, lambda: c.keep(-1, 0), lambda: Clock(MPI.COMM_WORLD, timer="sundial")):
    try:
        call()
        said = "accepted"
    except ClockError as e:
        said = f"refused: {e}"
    if MPI.COMM_WORLD.rank == 0:  # one rank speaks: two would interleave their lines
        print(said, flush=True)
c.close()
"""


@pytest.mark.build
def test_the_python_binding_raises_the_library_s_refusals(installed, tmp_path):
    pytest.importorskip("mpi4py")
    prefix, _ = installed
    env = {"SCOPE_CLOCK_LIB": str(prefix / "lib" / "libscopeclock.so.1"), "PYTHONPATH": str(ROOT / "src")}
    p = _run([sys.executable, "-c", REFUSALS], env)
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert len(lines) == 3 and "accepted" not in p.stdout
    assert lines[0] == "refused: called in the wrong state (events not open, or opened twice)"
    assert lines[1] == lines[2] and lines[1].startswith("refused: an argument out of its domain")


@pytest.mark.unit
@pytest.mark.parametrize(
    "args, said",
    [
        (["--prefix", "/etc/passwd/x"], "cannot install under /etc/passwd/x: Not a directory"),
        (["--prefix", "/tmp/a b"], "has a space in its path"),
        (["--prefix", "/tmp/x", "--no-such"], "unrecognized arguments"),
    ],
)
def test_a_prefix_the_library_cannot_go_under_is_refused_before_it_is_built(args, said):
    p = run_scope("build", "--clock-lib", *args)
    assert p.returncode == 2 and said in p.stderr and "Traceback" not in p.stderr, p.stderr
    assert "building the clock library" not in p.stderr


@pytest.mark.unit
def test_a_prefix_without_clock_lib_is_refused():
    p = run_scope("build", "--prefix", "/tmp/x")
    assert p.returncode == 2 and "--prefix is where --clock-lib installs" in p.stderr
