"""The engine's plan (`scope-engine --plan N`): the one validator of a run's arguments, asked
before anything is created or launched; and what it expands (tests, values, sizes, process
counts, memory).  No MPI job starts here: the plan is written before MPI_Init."""

import shutil
import sqlite3
import subprocess

import pytest

import scope.run.plan as planmod
from scope.catalog import modules
from scope.errors import ScopeError
from scope.run.plan import ask, too_large
from tests.conftest import run_scope

pytestmark = pytest.mark.mpi


def test_the_plan_expands_globs_values_sizes_and_process_counts(engine):
    plan = ask(engine, ["--tests", "coll.b*,p2p.pingpong", "--sizes", "0-1K:x4", "--procs", "2,4"], 4)
    assert plan.names == ["p2p.pingpong", "coll.barrier", "coll.bcast"]  # registry order
    by = {t.test: t for t in plan.tests}
    assert by["p2p.pingpong"].sizes == [0, 1, 4, 16, 64, 256, 1024]
    assert by["p2p.pingpong"].procs == [4]  # loop-timed: the run's ranks
    assert by["coll.bcast"].procs == [2, 4]
    assert by["coll.barrier"].sizes == []  # not swept over sizes
    assert by["coll.bcast"].points == 7 * 2 and by["coll.barrier"].points == 2
    assert plan.points == 7 + 2 + 14
    assert plan.options["procs"] == "2,4" and plan.options["budget"] == 1  # the engine's default, parsed


def test_parameter_values_and_rejections_come_from_the_engine(engine):
    plan = ask(engine, ["--tests", "p2p.pingpong,p2p.pingping", "--param", "mode=sync,ready"], 2)
    by = {t.test: t for t in plan.tests}
    assert by["p2p.pingpong"].params["mode"] == ["sync", "ready"]
    assert by["p2p.pingping"].params["mode"] == ["sync"] and "ready" in by["p2p.pingping"].rejected


def test_byte_valued_parameters_take_the_size_syntax(engine):
    plan = ask(engine, ["--tests", "node.stream,shm.stream", "--param", "array=512M,4096", "--param", "ring=64K"], 2)
    by = {t.test: t for t in plan.tests}
    assert by["node.stream"].params["array"] == [512 << 20, 4096] and by["shm.stream"].params["ring"] == [64 << 10]


@pytest.mark.parametrize(
    "argv,ranks,says",
    [
        (["--tests", "p2p.nothing"], 2, "unknown test 'p2p.nothing'"),
        (["--sizes", "8,1KB"], 2, "ambiguous"),
        (["--tests", "app.ft", "--param", "class=B"], 2, "class=B is not valid for app.ft"),
        (["--tests", "kernel.matmul", "--param", "n=32768"], 2, "n=32768 is not valid"),
        (["--tests", "p2p.pingpong"], 1, "needs at least 2 ranks; this run has 1"),
        (["--tests", "coll.bcast", "--procs", "8"], 4, "--procs 8 is more than the run's 4 ranks"),
        (["--tests", "coll.bcast", "--procs", str((1 << 24) + 1)], 4, "--procs"),
        (["--min-count", "500", "--max-count", "100"], 2, "--min-count (500) is larger than --max-count (100)"),
        (["--budget", "0"], 2, "--budget"),
        (["--test-sizes", "io.*=1M"], 2, "matches no selected test"),
        (["--tests", "node.stream", "--param", "array=1K-4K"], 2, "expected a size in bytes from 0 to"),
        (["--tests", "node.stream", "--param", "array=2T"], 2, "array=2T is not valid"),
    ],
)
def test_the_engine_refuses_with_its_own_words(engine, argv, ranks, says):
    with pytest.raises(ScopeError) as e:
        ask(engine, argv, ranks)
    assert says in e.value.message and e.value.code == 2


def test_a_pattern_is_checked_against_the_run_s_ranks(engine, tmp_path):
    f = tmp_path / "pattern.txt"
    f.write_text("# a comment\n0 1 64K\n2 3 8\n")
    assert ask(engine, ["--tests", "p2p.pattern", "--pattern", str(f)], 4).names == ["p2p.pattern"]
    with pytest.raises(ScopeError, match="names rank 3 but the run has 2 ranks"):
        ask(engine, ["--tests", "p2p.pattern", "--pattern", str(f)], 2)
    f.write_text("0 1 64K\n1 1 8\n")
    with pytest.raises(ScopeError, match="line 2: rank 1 sends to itself"):
        ask(engine, ["--tests", "p2p.pattern", "--pattern", str(f)], 2)


def test_memory_comes_from_each_test_s_declaration(engine):
    plan = ask(engine, ["--tests", "node.dgemm", "--param", "n=256,16384"], 2)
    (t,) = plan.tests
    assert t.memory_bytes == 3 * 8 * 16384**2 * 2  # 3 matrices of doubles on each of 2 ranks: 12 GiB
    assert t.memory_point == {"procs": 2, "n": 16384}
    refusal = too_large(plan, 8 << 30)
    assert "node.dgemm n=16384 needs 12.0 GiB" in refusal.message and "8.0 GiB available" in refusal.message
    assert too_large(plan, 64 << 30) is None and too_large(plan, None) is None  # fits; memory unknown
    ft = {c: ask(engine, ["--tests", "app.ft", "--param", f"class={c}"], 2).tests[0].memory_bytes for c in "SWA"}
    assert ft == {"S": 88 * 64**3, "W": 88 * 128 * 128 * 32, "A": 88 * 256 * 256 * 128}  # NPB's grids
    assert ask(engine, ["--tests", "p2p.pingpong"], 2).tests[0].memory_bytes is None  # buffers only


def test_scope_run_refuses_before_it_stores_or_launches(engine, db):
    p = run_scope("run", "app.ft", "-p", "class=B", "-n", "2", db=db)
    assert p.returncode == 2 and "class=B is not valid for app.ft" in p.stderr
    assert "Traceback" not in p.stderr and len(p.stderr.strip().splitlines()) <= 2
    if db.exists():
        assert sqlite3.connect(db).execute("select count(*) from runs").fetchone()[0] == 0


@pytest.mark.parametrize("name", modules.NAMES)
def test_every_module_plans_what_its_tests_accept(engine, name):
    """A module can never offer what a test refuses: each one's run goes through the plan."""
    from scope.cli.modulecmd import ft_memory_of

    changes = {"param": ["class=W"]} if name == "advanced" else {}
    m, _ = modules.module_for(name, changes, None, 64 << 30, 3600 if name == "standard" else None, ft_memory_of(None))
    o = m.engine_options()
    argv = ["--tests", ",".join(m.tests), "--sizes", o["sizes"], "--procs", o["procs"]]
    argv += [a for ts in o["test-sizes"] for a in ("--test-sizes", ts)]
    argv += [a for p in o["param"] for a in ("--param", p)]
    plan = ask(engine, argv, m.ranks)
    assert plan.names == sorted(m.tests, key=plan.names.index) and set(plan.names) == set(m.tests)
    assert not any(t.rejected for t in plan.tests if t.test.startswith("app."))


def test_a_plan_is_kept_beside_its_engine_and_never_one_that_reads_a_file(engine, tmp_path, monkeypatch):
    """Asked twice with the same arguments, the engine answers once (issue 52: 40 ms of a
    one-point run); a rebuilt engine is asked again; a plan naming a file the engine reads is
    asked every time (the file may have changed), and a refusal is never kept."""
    exe = tmp_path / "e" / "scope-engine"
    exe.parent.mkdir()
    shutil.copy2(engine, exe)
    asked = []
    real = subprocess.run
    monkeypatch.setattr(planmod.subprocess, "run", lambda cmd, **kw: asked.append(cmd) or real(cmd, **kw))
    argv = ["--tests", "p2p.pingpong", "--sizes", "8,64"]
    first = ask(exe, argv, 2, ["--pattern"])
    again = ask(exe, argv, 2, ["--pattern"])
    assert len(asked) == 1 and again == first and again.tests[0].sizes == [8, 64]
    assert ask(exe, argv, 4, ["--pattern"]).ranks == 4 and len(asked) == 2  # other ranks: another plan
    exe.touch()  # a rebuilt engine
    ask(exe, argv, 2, ["--pattern"])
    assert len(asked) == 3
    f = tmp_path / "pattern.txt"
    f.write_text("0 1 8\n")
    for _ in range(2):
        ask(exe, ["--tests", "p2p.pattern", "--pattern", str(f)], 2, ["--pattern"])
    assert len(asked) == 5
    f.write_text("0 3 8\n")
    with pytest.raises(ScopeError, match="names rank 3"):
        ask(exe, ["--tests", "p2p.pattern", "--pattern", str(f)], 2, ["--pattern"])
    for _ in range(2):
        with pytest.raises(ScopeError):
            ask(exe, ["--tests", "p2p.pingpong", "--sizes", "x"], 2, ["--pattern"])
    assert len(asked) == 8 and len(list((exe.parent / "plans").iterdir())) == 2
