"""Issue 44, third round: hostile files and hostile stored text.  Each case holds when SCOPE does
what it promises: a one-line error with its exit code before anything is opened or written,
nothing stored lost, no hang; or, for a damaged row, the row shown as well as it can be with a
warning, never a listing that fails.  On recorded runs (tests/fixtures), no MPI launched."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests import copies
from tests.conftest import FIXTURES, ROOT, replay, run_scope

READS = [["runs"], ["show", "1"], ["export", "1"], ["layers", "1"], ["report", "1", "-o", "{tmp}/r.html"],
         ["compare", "1", "2"], ["runs", "--json"], ["show", "1", "--json"]]  # fmt: skip


def scope_process(*argv, timeout: float = 60, **env) -> subprocess.CompletedProcess:
    """The CLI in a process of its own with a time limit: a case that could hang fails instead
    of hanging the suite."""
    return subprocess.run([sys.executable, "-m", "scope", *map(str, argv)], capture_output=True, text=True,
                          timeout=timeout, env=scope_env(**env))  # fmt: skip


def scope_env(**env) -> dict:
    return dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1] / "src"), **env)


def saved_stream(tmp_path: Path, name: str = "s") -> Path:
    """A copy of a recorded saved stream (tests/fixtures/clock-host) to damage."""
    src = tmp_path / name
    shutil.copytree(FIXTURES / "clock-host", src)
    return src


def fill(argv: list[str], tmp: Path) -> list[str]:
    return [a.replace("{tmp}", str(tmp)) for a in argv]


@pytest.fixture
def stored(tmp_path):
    db = tmp_path / "r.db"
    replay("layers", db)  # runs every read command has something to say of
    replay("layers", db)
    return db


@pytest.mark.unit
@pytest.mark.parametrize("argv", READS, ids=lambda a: " ".join(a))
@pytest.mark.parametrize("kind", ["fifo", "directory", "device"])
def test_a_database_that_is_no_file_is_refused_before_it_is_opened(tmp_path, argv, kind):
    # a FIFO blocked SQLite's open until a writer came (13 minutes, deaf to SIGTERM, and to a
    # SIGALRM in this process): a process of its own with a time limit, so a regression fails
    # here instead of hanging the suite; a directory or a device cannot block, so in this process
    path = {"fifo": tmp_path / "db.fifo", "directory": tmp_path, "device": Path("/dev/zero")}[kind]
    if kind == "fifo":
        os.mkfifo(path)
        p = scope_process("--db", path, *fill(argv, tmp_path))
    else:
        p = run_scope("--db", path, *fill(argv, tmp_path))
    assert p.returncode == 2 and "not a results database (give --db a regular file)" in p.stderr, p.stderr


@pytest.mark.unit
def test_scope_db_naming_a_fifo_is_refused_too(tmp_path):
    fifo = tmp_path / "db.fifo"
    os.mkfifo(fifo)
    p = scope_process("runs", SCOPE_DB=str(fifo))
    assert p.returncode == 2 and "is a FIFO" in p.stderr


OUTPUTS = [
    (["export", "1", "-o", "{fifo}"], "it is a FIFO"),
    (["export", "1", "--format", "json", "-o", "{fifo}"], "it is a FIFO"),
    (["report", "1", "-o", "{fifo}"], "it is a FIFO"),
    (["export", "1", "-o", "{db}"], "which this command reads"),
    (["export", "1", "--format", "json", "-o", "{tmp}/./r.db"], "which this command reads"),
    (["report", "1", "-o", "{link}"], "which this command reads"),
    (["export", "1", "-o", "{link}"], "which this command reads"),
    (["tune", "bcast", "-o", "{db}"], "which this command reads"),
    (["tune", "bcast", "--report", "{link}"], "which this command reads"),
]


@pytest.mark.unit
@pytest.mark.parametrize("argv,said", OUTPUTS, ids=lambda x: " ".join(x) if isinstance(x, list) else None)
def test_an_output_that_would_hang_or_overwrite_the_store_is_refused(stored, tmp_path, argv, said):
    fifo, link = tmp_path / "out.fifo", tmp_path / "link.html"
    os.mkfifo(fifo)
    link.symlink_to(stored)
    before = stored.read_bytes()
    args = [a.format(fifo=fifo, db=stored, link=link, tmp=tmp_path) if "{" in a else a for a in argv]
    p = scope_process("--db", stored, *args)
    assert p.returncode == 2 and said in p.stderr, p.stderr
    assert stored.read_bytes() == before  # nothing stored is lost


ESCAPES = {
    "library": "\x1b[31mEVIL MPI\x1b[0m",
    "host": "h\x1b]0;owned\x07",
    "cpu": "\x1b[2JCPU",
}


@pytest.fixture
def hostile(tmp_path):
    """A saved stream whose context holds terminal escapes in the MPI library string, the host
    names and the CPU model, imported as a run."""
    src = saved_stream(tmp_path, "evil")
    f = src / "launch-1.jsonl"
    recs = [json.loads(x) for x in f.read_text().splitlines()]
    for r in recs:
        if r.get("type") == "context":
            r["mpi"]["library"] = ESCAPES["library"]
            for pl in r.get("placement", []):
                pl["host"] = ESCAPES["host"]
            for n in r.get("nodes", []):
                n["host"], n["cpu_model"] = ESCAPES["host"], ESCAPES["cpu"]
    f.write_text("\n".join(map(json.dumps, recs)) + "\n")
    db = tmp_path / "e.db"
    assert run_scope("import", src, db=db).returncode == 0
    return db


@pytest.mark.unit
@pytest.mark.parametrize("argv", [["show", "1"], ["runs"], ["layers", "1"], ["show", "1", "--json"],
                                  ["export", "1", "--format", "json"], ["runs", "--json"]], ids=" ".join)  # fmt: skip
def test_stored_text_never_drives_the_terminal(hostile, argv):
    p = run_scope(*argv, db=hostile)
    assert p.returncode in (0, 2) and "\x1b" not in p.stdout and "\x07" not in p.stdout, p.stdout[:300]
    if argv == ["show", "1"]:
        assert "\\x1b[31mEVIL MPI" in p.stdout  # shown, as an escape


@pytest.fixture
def bad_label(stored):
    with sqlite3.connect(stored) as c:
        c.execute("UPDATE runs SET label = CAST(X'FFFE41' AS TEXT) WHERE id = 1")
    return stored


@pytest.mark.unit
@pytest.mark.parametrize("argv", READS, ids=lambda a: " ".join(a))
def test_a_label_that_is_not_utf8_costs_its_characters_not_the_listing(bad_label, tmp_path, argv):
    p = run_scope(*fill(argv, tmp_path), db=bad_label)
    assert p.returncode == 0 and "warning [corrupt]: stored text that is not UTF-8" in p.stderr, p.stderr
    if argv == ["runs", "--json"]:
        assert json.loads(p.stdout)[0]["label"] == "\ufffd\ufffdA"


@pytest.mark.unit
@pytest.mark.parametrize("version,said", [(-1, "schema version -1"), (999, "schema version 999"),
                                          (3, "no runs table")])  # fmt: skip
def test_an_odd_schema_version_is_refused_without_a_migration(tmp_path, version, said):
    db = tmp_path / "odd.db"
    with sqlite3.connect(db) as c:
        c.execute("CREATE TABLE other (x)")
        c.execute(f"PRAGMA user_version = {version}")
    before = db.read_bytes()
    for argv in (["runs"], ["show", "1"]):
        p = run_scope(*argv, db=db)
        assert p.returncode == 3 and said in p.stderr, p.stderr
    assert db.read_bytes() == before  # no migration tried


@pytest.mark.unit
@pytest.mark.parametrize("argv", [["export", "1", "--samples"], ["export", "1", "--format", "json"]], ids=" ".join)
def test_a_reader_that_goes_away_is_a_broken_pipe_not_success(tmp_path, argv):
    db = tmp_path / "b.db"
    replay("baseline", db)  # megabytes of samples: far more than a pipe holds
    p = subprocess.Popen([sys.executable, "-m", "scope", "--db", str(db), *argv], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, env=scope_env())  # fmt: skip
    assert p.stdout.read(1)
    p.stdout.close()  # as `| head -c1` does
    p.wait(timeout=120)
    assert p.returncode == 141, p.stderr.read()


def _point_lines(recs: list[str]) -> list[int]:
    return [i for i, x in enumerate(recs) if '"type":"point"' in x.replace(" ", "")]


def _edit(field: str, value):
    def change(lines: list[str]) -> list[str]:
        out = []
        for x in lines:
            r = json.loads(x)
            if r.get("type") == "point" and field in ("count", "index", "batch"):
                r[field] = value
            elif r.get("type") == "point" and field == "median":
                r["stats"]["median"] = value
            elif r.get("type") == "context" and field == "ranks":
                r["ranks"] = value
            out.append(json.dumps(r))
        return out

    return change


def _raw(text_of):
    def change(lines: list[str]) -> list[str]:
        return [text_of(x) if i == _point_lines(lines)[0] else x for i, x in enumerate(lines)]

    return change


# saved streams damaged one way each: (what, change to launch-1.jsonl's lines, what is said)
STREAMS = [
    ("a record cut in half", _raw(lambda x: x[: len(x) // 2]), "not a whole record"),
    ("a NaN median (not JSON)", _raw(lambda x: x.replace('"median":', '"median":NaN,"was":', 1)), "not a whole record"),
    ("a median past a double", _raw(lambda x: x.replace('"median":', '"median":1e999,"x":', 1)), "not a whole record"),
    ("a point twice", lambda ls: ls[: _point_lines(ls)[0] + 1] + ls[_point_lines(ls)[0] :], "a second time"),
    ("ranks: -2", _edit("ranks", -2), "ranks"),
    ("ranks: 0", _edit("ranks", 0), "ranks"),
    ("a count of 10^30", _edit("count", 10**30), "count"),
    ("a negative count", _edit("count", -5), "count"),
    ("a negative index", _edit("index", -1), "index"),
    ("a batch of text", _edit("batch", "many"), "batch"),
    ("a median of text", _edit("median", "fast"), "median"),
    ("JSON nested 200,000 deep", lambda ls: [*ls, "[" * 200_000 + "]" * 200_000], "not a whole record"),
    ("an object nested 200,000 deep", lambda ls: [*ls, '{"a":' * 200_000 + "1" + "}" * 200_000],
     "not a whole record"),
    ("a line of text", lambda ls: [*ls, "hydra: BAD TERMINATION"], "not a whole record"),
]  # fmt: skip


@pytest.mark.unit
@pytest.mark.parametrize("what,change,said", STREAMS, ids=[s[0] for s in STREAMS])
def test_a_damaged_saved_stream_is_refused_naming_the_line_and_nothing_is_stored(tmp_path, what, change, said):
    src = saved_stream(tmp_path)
    f = src / "launch-1.jsonl"
    f.write_text("\n".join(change(f.read_text().splitlines())) + "\n")
    db = tmp_path / "i.db"
    p = run_scope("import", src, db=db)
    assert p.returncode == 2 and "launch-1.jsonl, line" in p.stderr and said in p.stderr, p.stderr
    assert "nothing was imported" in p.stderr
    assert json.loads(run_scope("runs", "--json", db=db).stdout) == []  # no run, not even an incomplete one


LAUNCH_FILES = [
    ("a FIFO", lambda f: os.mkfifo(f.with_suffix(".jsonl")), "not a regular file"),
    ("/dev/zero as gzip", lambda f: f.with_suffix(".jsonl.gz").symlink_to("/dev/zero"), "not a regular file"),
    ("a directory", lambda f: f.with_suffix(".jsonl").mkdir(), "not a regular file"),
    ("not gzip", lambda f: f.with_suffix(".jsonl.gz").write_text('{"type":"end"}\n'), "Not a gzipped file"),
    ("gzip cut short", lambda f: f.with_suffix(".jsonl.gz").write_bytes(gzip.compress(b'{"type":"end"}\n' * 99)[:30]),
     "launch-1.jsonl.gz"),
]  # fmt: skip


@pytest.mark.unit
@pytest.mark.parametrize("what,make,said", LAUNCH_FILES, ids=[s[0] for s in LAUNCH_FILES])
def test_a_launch_file_that_would_hang_or_fill_the_memory_is_refused(tmp_path, what, make, said):
    src = saved_stream(tmp_path)
    (src / "launch-1.jsonl").unlink()
    make(src / "launch-1")
    p = scope_process("--db", tmp_path / "i.db", "import", src)
    assert p.returncode == 2 and said in p.stderr, p.stderr


OSU = "# OSU MPI Latency Test v7.4\n# Size          Latency (us)\n"
FILES = [
    ("a CSV whose byte-order mark is before its first row", "\ufeff8,1.5\n16,2.5\n", 0, None),
    ("a CSV with a byte-order mark and a header", "\ufeffsize,time_us\n8,1.5\n16,2.5\n", 0, None),
    # its title read past the mark (before: "no '# OSU ...' title line"); with no engine at hand in
    # this tier the program has no SCOPE name, which is what is said
    ("OMB output after a byte-order mark", "\ufeff" + OSU + "1  1.50\n2  1.60\n", 2, "osu_latency has no SCOPE test"),
    ("an OMB size of 10^23", OSU + "1  1.50\n100000000000000000000000  1.60\n", 2, "beyond any message"),
    ("a CSV size of 2^63", "8,1.5\n9223372036854775808,2.0\n", 2, "beyond any message"),
    ("a CSV size with an underscore", "8,1.5\n1_6,2.5\n", 2, "line 2: expected"),
    ("a CSV size in other digits", "8,1.5\n١٦,2.5\n", 2, "line 2: expected"),
    ("a CSV field of 200,000 characters", "8,1.5\n16," + "9" * 200_000 + "\n", 2, "field larger than field limit"),
    ("a CSV with a NUL", "8,1.5\n16,2\x00.5\n", 2, "line 2"),
    ("a CSV time of 10^400", "8,1.5\n16,1e400\n", 2, "not a positive, finite measurement"),
    ("a CSV time of NaN", "8,1.5\n16,nan\n", 2, "not a positive, finite measurement"),
]


@pytest.mark.unit
@pytest.mark.parametrize("what,text,code,said", FILES, ids=[f[0] for f in FILES])
def test_imported_files_are_read_whole_or_refused_naming_the_line(tmp_path, what, text, code, said):
    f = tmp_path / ("in.txt" if text.lstrip("\ufeff").startswith("#") else "in.csv")
    f.write_text(text, encoding="utf-8")
    db = tmp_path / "i.db"
    p = run_scope("import", f, db=db)
    assert p.returncode == code and (said is None or said in p.stderr), p.stderr
    if code == 0:
        doc = json.loads(run_scope("export", "1", "--format", "json", db=db).stdout)
        assert len(doc["points"]) == 2  # the first row too


def _with_param(tmp_path: Path, name: str, key: str, value) -> Path:
    src = tmp_path / name
    shutil.copytree(FIXTURES / "launches", src)
    for f in src.glob("launch-*.jsonl"):
        recs = [json.loads(x) for x in f.read_text().splitlines()]
        for r in recs:
            if r.get("type") == "point":
                r["params"][key] = value
        f.write_text("\n".join(map(json.dumps, recs)) + "\n")
    return src


@pytest.mark.unit
@pytest.mark.parametrize("rerun", [True, False], ids=["--rerun", "stored"])
def test_runs_with_no_point_in_common_are_refused_before_anything_is_measured(tmp_path, rerun):
    """compare --rerun of two runs that differ in one parameter measured both again, four
    launches, before saying "no point in common"; now it is said first, with --vary offered.
    (This tier has no MPI: a launch would end in exit 3, not 2.)"""
    db = tmp_path / "c.db"
    for name, mode in (("a", "standard"), ("b", "sync")):
        assert run_scope("import", _with_param(tmp_path, name, "mode", mode), db=db).returncode == 0
    p = run_scope("compare", "1", "2", *(["--rerun"] if rerun else []), db=db)
    assert p.returncode == 2 and "no point in common" in p.stderr, p.stderr
    assert "--vary mode=standard,sync" in p.stderr
    assert len(json.loads(run_scope("runs", "--json", db=db).stdout)) == 2  # nothing measured, nothing stored


@pytest.mark.build  # it builds an engine for the copied environment's MPI from scratch
def test_an_unreadable_folder_on_path_is_skipped_as_which_skips_it():
    """After `su`, PATH may still name a folder only root can read (/root/bin): the MPI search
    skips it instead of stopping with "Permission denied" (issue 44).  Run as nobody through
    setpriv, from a copy of this tree and its environment in a folder nobody can read: the
    checkout itself may live where nobody cannot (a clone under /root, issue 59)."""
    if os.geteuid() != 0 or not shutil.which("setpriv"):
        pytest.skip("needs root and setpriv")
    top = copies.world_readable_folder()
    if top is None:
        pytest.skip("no temporary folder here that every user can reach")
    try:
        for d in ("src", "engine"):
            shutil.copytree(ROOT / d, top / d, ignore=shutil.ignore_patterns("__pycache__"))
        shutil.copy2(ROOT / "pyproject.toml", top)  # with engine/: the copy runs as a checkout
        venv = copies.environment(top / "venv", top / "src")
        locked = top / "rootbin"
        locked.mkdir()
        shutil.copy(venv / "bin" / "mpicc", locked / "mpicc")
        locked.chmod(0o700)  # root's own
        env = {"PATH": f"{locked}:{venv / 'bin'}:/usr/bin:/bin", "HOME": str(top), "PYTHONDONTWRITEBYTECODE": "1",
               "SCOPE_BUILD_DIR": str(top / "build")}  # fmt: skip
        # the engine built as root beforehand, readable to all: nobody only finds it
        # (root may read rootbin/, so root builds with the environment's own mpicc)
        build_env = dict(env, PATH=f"{venv / 'bin'}:/usr/bin:/bin")
        built = subprocess.run([str(venv / "bin" / "python"), "-m", "scope", "build"], capture_output=True, text=True,
                               env=build_env, timeout=600, cwd=top)  # fmt: skip
        assert built.returncode == 0 and built.stdout.startswith(str(top / "build")), built.stderr
        argv = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", str(venv / "bin" / "python"),
                "-m", "scope", "list", "--json"]  # fmt: skip
        p = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=120, cwd=top)
        assert p.returncode == 0 and "Permission denied" not in p.stderr, p.stderr
        assert any(t["name"] == "p2p.pingpong" for t in json.loads(p.stdout))
    finally:  # the copies go; the engine built in top/build stays for the next time (copies.py)
        copies.clear(top)


@pytest.mark.unit
def test_the_engine_s_own_segments_a_stopped_job_left_are_removed_unless_in_use():
    """A run stopped by --timeout while a rank was stopped left /dev/shm/scope.* (the engine's
    shm.* segment between its creation and unlink); the clean-up after a killed scope looked
    for MPICH's names only.  One left, one another live process maps."""
    import mmap

    from scope.run.leftovers import clean_leftovers

    left, live = Path(f"/dev/shm/scope.{os.getpid()}.990"), Path(f"/dev/shm/scope.{os.getpid()}.991")
    left.write_bytes(b"\0" * 4096)
    live.write_bytes(b"\0" * 4096)
    with open(live, "r+b") as f, mmap.mmap(f.fileno(), 4096) as m:
        try:
            gone = clean_leftovers(None)
            assert str(left) in gone and not left.exists()
            assert live.exists() and str(live) not in gone and m[:1] == b"\0"
        finally:
            left.unlink(missing_ok=True)
    live.unlink(missing_ok=True)


# Every number from the user has a range, in ASCII digits; empty is an error, never the default
VALUES = [
    (["show", "1", "--rows", "100000000000000000000000"], "--rows"),
    (["show", "1", "--rows", "1_0"], "--rows"),
    (["show", "1", "--rows", "٣"], "--rows"),
    (["show", "1", "--ranks", "0-999999999999"], "--ranks"),
    (["show", "1", "--ranks", "٣"], "--ranks"),
    (["doctor", "-n", "100000000000000"], "--ranks"),
    (["doctor", "-n", "0"], "--ranks"),
    (["run", "-n", "100000000000000", "p2p.pingpong"], "--ranks"),
    (["run", "-n", "٣", "p2p.pingpong"], "--ranks"),
    (["run", "-n", "1_0", "p2p.pingpong"], "--ranks"),
    (["run", "p2p.pingpong", "--launches", "101"], "--launches"),
    (["run", "p2p.pingpong", "--launches", "٣"], "--launches"),
    (["run", "p2p.pingpong", "--launches", "1_0"], "--launches"),
    (["tune", "bcast", "-n", "100000000000000"], "--ranks"),
    (["tune", "bcast", "--launches", "101"], "--launches"),
    (["tune", "bcast", "--timeout", "inf"], "--timeout"),
    (["submit", "p2p.pingpong", "-N", "100000000000000000000"], "--nodes"),
    (["submit", "p2p.pingpong", "-n", "100000000000000000000"], "--ntasks"),
    (["submit", "p2p.pingpong", "-n", "0"], "--ntasks"),
    (["run", "p2p.pingpong", "--label", ""], "--label: is empty"),
    (["import", "x.csv", "--label", ""], "--label: is empty"),
    (["submit", "p2p.pingpong", "--label", ""], "--label: is empty"),
    (["run", "p2p.pingpong", "--hosts", ""], "--hosts: is empty"),
    (["run", "p2p.pingpong", "--launcher-args", ""], "--launcher-args: is empty"),
    (["run", "p2p.pingpong", "--timeout", "inf"], "--timeout"),
    (["run", "p2p.pingpong", "--timeout", "1e999"], "--timeout"),
    (["run", "p2p.pingpong", "--timeout", "nan"], "--timeout"),
    (["run", "p2p.pingpong", "--timeout", "0"], "--timeout"),
    (["run", "p2p.pingpong", "--timeout", "700000"], "--timeout"),
    # with an impossible host count too: were the empty value let through, nothing is created
    (["testbed", "up", "--hosts", "100000", "--rate", ""], "--rate: is empty"),
    (["testbed", "up", "--hosts", "100000", "--burst", ""], "--burst: is empty"),
    (["testbed", "up", "--hosts", "100000", "--name", ""], "--name: is empty"),
    (["testbed", "down", "--name", ""], "--name: is empty"),
    (["show", "1", "--test", ""], "--test: is empty"),
    (["import", "x.csv", "--test", ""], "--test: is empty"),
    (["report", "1", "--title", ""], "--title: is empty"),
    (["submit", "p2p.pingpong", "--script", ""], "--script: is empty"),
    (["submit", "p2p.pingpong", "--output-dir", ""], "--output-dir: is empty"),
    (["compare", "1", "2", "--vary", ""], "--vary: is empty"),
    (["predict", "kernel.jacobi", "--procs", ""], "--procs: is empty"),
    (["predict", "--check", ""], "--check: is empty"),
    (["export", "1", "-o", ""], "--output: is empty"),
    (["report", "1", "-o", ""], "--output: is empty"),
    (["show", "1", "--ranks", ""], "--ranks: is empty"),
    (["tune", "bcast", "--ppn", ""], "--ppn: is empty"),
    (["tune", "bcast", "-o", ""], "--output: is empty"),
    (["tune", "bcast", "--report", ""], "--report: is empty"),
    (["tune", "bcast", "--apply", ""], "--apply: is empty"),
]


@pytest.mark.unit
@pytest.mark.parametrize("argv,said", VALUES, ids=[" ".join(v[0]) or "empty" for v in VALUES])
def test_every_value_has_a_range_and_empty_is_an_error(stored, argv, said):
    p = run_scope(*argv, db=stored)
    assert p.returncode == 2 and said in p.stderr and p.stderr.count("\n") == 1, p.stderr
    assert len(json.loads(run_scope("runs", "--json", db=stored).stdout)) == 2  # nothing made, nothing lost
