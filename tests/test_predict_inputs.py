"""Which measured inputs a kernel's prediction draws on (issue 40), on a replayed store: the lower
levels (tests/fixtures/pred-*), a kernel run, and runs added after it.  The rule (inputs.RULE):
the same MPI library and hosts, each lower test at its defaults, the procs a point needs (else
the nearest), the newest.  An unrelated run moves no prediction, fresh or frozen; a better-matching
one moves the points it matches, and `predict --check` names, for each point, what it used."""

import json
import sqlite3

import pytest

from scope.analysis.inputs import RULE
from tests.conftest import replay, run_scope

pytestmark = pytest.mark.unit


@pytest.fixture
def store(db):
    """Runs 1-4: ping-pong, node.dgemm at 1 rank, node.stream at 1 and 2, the kernels at 1 and 2."""
    for name in ("pred-pingpong", "pred-dgemm", "pred-stream", "pred-kernels"):
        replay(name, db)
    return db


def check(db, *extra) -> dict:
    p = run_scope("predict", "--check", "4", *extra, "--json", db=db)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def predicted(doc: dict) -> list:
    return [(x["test"], x["procs"], x["predicted_us"], x["used"]) for x in doc["points"]]


def relabel(db, run: int, column: str, value: str) -> None:
    """A replayed run made to look measured with another MPI or on other hosts."""
    with sqlite3.connect(db) as c:
        c.execute(f"UPDATE runs SET {column} = ? WHERE id = ?", (value, run))


def test_an_unrelated_run_moves_no_prediction_fresh_or_frozen(store):
    frozen = check(store)  # frozen now, the run's first check
    fresh = check(store, "--again")
    assert predicted(fresh) == predicted(frozen) and fresh["rule"] == RULE
    assert all(x["predicted_us"] for x in fresh["points"])
    # newer runs that must not count: a ping-pong in another send mode (not the test's defaults),
    # a ping-pong by another MPI, node.dgemm and node.stream measured on other hosts
    replay("pred-sync", store)  # run 5
    relabel(store, replay("pred-pingpong", store), "mpi_library", "Open MPI v5.0.11")  # run 6
    relabel(store, replay("pred-dgemm2", store), "hosts", '["elsewhere"]')  # run 7
    relabel(store, replay("pred-stream", store), "hosts", '["elsewhere"]')  # run 8
    assert predicted(check(store)) == predicted(frozen)  # frozen: as it was said
    again = check(store, "--again")
    assert predicted(again) == predicted(frozen) and again["input_runs"] == [
        1,
        2,
        3,
        4,
    ]  # 4: jacobi's own rate on one rank


def lacking(doc: dict, test: str, procs: int) -> list:
    return next(x["lacking"] for x in doc["points"] if x["test"] == test and x["procs"] == procs)


def test_a_better_matching_input_moves_the_points_it_matches_and_is_named(store):
    first = check(store, "--again")
    # the 2-rank matmul took node.dgemm at 1 rank, the nearest measured: named, with the run
    # that would measure the matching one
    assert lacking(first, "kernel.matmul", 2) == [
        "scope run -n 2 node.dgemm -p n=128 --procs 2 (used procs=1, the nearest measured)"
    ]
    assert lacking(first, "kernel.matmul", 1) == []
    before = {(t, n): (us, used) for t, n, us, used in predicted(first)}
    dgemm2 = replay("pred-dgemm2", store)  # node.dgemm at 2 ranks: what a 2-rank matmul point needs
    second = check(store, "--again")
    assert lacking(second, "kernel.matmul", 2) == []
    after = {(t, n): (us, used) for t, n, us, used in predicted(second)}
    assert after[("kernel.matmul", 1)] == before[("kernel.matmul", 1)]  # 1 rank: still procs=1's
    us, used = after[("kernel.matmul", 2)]
    assert us != before[("kernel.matmul", 2)][0]
    assert any(u.startswith("DGEMM") and f"procs=2, run {dgemm2})" in u and "node.dgemm" in u for u in used), used
    assert any(u.startswith("DGEMM") and "procs=1, run 2)" in u for u in before[("kernel.matmul", 2)][1])
    # the jacobi points draw on no DGEMM and do not move
    assert after[("kernel.jacobi", 2)] == before[("kernel.jacobi", 2)]
    text = run_scope("predict", "--check", "4", db=store).stdout
    assert f"inputs (chosen by: {RULE}):" in text
    matmul2 = next(ln for ln in text.splitlines() if ln.startswith("kernel.matmul") and " 2 " in ln and "row" in ln)
    numbers = matmul2.split()[-1].split(",")
    listed = {ln.split(". ", 1)[0].strip(): ln.split(". ", 1)[1] for ln in text.splitlines() if ln.startswith("  ")}
    assert any(f"procs=2, run {dgemm2})" in listed[n] for n in numbers)
