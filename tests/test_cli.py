"""The command line as a user meets it: one clear line and a non-zero exit on bad input."""

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT, run_scope

BASELINE = {"p2p.pingpong", "p2p.pingping", "p2p.stream", "p2p.bistream", "p2p.exchange"}


def one_line_error(p, code, *words):
    assert p.returncode == code, (p.returncode, p.stderr)
    lines = [ln for ln in p.stderr.strip().splitlines() if ln.startswith("scope:")]
    assert lines and lines[-1].startswith("scope: error:"), p.stderr
    assert "Traceback" not in p.stderr
    for w in words:
        assert w in lines[-1], (w, lines[-1])


@pytest.mark.mpi
def test_list_shows_every_test_with_parameters(engine):
    p = run_scope("list", "--json")
    assert p.returncode == 0
    tests = {t["name"]: t for t in json.loads(p.stdout)}
    assert BASELINE <= set(tests)
    modes = next(q for q in tests["p2p.pingpong"]["params"] if q["name"] == "mode")
    assert modes["choices"] == ["standard", "sync", "ready", "buffered"]
    human = run_scope("list")
    assert "p2p.stream" in human.stdout and "window" in human.stdout


@pytest.mark.mpi
def test_unknown_test_lists_valid_names(engine, db):
    p = run_scope("run", "p2p.nosuch", db=db)
    one_line_error(p, 2, "unknown test 'p2p.nosuch'", "p2p.pingpong", "p2p.exchange")
    assert not db.exists() or not sqlite3.connect(db).execute("SELECT count(*) FROM runs").fetchone()[0]


@pytest.mark.mpi
@pytest.mark.parametrize(
    "sizes,word",
    [
        ("8,1KB", "ambiguous"),
        ("abc", "not a size"),
        ("-8", "negative"),
        ("2G", "1 GiB"),
        ("16-8", "backwards"),
    ],
)
def test_malformed_sizes(engine, db, sizes, word):
    one_line_error(run_scope("run", "p2p.pingpong", "--sizes", sizes, db=db), 2, word)


@pytest.mark.mpi
@pytest.mark.parametrize("ranks", ["0", "-2", "two"])
def test_bad_rank_counts(db, ranks):
    one_line_error(run_scope("run", "-n", ranks, db=db), 2, "ranks")


@pytest.mark.mpi
def test_bad_parameters(engine, db):
    one_line_error(run_scope("run", "p2p.pingpong", "-p", "colour=red", db=db), 2, "no selected test", "mode")
    one_line_error(
        run_scope("run", "p2p.pingpong", "-p", "mode=fast", db=db),
        2,
        "mode=fast",
        "standard, sync, ready, buffered",
    )
    one_line_error(run_scope("run", "p2p.stream", "-p", "window=0", db=db), 2, "window=0", "1 to 1024")


@pytest.mark.mpi
def test_unwritable_database(tmp_path):
    f = tmp_path / "plainfile"
    f.write_text("x")
    one_line_error(run_scope("run", "p2p.pingpong", db=f / "results.db"), 3, "cannot create")


@pytest.mark.unit
def test_corrupt_database(tmp_path):
    bad = tmp_path / "bad.db"
    bad.write_bytes(b"garbage" * 1000)
    one_line_error(run_scope("runs", db=bad), 3, "corrupt")
    assert bad.read_bytes() == b"garbage" * 1000


@pytest.mark.mpi
def test_no_mpi(db):
    one_line_error(run_scope("run", db=db, env={"MPICC": "/nonexistent/mpicc"}), 3, "/nonexistent/mpicc")


@pytest.mark.mpi
def test_no_mpi_anywhere(monkeypatch, tmp_path):
    """No wrapper in this environment nor on PATH: the error names the fix."""
    import scope.run.toolchain as tc
    from scope.errors import ScopeError

    monkeypatch.delenv("MPICC", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(tc.sys, "prefix", str(tmp_path))
    with pytest.raises(ScopeError) as e:
        tc.find_toolchain()
    assert "no MPI found" in e.value.message and "pip install mpich" in e.value.hint


@pytest.mark.unit
def test_show_and_export_errors(tmp_path, db):
    one_line_error(run_scope("show", "1", db=tmp_path / "none.db"), 2, "no results database")
    from scope.store import Store

    Store(db).close()
    one_line_error(run_scope("show", "last", db=db), 2, "no runs")
    one_line_error(run_scope("show", "7", db=db), 2, "no run 7")


@pytest.mark.unit
def test_runs_on_empty_database(db):
    p = run_scope("runs", db=db)
    assert p.returncode == 0 and "no runs yet" in p.stdout


@pytest.mark.mpi
def test_doctor(engine, db):
    p = run_scope("doctor", "-n", "8", db=db)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "[ok  ] engine" in p.stdout and "<- used" in p.stdout
    assert "oversubscribed" in p.stdout  # 8 ranks on this machine's cores
    assert "MPICH" in p.stdout or "Open MPI" in p.stdout
    assert "chosen as" in p.stdout  # which MPI, and why
    j = json.loads(run_scope("doctor", "-n", "8", "--json", db=db).stdout)
    assert j["ok"] is True and {c["name"] for c in j["checks"]} >= {"mpi", "engine", "cores", "ranks"}
    assert next(c for c in j["checks"] if c["name"] == "ranks")["status"] == "warn"


@pytest.mark.build  # a new wrapper: a whole engine compiled for it
def test_engines_for_different_wrappers_live_side_by_side(engine, tmp_path, db):
    """A second compiler wrapper (here a wrapper around the same MPI) gets its own build."""
    wrapper = tmp_path / "bin" / "mpicc"
    wrapper.parent.mkdir()
    real = engine.parents[3] / ".venv" / "bin" / "mpicc"
    if not real.exists():
        pytest.skip("the default MPI is not this checkout's venv MPICH")
    wrapper.write_text(f'#!/bin/sh\nexec "{real}" "$@"\n')
    wrapper.chmod(0o755)
    launcher = tmp_path / "bin" / "mpiexec"
    launcher.write_text(f'#!/bin/sh\nexec "{real.parent / "mpiexec"}" "$@"\n')
    launcher.chmod(0o755)
    p = run_scope("build", "--mpicc", wrapper)
    assert p.returncode == 0, p.stderr
    other = p.stdout.strip()
    assert other != str(engine) and engine.exists()
    r = run_scope("run", "p2p.pingpong", "--sizes", "8", "--budget", "0.1", "--quiet", "--mpicc", wrapper, db=db)
    assert r.returncode == 0, r.stderr
    from scope.run.toolchain import engine_digest
    from scope.store import Store

    ctx = json.loads(Store(db).run(1)["context"])
    assert ctx["engine"]["mpicc"] == str(wrapper) and ctx["engine"]["source"] == engine_digest()
    assert f"; engine source {engine_digest()}" in run_scope("show", "1", db=db).stdout


@pytest.mark.unit
def test_commands_started_together_build_their_engine_once(tmp_path, monkeypatch):
    """Two commands needing one engine on a fresh install (a job array, a suite's workers): one
    builds it, the other waits on the build folder's lock and takes that engine; the engine
    appears whole (the Makefile links it under another name, then renames it)."""
    import threading
    import time

    from scope.run import toolchain

    monkeypatch.setenv("SCOPE_BUILD_DIR", str(tmp_path / "engines"))
    builds = []

    def slow_make(tc, src, out, quiet):
        builds.append(out)
        time.sleep(0.3)  # the other command arrives while this one compiles
        (out / "scope-engine").write_text("built")

    monkeypatch.setattr(toolchain, "_make", slow_make)
    tc = toolchain.Toolchain(Path("/opt/mpi/bin/mpicc"), None, "mpich", "gcc -I/opt/mpi/include")
    got = []
    both = [threading.Thread(target=lambda: got.append(toolchain.engine_path(tc, quiet=True))) for _ in range(2)]
    for t in both:
        t.start()
    for t in both:
        t.join(timeout=30)
    assert len(builds) == 1 and len(got) == 2 and got[0] == got[1] and got[0].read_text() == "built"
    rule = (ROOT / "engine" / "Makefile").read_text()
    assert "-o $@.tmp $(OBJS)" in rule and "mv -f $@.tmp $@" in rule


@pytest.mark.unit
def test_help_and_list_work_without_an_engine(described):
    """No MPI here (a unit test's MPICC points nowhere): `run --help` gives the front end's
    options and says why the engine's are left out; `list` gives the tests earlier runs stored,
    saying so; with nothing stored it is the one-line error it was."""
    import subprocess
    import sys

    p = subprocess.run([sys.executable, "-m", "scope", "run", "--help"], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0 and "--launches" in p.stdout and "engine's options are left out" in p.stderr
    listed = run_scope("list", db=described)
    assert listed.returncode == 0 and "p2p.pingpong" in listed.stdout and "earlier runs stored" in listed.stderr
    none = run_scope("list", db=described.parent / "none.db")
    assert none.returncode == 3 and "MPI compiler wrapper" in none.stderr and "Traceback" not in none.stderr


@pytest.mark.unit
def test_every_argument_of_every_command_has_help():
    """Issue 42: `scope COMMAND --help` explains every argument (17 had none)."""
    import argparse

    from scope.cli.parser import build_parser

    bare = []

    def walk(p, path):
        for a in p._actions:
            if isinstance(a, argparse._SubParsersAction):
                for name, sub in a.choices.items():
                    walk(sub, [*path, name])
            elif not isinstance(a, (argparse._HelpAction, argparse._VersionAction)) and not a.help:
                bare.append(f"{' '.join(path)} {'/'.join(a.option_strings) or a.dest}")

    walk(build_parser(run_help=True), ["scope"])
    assert bare == []


@pytest.mark.unit
def test_every_command_is_bound_to_its_handler_where_it_is_declared():
    """Issue 42: one definition per command (cli/parser.py binds "module:function"); a
    subparser without a handler was an internal error, exit 70."""
    import argparse
    import importlib

    from scope.cli.parser import build_parser

    top = build_parser(run_help=True)
    subs = next(a for a in top._actions if isinstance(a, argparse._SubParsersAction))
    assert len(subs.choices) >= 16
    for name, p in subs.choices.items():
        module, function = p.get_default("handler").split(":")
        assert callable(getattr(importlib.import_module(module), function)), name


@pytest.mark.unit
def test_one_launch_count_check_for_every_command():
    from scope.catalog.baseline import MAX_LAUNCHES, launches

    assert launches("3") == 3 and launches(" 100 ") == MAX_LAUNCHES
    for bad in ("0", "101", "-1", "٣", "1.5", ""):
        with pytest.raises(ValueError, match="from 1 to 100"):
            launches(bad)
    for argv in (
        ["run", "--launches", "101"],
        ["tune", "bcast", "--launches", "0"],
        ["compare", "1", "2", "--launches", "1"],
    ):
        p = run_scope(*argv)
        assert p.returncode == 2 and "--launches" in p.stderr and "whole number from" in p.stderr, argv


@pytest.mark.unit
def test_the_command_ends_without_teardown_yet_flushes_and_runs_exit_handlers(tmp_path):
    """`scope` exits once its output is flushed and its exit handlers have run, skipping the
    interpreter's teardown (issue 52): its code, its last line and a handler's work all arrive."""
    prog = (
        "import atexit, sys\n"
        "from scope.cli.main import entry\n"
        f"atexit.register(lambda: open({str(tmp_path / 'bye')!r}, 'w').write('ran'))\n"
        "sys.argv = ['scope', 'list', '--no-such-flag']\n"
        "entry()\n"
    )
    p = subprocess.run([sys.executable, "-c", prog], capture_output=True, text=True, timeout=120)
    assert p.returncode == 2 and "--no-such-flag" in p.stderr, p.stderr
    assert (tmp_path / "bye").read_text() == "ran"
    p = subprocess.run([sys.executable, "-m", "scope", "--version"], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0 and p.stdout.strip().startswith("scope"), p.stdout
