"""Real two-rank runs through the whole chain: engine, launcher, store, show, export."""

import csv
import io
import json
import os
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from scope.store import Store
from tests.conftest import SMALL_LLC, as_at_a_terminal, run_scope

pytestmark = pytest.mark.mpi

QUICK = ["--budget", "0.05", "--quiet"]


@pytest.fixture(scope="module")
def baseline(tmp_path_factory, engine):
    db = tmp_path_factory.mktemp("e2e") / "r.db"
    # the default launches (3), as a user's run makes them
    p = run_scope("run", "--sizes", "0,8,1K,64K", "--label", "e2e", *QUICK, db=db, env={"SCOPE_LAUNCHES": ""})
    return db, p


def test_baseline_run_completes_with_summary(baseline):
    db, p = baseline
    assert p.returncode == 0, p.stderr
    for test in ("p2p.pingpong", "p2p.pingping", "p2p.stream", "p2p.bistream", "p2p.exchange"):
        assert test in p.stdout
    assert "Results: run 1 in" in p.stdout and "Hockney" in p.stdout


def test_points_are_measured_and_consistent(baseline):
    db, _ = baseline
    s = Store(db)
    run = s.run(1)
    assert run["status"] == "complete" and run["label"] == "e2e"
    ctx = json.loads(run["context"])
    assert ctx["ranks"] == 2 and ctx["schema"] == 1 and ctx["timer"]["selected"]
    assert "MPICH" in ctx["mpi"]["library"] or "Open MPI" in ctx["mpi"]["library"]
    pts = s.points(1)
    assert len(pts) == 5 * 4
    assert run["launches"] == 3  # the default: launches are the replicates
    for p in pts:
        assert 0 < p["min"] <= p["median"] <= p["max"]
        assert p["ci_lo"] <= p["median"] <= p["ci_hi"]
        # (how many samples a launch keeps is the stopping rule's business: checked per launch below)
        assert p["count"] > 0 and len(s.samples(p)) == p["count"]
        rec = json.loads(p["record"])
        assert rec["validated"] == 2
        # the reported median is the median of the three launches' own medians
        assert rec["launches"]["n"] == 3 and p["median"] == pytest.approx(sorted(rec["launches"]["medians"])[1])
        assert sum(rec["launches"]["counts"]) == p["count"]
        launches = s.launch_points(1, p["seq"])
        for k, (own, samples) in enumerate(launches):
            # each launch met its precision target: 0.01 x sqrt(3) (three launches reach 0.01
            # together), or the looser one its earlier launches' spread allowed
            assert ctx["settings"]["precision"] == pytest.approx(0.01 * 3**0.5)
            # told of every launch before it that had an interval (one stopped by its budget
            # before it had one, as on a loaded machine, tells nothing)
            told = [e for e, _ in launches[:k] if e["stats"].get("median") and e["stats"].get("ci_rel") is not None]
            assert own.get("earlier_launches", 0) == len(told)
            assert own["precision"] == pytest.approx(target(launches[:k], own, ctx["settings"]["precision"]), abs=1e-3)
            rel = own["stats"].get("ci_rel")  # none when a budget-stopped launch has too few samples
            assert (rel is not None and rel <= own["precision"]) or own["stop"] in ("budget", "max_count")
            assert own["stats"]["median"] in rec["launches"]["medians"] and len(samples) == own["count"]
        assert rec["launches"]["precisions"] == [own["precision"] for own, _ in launches]
        if p["size"]:
            assert p["bw_median"] == pytest.approx(p["bytes_per_op"] / p["median"], rel=1e-6)
    # (that 64 KiB takes longer than 8 B is a claim about the machine: bench/claims.py)


def target(earlier: list, own: dict, precision: float) -> float:
    """The target engine/core/rep.c (rep_target) sets a launch, recomputed from the records by
    a test oracle written from its description (tests/oracles.py)."""
    from tests.oracles import launch_target

    known = [(e["stats"]["median"], e["stats"]["ci_rel"]) for e, _ in earlier if e["stats"].get("ci_rel") is not None]
    return launch_target(known, own["stats"]["median"], own["stats"]["ci_rel"], precision)


def test_fixed_launches_are_each_measured_to_the_share(engine, db):
    p = run_scope("run", "p2p.pingpong", "--sizes", "8,64K", "--launches", "2", "--fixed-launches", *QUICK, db=db)
    assert p.returncode == 0, p.stderr
    s = Store(db)
    for pt in s.points(1):
        for own, _ in s.launch_points(1, pt["seq"]):
            assert "earlier_launches" not in own and own["precision"] == pytest.approx(0.01 * 2**0.5)


def test_show_and_exports(baseline, tmp_path):
    db, _ = baseline
    p = run_scope("show", "1", db=db)
    assert p.returncode == 0 and "one-way latency (RTT/2)" in p.stdout and "t0 =" in p.stdout
    assert "3 launches: the median is the median of launch medians" in p.stdout
    # the next-launch column: its header wraps to "next" over "launch us" where the table's data
    # make it wider than the view's 100 columns (which it is depends on the figures measured)
    assert "next launch us" in p.stdout or re.search(r"\bnext\b.*\n.*\blaunch us\b", p.stdout)
    out = tmp_path / "run.csv"
    assert run_scope("export", "1", "-o", out, db=db).returncode == 0
    rows = list(csv.DictReader(io.StringIO(out.read_text())))
    assert len(rows) == 20 and {"mode", "window", "median", "ci_lo"} <= set(rows[0])
    assert {r["ci_covers"] for r in rows} == {"launch to launch (3 launches)"}  # what every interval covers
    js = json.loads(run_scope("export", "1", "--format", "json", db=db).stdout)
    assert len(js["points"]) == 20 and len(js["points"][0]["samples"]) == js["points"][0]["count"]
    assert any(f["hockney"] for f in js["fits"])
    smp = run_scope("export", "1", "--samples", db=db).stdout.splitlines()
    assert len(smp) - 1 == sum(r["count"] for r in js["points"])
    missing = run_scope("export", "1", "-o", tmp_path / "no" / "such" / "x.csv", db=db)
    assert missing.returncode == 2 and "does not exist" in missing.stderr


@pytest.mark.parametrize("mode", ["standard", "sync", "ready", "buffered"])
def test_send_modes_pass_data_checks(engine, db, mode):
    p = run_scope(
        "run",
        "p2p.pingpong",
        "p2p.stream",
        "--sizes",
        "0,8,64K",
        "-p",
        f"mode={mode}",
        "-p",
        "blocking=yes,no",
        *QUICK,
        db=db,
    )
    assert p.returncode == 0, p.stderr
    pts = Store(db).points(1)
    assert len(pts) == 2 * 2 * 3
    assert all(json.loads(x["params"])["mode"] == mode for x in pts)


def test_corrupted_data_is_an_error_not_a_point(engine, db):
    p = run_scope(
        "run",
        "p2p.pingpong",
        "p2p.exchange",
        "--sizes",
        "8,1K",
        *QUICK,
        db=db,
        env={"SCOPE_TEST_CORRUPT": "1"},
    )
    assert p.returncode == 1
    assert "data check failed" in p.stderr
    s = Store(db)
    run = s.run(1)  # ran to its end, but not complete: its points failed their checks
    assert run["status"] == "errors" and "4 point(s) failed their check" in run["reason"] and not s.points(1)
    assert len([e for e in s.events(1) if e["type"] == "error"]) == 4


def test_a_rank_that_dies_keeps_what_was_measured(engine, db):
    import glob

    before = set(glob.glob("/dev/shm/mpich_shm_*"))
    p = run_scope("run", "p2p.pingpong", "--sizes", "8,16,32,64,128", *QUICK, db=db, env={"SCOPE_TEST_KILL": "1:2"})
    assert not set(glob.glob("/dev/shm/mpich_shm_*")) - before  # the dead job's segments are removed
    assert p.returncode == 4
    err = [ln for ln in p.stderr.splitlines() if ln.startswith("scope: error")]
    assert len(err) == 1 and "stopped early" in err[0] and "2 points were kept" in err[0]
    assert "Traceback" not in p.stderr
    s = Store(db)
    run = s.run(1)
    assert run["status"] == "incomplete" and ("died" in run["reason"] or "exit status" in run["reason"])
    assert run["stderr"]
    kept = [x["size"] for x in s.points(1)]  # points are visited in a shuffled order
    assert len(kept) == 2 and set(kept) <= {8, 16, 32, 64, 128}


def test_oversubscription_is_detected_throttled_and_recorded(engine, db):
    ranks = (len(os.sched_getaffinity(0))) + 1
    env = {k: v for k, v in os.environ.items() if not k.startswith("MPIR_CVAR_CH4_PROGRESS_THROTTLE")}
    p = run_scope("run", "p2p.exchange", "-n", ranks, "--sizes", "8", *QUICK, db=db, env=env)
    assert p.returncode == 0, p.stderr
    assert "oversubscribed" in p.stderr
    ctx = json.loads(Store(db).run(1)["context"])
    assert ctx["oversubscribed"] is True
    assert ctx["env"].get("MPIR_CVAR_CH4_PROGRESS_THROTTLE") == "1"
    assert "OVERSUBSCRIBED" in run_scope("show", db=db).stdout
    kinds = [r[0] for r in sqlite3.connect(db).execute("SELECT kind FROM events WHERE type = 'warning'")]
    assert "oversubscribed" in kinds and "busy_polling" not in kinds


def test_single_rank_is_refused_and_the_engine_skips(engine, db):
    p = run_scope("run", "p2p.pingpong", "-n", "1", "--sizes", "8", *QUICK, db=db)
    assert p.returncode == 2 and "needs at least 2 ranks; this run has 1 (run with -n 2)" in p.stderr
    assert not db.exists() or not Store(db).runs()
    # the engine on its own (as a script might launch it) writes a skip record with the reason
    recs = [
        json.loads(x)
        for x in subprocess.run(
            [str(engine), "--tests", "p2p.pingpong", "--sizes", "8"], capture_output=True, text=True
        ).stdout.splitlines()
    ]
    skip = [r for r in recs if r["type"] == "skip"]
    assert skip and "at least 2 ranks" in skip[0]["reason"] and recs[-1]["type"] == "end"


def test_offcache_cycles_buffers_beyond_the_cache(engine, db):
    p = run_scope("run", "p2p.pingpong", "--sizes", "8,64K", "--offcache", *QUICK, db=db, env=SMALL_LLC)
    assert p.returncode == 0, p.stderr
    s = Store(db)
    llc = json.loads(s.run(1)["context"])["llc_bytes"]
    assert llc == int(SMALL_LLC["SCOPE_TEST_LLC"])  # the cache the slots were sized by is the one recorded
    for row in s.points(1):
        buf = json.loads(row["record"])["buffers"]
        slot = -(-buf["send_bytes"] // 4096) * 4096 + -(-buf["recv_bytes"] // 4096) * 4096
        assert buf["slots"] * max(slot, 8192) >= 2 * llc


def test_interrupt_keeps_points_and_marks_the_run(engine, db):
    import signal
    import subprocess
    import sys
    import time

    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "scope",
            "--db",
            str(db),
            "run",
            "p2p.pingpong",
            "--sizes",
            "0-4M",
            "--budget",
            "0.5",
            "--precision",  # out of reach: every point runs its 0.5 s, the run is still going
            "0.00001",
            "--max-count",
            "100000000",
            "--quiet",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=as_at_a_terminal,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        time.sleep(0.2)
        if db.exists():
            try:
                if sqlite3.connect(db).execute("SELECT count(*) FROM points").fetchone()[0] >= 2:
                    break
            except sqlite3.OperationalError:
                pass
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "interrupted" in err and "Traceback" not in err
    run = Store(db).run(1)
    assert run["status"] == "incomplete" and "interrupted" in run["reason"]
    assert len(Store(db).points(1)) >= 2


def test_points_are_visited_in_a_fresh_order_each_launch(engine):
    """Shuffled per launch (SKaMPI, ReproMPI): the same points, the same indexes, another order."""
    mpiexec = Path(sys.executable).parent / "mpiexec"

    def order(*extra):
        argv = [str(mpiexec), "-n", "2", str(engine), "--tests", "p2p.pingpong,p2p.pingping"]
        argv += ["--sizes", "8,16,32,64,128,256", "--budget", "0.01", "--min-time", "0", "--seed", "5", *extra]
        out = subprocess.run(argv, capture_output=True, text=True, timeout=120).stdout.splitlines()
        return [r["index"] for r in map(json.loads, out) if r["type"] == "point"]

    listed, one, two, again = order("--order", "listed"), order("--launch", "1"), order("--launch", "2"), order()
    assert listed == list(range(12))
    assert sorted(one) == sorted(two) == listed  # every point, once
    assert one != listed and one != two  # another order per launch
    assert again == one  # --launch 1 is the default: the seed and launch fix the order


def test_a_window_that_outlasts_the_budget_is_cut_to_fit(engine, db):
    # a 4 MiB message takes ~0.3 ms here, and could not take under 0.1 ms below 40 GB/s: with a
    # 1 ms budget a window of 64 is over 6 ms, so the pilot cuts it to what a tenth of the budget
    # holds, one message; the point keeps the asked window as its identity and says what ran
    p = run_scope("run", "p2p.stream", "--sizes", "4M", "--budget", "0.001", "--quiet", db=db)
    assert p.returncode == 0, p.stderr
    (pt,) = Store(db).load_run(1).points
    assert pt.params["window"] == 64 and pt.ops_per_iter == 1
    assert "stream_window" in pt.gave_up and pt.note.startswith("window cut from 64 to 1 messages")
    assert pt.bw_median > 0
    # 32 KiB windows (2 MiB a window, the slots' limit) fit a tenth of a 60 s budget unless one
    # message took over 90 ms: not piloted down (the budget is large because on a loaded machine,
    # with both ranks polling, one 32 KiB message timed 38 ms in the pilot and the window was cut
    # to 13 of a 5 s budget); the max count ends the point long before the budget; 64 KiB windows
    # are halved to keep the slots in cache
    p = run_scope("run", "p2p.stream", "--sizes", "32K,64K", "--order", "listed", "--budget", "60", "--max-count", "20",
                  "--quiet", db=db)  # fmt: skip
    small, large = Store(db).load_run(2).points
    assert small.ops_per_iter == 64 and "stream_window" not in small.gave_up and not small.note
    assert large.ops_per_iter == 32 and large.note.startswith("window reduced from 64 to 32")
    shown = run_scope("show", "2", db=db).stdout  # what ran, under the table
    assert f"  64 KiB: {large.note}" in shown and "  32 KiB:" not in shown


def test_named_tests_make_three_launches_unless_told(engine, db):
    """A user's run of named tests is replicated like the baseline (a single launch's interval
    missed 7.6x swings between launches); SCOPE_LAUNCHES or --launches say otherwise."""
    p = run_scope("run", "p2p.pingpong", "--sizes", "8", *QUICK, db=db, env={"SCOPE_LAUNCHES": ""})
    assert p.returncode == 0, p.stderr
    assert Store(db).run(1)["launches"] == 3 and "3 launches" in p.stdout
    bad = run_scope("run", "p2p.pingpong", db=db, env={"SCOPE_LAUNCHES": "many"})
    assert bad.returncode == 2 and "SCOPE_LAUNCHES must be a whole number from 1 to 100" in bad.stderr
    assert len(Store(db).runs()) == 1  # refused before anything was stored
