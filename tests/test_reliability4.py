"""Issue 58, the fourth reliability round: each family of the hostile pass as it was run, and
what SCOPE does now.  Saved streams are copies of recorded fixtures edited by hand; the runs
that need the engine go as far as its plan (`--dry-run`, or a refusal before launch)."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from scope.run.testbed import parse_rate
from scope.run.testbed_faults import parse_links, parse_throttles
from scope.store import Store
from tests.conftest import FIXTURES, replay, run_scope


def lines_of(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


def write_lines(path: Path, records: list[dict]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))


def no_runs(db: Path) -> bool:
    """Nothing stored: no database, or one without a run."""
    return not db.exists() or json.loads(run_scope("runs", "--json", db=db).stdout) == []


def one_launch(tmp_path: Path, fixture: str) -> tuple[Path, list[dict]]:
    """A copy of a recorded saved stream, its first launch only, and that launch's records."""
    d = tmp_path / fixture
    d.mkdir()
    shutil.copy(FIXTURES / fixture / "tests.jsonl", d)
    shutil.copy(FIXTURES / fixture / "launch-1.jsonl", d)
    return d, lines_of(d / "launch-1.jsonl")


# ---------------------------------------------------------------- 1. the screen's hosts


def wrapped_testbed(tmp_path: Path, ranks: int) -> Path:
    """The recorded 4-rank all-pairs sweep as it would be on a 3-host testbed (rank r on host
    r mod 3, one network namespace a host, every rank its own MPI node as without --ppn), its
    pairs' one-way times set so that exactly the link between hosts 0 and 2 is slow."""
    assert ranks == 4
    d, recs = one_launch(tmp_path, "allpairs")
    host = [r % 3 for r in range(ranks)]
    for r in recs:
        if r["type"] == "context":
            for pl in r["placement"]:
                pl["netns"] = f"net:[40265321{host[pl['rank']]}]"
            tb = r["testbed"]
            tb["hosts"] = tb["hosts"][:3]
            tb["link_rates"] = {"0-2": "25mbit"}
        if r["type"] == "pairs" and r["params"]["size"] > 8:
            for i, (a, b) in enumerate(zip(r["a"], r["b"])):
                slow = {host[a], host[b]} == {0, 2}
                m = 20000.0 if slow else 5000.0 + 10 * i
                r["median_us"][i], r["ci_lo_us"][i], r["ci_hi_us"][i], r["min_us"][i] = m, m - 5, m + 5, m - 10
    write_lines(d / "launch-1.jsonl", recs)
    return d


@pytest.mark.unit
def test_a_rank_that_wraps_onto_a_testbed_host_is_that_host_and_only_the_slow_link_is_flagged(tmp_path):
    """4 ranks on 3 hosts: rank 3 is back on host 0.  The screen counted 'h0#3' as a fourth host
    and blamed host 2 (157x typical); the planted link 0-2 was not flagged.  (`scope run` now
    refuses such an uneven wrap before launch; a stored or imported run with one is grouped
    right all the same.)"""
    db = tmp_path / "r.db"
    assert run_scope("import", wrapped_testbed(tmp_path, 4), db=db).returncode == 0
    doc = json.loads(run_scope("show", "last", "--json", db=db).stdout)
    big = next(sc for sc in doc["screens"] if sc["size"] == 262144)
    assert big["hosts"] == ["scope-h0", "scope-h1", "scope-h2"] and big["host_of_rank"] == [0, 1, 2, 0]
    assert [(f["kind"], f["hosts"]) for f in big["flags"]] == [("link", ["scope-h0", "scope-h2"])]
    assert [(p["kind"], p["where"]) for p in doc["flagged"]] == [("link", ["scope-h0", "scope-h2"])]


@pytest.mark.mpi
@pytest.mark.parametrize(
    "extra,word",
    [
        (["--testbed", "hx", "--hosts", "a,b"], "--hosts and --testbed"),
        (["--launcher", "srun", "--hosts", "a"], "srun"),
    ],
)
def test_hosts_beside_a_testbed_or_srun_is_refused_not_ignored(engine, tmp_path, extra, word):
    p = run_scope("run", "p2p.allpairs", "-n", "4", *extra, db=tmp_path / "r.db")
    assert p.returncode == 2 and word in p.stderr and "--hosts" in p.stderr, p.stderr
    assert no_runs(tmp_path / "r.db")


# ---------------------------------------------------------------- 2. damaged pairs records


def _pairs(recs: list[dict], k: int = 0) -> dict:
    return [r for r in recs if r["type"] == "pairs"][k]


def _set(field: str, value):
    def change(recs):
        _pairs(recs)[field] = value

    return change


def _col(field: str, i: int, value):
    def change(recs):
        _pairs(recs)[field][i] = value

    return change


def _both(changes):
    def change(recs):
        for c in changes:
            c(recs)

    return change


def _step_twice(recs):
    i = recs.index(_pairs(recs))
    recs.insert(i + 1, json.loads(json.dumps(recs[i])))


def _placements(recs):
    ctx = recs[0]
    ctx["ranks"] = 20000


def _other_size(recs):
    for r in recs:
        if r["type"] == "pairs" and r["index"] == 1:
            r["params"] = dict(r["params"], size=64)


def _other_test(recs):
    for r in recs:
        if r["type"] == "pairs" and r["index"] == 1:
            r["test"] = "p2p.pingpong"


PAIRS = [
    ("a self-pair", _col("b", 0, 0), "not below b"),
    ("a negative median", _col("median_us", 0, -3.0), "negative time"),
    ("a rank out of range", _col("b", 0, 9), "rank 9 in a launch of 4 ranks"),
    ("arrays of unequal length", lambda recs: _pairs(recs)["median_us"].pop(), "unequal length"),
    ("the same step twice", _step_twice, "a second time"),
    ("step 7 of 3", _set("step", 7), "step 7 of a sweep of 3"),
    ("steps = 0", _set("steps", 0), "steps"),
    ("a rank in two pairs of one step", _both([_col("a", 1, 0), _col("b", 1, 2)]), "in two pairs of one step"),
    ("n = 0", _col("n", 0, 0), "n"),
    ("an inverted interval", _both([_col("ci_lo_us", 0, 9e3), _col("ci_hi_us", 0, 1.0)]), "outside its interval"),
    ("a pairs size that is not the point's", _other_size, "have parameters"),
    ("a pairs record naming another test", _other_test, "are of p2p.pingpong"),
    ("mode bogus", _set("mode", "bogus"), "mode"),
    ("a context of 20,000 ranks with 4 placements", _placements, "20000 ranks but 4 placements"),
    ("a minimum above the median", _col("min_us", 0, 1e6), "minimum"),
    ("a point index past the test's points", _set("index", 5), "point index 5 of 2 points"),
]


@pytest.mark.unit
@pytest.mark.parametrize("what,change,said", PAIRS, ids=[p[0] for p in PAIRS])
def test_a_damaged_pairs_record_is_refused_with_its_line_and_nothing_stored(tmp_path, what, change, said):
    d, recs = one_launch(tmp_path, "allpairs")
    change(recs)
    write_lines(d / "launch-1.jsonl", recs)
    db = tmp_path / "r.db"
    p = run_scope("import", d, db=db)
    assert p.returncode == 2 and "launch-1.jsonl, line" in p.stderr and said in p.stderr, p.stderr
    assert "nothing was imported" in p.stderr and p.stderr.count("\n") == 1
    assert json.loads(run_scope("runs", "--json", db=db).stdout) == []


@pytest.mark.unit
def test_the_recorded_sweeps_still_import_whole(tmp_path):
    """The checks refuse what the engine never writes, nothing it does: both recorded sweeps,
    every launch, import with every step."""
    db = tmp_path / "r.db"
    for name in ("allpairs", "allpairs-odd"):
        assert run_scope("import", FIXTURES / name, db=db).returncode == 0
    assert [r["status"] for r in json.loads(run_scope("runs", "--json", db=db).stdout)] == ["complete"] * 2


# ---------------------------------------------------------------- 3. a saved stream kept


@pytest.mark.mpi
@pytest.mark.parametrize("how", [["--sizes", "8"], ["--sizes", "8", "--launcher-args=--bogus-flag"], ["--dry-run"]])
def test_a_folder_holding_a_saved_stream_is_refused_and_the_stream_left_as_it_was(engine, tmp_path, how):
    saved = tmp_path / "s"
    shutil.copytree(FIXTURES / "clock-host", saved)
    before = {f.name: f.read_bytes() for f in saved.iterdir()}
    p = run_scope("run", "p2p.pingpong", *how, "--save-stream", saved, db=tmp_path / "r.db")
    assert p.returncode == 2 and "already holds a saved stream" in p.stderr, p.stderr
    assert {f.name: f.read_bytes() for f in saved.iterdir()} == before
    assert (
        not (tmp_path / "r.db").exists() or json.loads(run_scope("runs", "--json", db=tmp_path / "r.db").stdout) == []
    )


# ---------------------------------------------------------------- 4. modules (and test_every_option.py)


@pytest.mark.mpi
@pytest.mark.parametrize("option", [["--sizes", "8"], ["--budget", "0.05"], ["--procs", "1"]])
def test_the_screen_module_refuses_what_it_used_to_drop(engine, tmp_path, option):
    p = run_scope("run", "--module", "screen", *option, "--dry-run", db=tmp_path / "r.db")
    assert p.returncode == 2 and f"{option[0]} would change it" in p.stderr, p.stderr


@pytest.mark.mpi
def test_time_limit_outside_the_standard_module_is_refused(engine, tmp_path):
    for argv in (["--module", "screen", "--time-limit", "5"], ["p2p.pingpong", "--time-limit", "5"]):
        p = run_scope("run", *argv, "--dry-run", db=tmp_path / "r.db")
        assert p.returncode == 2 and "--time-limit" in p.stderr and "standard" in p.stderr, p.stderr


@pytest.mark.mpi
def test_a_module_run_measured_otherwise_carries_it_in_its_digest(engine, tmp_path):
    plain = json.loads(run_scope("run", "--module", "screen", "--dry-run", db=tmp_path / "r.db").stdout)
    other = json.loads(run_scope("run", "--module", "screen", "--timing", "barrier", "--dry-run").stdout)
    assert plain["module"].get("measured_with") is None and other["module"]["measured_with"] == {"timing": "barrier"}


# ---------------------------------------------------------------- 5. clock settings against --timeout


@pytest.mark.mpi
@pytest.mark.parametrize(
    "argv,words",
    [
        (["--clock-domain", "rank", "--sync-span", "60", "--timeout", "5"], ["--timeout 5", "--sync-span 60"]),
        (["--warm", "20", "--timeout", "3"], ["--timeout 3", "--warm 20"]),
    ],
)
def test_clock_settings_that_cannot_fit_the_timeout_are_refused_before_launch(engine, tmp_path, argv, words):
    p = run_scope("run", "coll.allreduce", "--sizes", "8", *argv, db=tmp_path / "r.db")
    assert p.returncode == 2 and all(w in p.stderr for w in words), p.stderr
    assert (
        not (tmp_path / "r.db").exists() or json.loads(run_scope("runs", "--json", db=tmp_path / "r.db").stdout) == []
    )


@pytest.mark.mpi
def test_a_timeout_the_clock_fits_in_is_accepted(engine, tmp_path):
    p = run_scope("run", "coll.allreduce", "--warm", "1", "--timeout", "30", "--dry-run", db=tmp_path / "r.db")
    assert p.returncode == 0, p.stderr


# ---------------------------------------------------------------- 6. build folders make cannot take


@pytest.mark.mpi
@pytest.mark.parametrize("char,name", [(" ", "space"), (":", "':'"), (";", "';'")])
def test_a_build_folder_make_cannot_take_is_refused_naming_the_character(engine, tmp_path, char, name):
    where = tmp_path / f"build{char}dir"
    p = run_scope("build", env={"SCOPE_BUILD_DIR": str(where)})
    assert p.returncode == 2 and f"has a {name} in its path" in p.stderr and "SCOPE_BUILD_DIR" in p.stderr, p.stderr
    assert not where.exists()


# ---------------------------------------------------------------- 7. environment variables


@pytest.mark.mpi
@pytest.mark.parametrize("value", ["-1", str(2**64), "1e309", "text", "１６"])
def test_scope_test_llc_out_of_range_is_refused_before_launch(engine, tmp_path, value):
    p = run_scope("run", "p2p.pingpong", "--sizes", "8", db=tmp_path / "r.db", env={"SCOPE_TEST_LLC": value})
    assert p.returncode == 2 and "SCOPE_TEST_LLC" in p.stderr, p.stderr
    assert (
        not (tmp_path / "r.db").exists() or json.loads(run_scope("runs", "--json", db=tmp_path / "r.db").stdout) == []
    )


@pytest.mark.mpi
@pytest.mark.parametrize("value,canary_off", [("false", False), ("no", False), ("0", False), ("off", False),
                                              ("yes", True), ("TRUE", True), ("1", True)])  # fmt: skip
def test_scope_no_canary_reads_booleans_as_people_write_them(engine, tmp_path, value, canary_off):
    # two points: a run of one point in one launch skips the probes whatever the variable says
    p = run_scope("run", "p2p.pingpong", "--sizes", "8,64", "--dry-run", env={"SCOPE_NO_CANARY": value})
    assert p.returncode == 0 and json.loads(p.stdout)["options"]["no-canary"] is canary_off, p.stderr


@pytest.mark.mpi
def test_scope_no_canary_that_is_neither_yes_nor_no_is_refused(engine, tmp_path):
    p = run_scope("run", "p2p.pingpong", "--dry-run", db=tmp_path / "r.db", env={"SCOPE_NO_CANARY": "maybe"})
    assert p.returncode == 2 and "SCOPE_NO_CANARY" in p.stderr and p.stderr.count("\n") == 1, p.stderr


@pytest.mark.unit
@pytest.mark.parametrize("value", ["soon", "-1", "inf", "1e400"])
def test_a_database_wait_that_is_no_number_of_seconds_is_refused(tmp_path, value):
    db = tmp_path / "r.db"
    replay("layers", db)
    p = run_scope("runs", db=db, env={"SCOPE_DB_TIMEOUT": value})
    assert p.returncode == 2 and "SCOPE_DB_TIMEOUT" in p.stderr and p.stderr.count("\n") == 1, p.stderr


# ---------------------------------------------------------------- 9. predict


@pytest.mark.mpi
@pytest.mark.parametrize(
    "argv,word",
    [
        (["kernel.multigrid", "-p", "n=4"], "n + 1 must be even"),
        (["kernel.cannon", "--procs", "1,2,16777216"], "a prediction goes up to 1,048,576 processes"),
        (["kernel.cannon", "--procs", "all"], "a prediction has no run"),
        (["kernel.cannon", "--procs", "1,pow2"], "a prediction has no run"),
    ],
)
def test_predict_refuses_what_it_cannot_predict_and_stores_nothing(engine, tmp_path, argv, word):
    db = tmp_path / "r.db"
    replay("pred-pingpong", db)
    p = run_scope("predict", *argv, db=db)
    assert p.returncode == 2 and word in p.stderr and "-n " not in p.stderr, p.stderr
    assert Store(db).db.execute("SELECT count(*) FROM predictions").fetchone()[0] == 0


@pytest.mark.mpi
def test_a_run_every_point_of_which_its_test_refuses_is_refused(engine, tmp_path):
    p = run_scope("run", "kernel.multigrid", "-p", "n=4", db=tmp_path / "r.db")
    assert p.returncode == 2 and "refuses every point" in p.stderr and "n + 1 must be even" in p.stderr, p.stderr
    assert (
        not (tmp_path / "r.db").exists() or json.loads(run_scope("runs", "--json", db=tmp_path / "r.db").stdout) == []
    )


@pytest.mark.unit
def test_predict_check_without_lower_levels_says_so(tmp_path):
    db = tmp_path / "r.db"
    rid = replay("pred-kernels", db)
    p = run_scope("predict", "--check", str(rid), db=db)
    assert "inputs from runs \n" not in p.stdout and "inputs from runs ;" not in p.stdout
    assert p.returncode == 0 and ("no input runs" in p.stdout or "inputs from runs 1" in p.stdout), p.stdout


# ---------------------------------------------------------------- 10. testbed up's values


@pytest.mark.unit
@pytest.mark.parametrize(
    "links,throttles,said",
    [
        (["０-1=10mbit"], [], "--link-rate"),
        ([], ["０=0.5"], "--throttle"),
        (["0-1=１0mbit"], [], "--link-rate"),
        (["1-0=10mbit", "0-1=20mbit"], [], "two rates"),
        ([], ["0=0.5", "0=0.2"], "two shares"),
        (["0-1=0mbit"], [], "--link-rate 0mbit"),
    ],
)
def test_testbed_values_in_ascii_digits_and_one_each(links, throttles, said):
    from scope.errors import ScopeError

    with pytest.raises(ScopeError) as e:
        parse_links(links, 3, parse_rate)
        parse_throttles(throttles, 3)
    assert said in e.value.message and "--rate " not in e.value.message


@pytest.mark.unit
def test_testbed_values_given_twice_alike_are_one():
    assert parse_links(["0-1=10mbit", "1-0=10mbit"], 3, parse_rate) == {(0, 1): "10mbit"}
    assert parse_throttles(["2=0.5", "2=0.5"], 3) == {2: 0.5}


@pytest.mark.unit
def test_testbed_up_refuses_full_width_host_counts_before_making_anything():
    p = run_scope("testbed", "up", "--hosts", "３", "--name", "r4none")
    assert p.returncode == 2 and "not a whole number" in p.stderr
    assert not Path("/run/scope/r4none.json").exists()


# ---------------------------------------------------------------- 11. show --ranks


@pytest.mark.unit
@pytest.mark.parametrize("fixture,ranks,said", [("allpairs-odd", "9", "has 5 ranks"), ("allpairs-odd", "1", "has none"),
                                                ("windows", "9", "has 2 ranks")])  # fmt: skip
def test_show_ranks_the_run_cannot_select_is_refused(tmp_path, fixture, ranks, said):
    db = tmp_path / "r.db"
    replay(fixture, db)
    for argv in (["show", "last", "--ranks", ranks], ["show", "last", "--ranks", ranks, "--json"]):
        p = run_scope(*argv, db=db)
        assert p.returncode == 2 and said in p.stderr, p.stderr


@pytest.mark.unit
def test_show_ranks_of_a_window_timed_run_still_selects(tmp_path):
    db = tmp_path / "r.db"
    replay("windows", db)
    p = run_scope("show", "last", "--ranks", "1", db=db)
    assert p.returncode == 0 and "ranks 1 only" in p.stdout, p.stderr


# ---------------------------------------------------------------- 8. left behind


def _segments() -> set[str]:
    return {f for f in os.listdir("/dev/shm") if f.startswith(("mpich_shm_", "scope."))}


@pytest.mark.mpi
def test_a_run_whose_database_is_locked_is_closed_by_it_and_leaves_no_segment(engine, tmp_path):
    """The database locked by another writer mid-run (exit 3): the run is closed by its own
    process as stopped, not later as a process that is gone, and its job leaves no segment."""
    db, before = tmp_path / "r.db", _segments()
    points = ["--sizes", "8-1M:x4", "--min-time", "0.4", "--budget", "1", "--launches", "1"]  # ~4 s in all
    argv = ["--db", str(db), "run", "p2p.pingpong", *points]
    p = subprocess.Popen([sys.executable, "-m", "scope", *argv, "--quiet"], stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, text=True, env=dict(os.environ, SCOPE_DB_TIMEOUT="0.5"))  # fmt: skip
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and p.poll() is None:
        with contextlib.suppress(sqlite3.Error):
            if sqlite3.connect(f"file:{db}?mode=ro", uri=True).execute("SELECT count(*) FROM points").fetchone()[0]:
                break
        time.sleep(0.05)
    lock = sqlite3.connect(db, isolation_level=None, timeout=30)
    lock.execute("BEGIN EXCLUSIVE")  # held well past the run's wait for it (0.5 s), then let go
    try:
        time.sleep(3.0)
    finally:
        lock.execute("COMMIT")
    code = p.wait(timeout=60)
    err = p.communicate()[1]
    if code == 0:
        pytest.skip("the run ended before the lock was taken")
    assert code == 3 and "locked" in err, err
    # its process closed it once the lock was gone (run.runner.close_when_free), before it exited
    (row,) = Store(db, readonly=True).runs()
    assert row["status"] == "incomplete" and row["reason"].startswith("stopped:"), dict(row)
    assert _segments() - before == set()


@pytest.mark.mpi
def test_make_stops_with_a_killed_scope(engine, tmp_path):
    """SIGKILL of scope while it builds an engine: make gets SIGTERM from the kernel and stops the
    compilers it started, where they went on for ~8 s."""
    build = tmp_path / "b"
    env = dict(os.environ, SCOPE_BUILD_DIR=str(build))
    p = subprocess.Popen([sys.executable, "-m", "scope", "build"], stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, env=env)  # fmt: skip

    def compilers() -> list[int]:
        out = []
        for d in filter(str.isdigit, os.listdir("/proc")):
            with contextlib.suppress(OSError):
                if str(build).encode() in Path(f"/proc/{d}/cmdline").read_bytes():
                    out.append(int(d))
        return [x for x in out if x != p.pid]

    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not compilers():
        time.sleep(0.02)
    assert compilers(), "the build started no compiler"
    p.kill()
    p.wait(timeout=10)
    gone_by = time.monotonic() + 3
    while compilers() and time.monotonic() < gone_by:
        time.sleep(0.05)
    assert compilers() == [], "make or a compiler outlived scope by 3 s"
