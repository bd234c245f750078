"""p2p.mbw_mr (OSU's osu_mbw_mr): N/2 pairs streaming at once.  Its figures are invariants of
one record: the reported time is one message's share of a repetition over every pair, so
ops_per_iter is the window times the pairs, and bandwidth is the size over that time."""

import json

import pytest

from scope.run.plan import ask
from scope.store import Store
from tests.conftest import run_scope

pytestmark = pytest.mark.mpi


def test_every_pair_s_window_counts_and_bandwidth_is_size_over_time(engine, db):
    p = run_scope(
        "run", "p2p.mbw_mr", "-n", "2", "--sizes", "8,4K", "-p", "window=16,64", "--budget", "0.05",
        "--min-count", "10", "--max-count", "40", "--quiet", db=db,
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    s = Store(db)
    assert not [e for e in s.events(1) if e["type"] in ("error", "skip")]
    recs = [json.loads(x["record"]) for x in s.points(1)]
    assert len(recs) == 4
    for r in recs:
        pairs = r["params"]["procs"] // 2
        assert r["extra"]["pairs"] == pairs == 1
        assert r["ops_per_iter"] == r["params"]["window"] * pairs
        assert r["bytes_per_op"] == r["params"]["size"]
        assert r["bandwidth_MBps"]["median"] == pytest.approx(r["params"]["size"] / r["stats"]["median"], rel=1e-9)
        assert r["validated"] == 2  # checked before and after measuring


def test_a_corrupted_message_is_caught(engine, db):
    p = run_scope(
        "run", "p2p.mbw_mr", "-n", "2", "--sizes", "1K", "--budget", "0.05", "--quiet",
        db=db, env={"SCOPE_TEST_CORRUPT": "1"},
    )  # fmt: skip
    assert p.returncode == 1 and "data check failed" in p.stderr


def test_it_is_swept_over_process_counts(engine):
    plan = ask(engine, ["--tests", "p2p.mbw_mr", "--sizes", "8", "--procs", "2,4"], 4)
    assert plan.tests[0].procs == [2, 4] and plan.points == 2
