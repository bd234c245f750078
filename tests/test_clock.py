"""The global clock (issue 39) from recorded launches (tests/fixtures/clock-*): one clock domain on
one host, and every rank synchronised as its own host by the binomial tree and by SKaMPI's linear
method, 4 ranks.  Each record is checked against what the method must have done (the tree's
parents and depths, the domains) and against itself (the bound of a child is at least its
parent's, since bounds add along the path; the counts and maxima are those of the ranks); the
summary `show` prints is checked against the records.  The arithmetic itself (fits, composition,
bounds) is checked by hand-computed cases in engine/unit/test_clock.c.  No time is measured here."""

import json

import pytest

from scope.analysis.clock import clock_summary
from scope.analysis.facts import derive
from scope.model import Event
from scope.store import Store
from scope.views.fmt import clock_text
from tests.conftest import FIXTURES, replay


def clocks(name: str) -> list[dict]:
    lines = (FIXTURES / name / "launch-1.jsonl").read_text().splitlines()
    return [r for r in map(json.loads, lines) if r.get("type") == "clock"]


def check_record(rec: dict) -> None:
    """What holds within any clock record."""
    ranks = rec["ranks"]
    assert rec["max_predicted_error_ns"] == max(x["predicted_error_ns"] for x in ranks)
    if rec.get("truth"):
        assert rec["max_error_ns"] == max(x["error_ns"] for x in ranks)
        assert rec["within_bound"] == sum(x["error_ns"] <= x["predicted_error_ns"] for x in ranks)
        for x in ranks:
            assert x["error_ns"] == pytest.approx(abs(x["offset_ns"] - x["true_offset_ns"]), abs=1e-6)
    counted = sorted(r for d in rec["domains"] for r in expand(d["ranks"]))
    assert counted == list(range(len(ranks) + 1))  # every rank in exactly one domain
    assert all(d["count"] == len(expand(d["ranks"])) for d in rec["domains"])


def expand(text: str) -> list[int]:
    out = []
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        out += range(int(lo), int(hi or lo) + 1)
    return out


@pytest.mark.unit
def test_one_host_is_one_clock_domain_with_no_error():
    for rec in clocks("clock-host"):
        check_record(rec)
        (dom,) = rec["domains"]
        assert dom["ranks"] == "0-1" and dom["leader"] == 0 and "every read of a member fell between" in dom["shared"]
        assert rec["rounds"] == 0 and rec["exchanges"] == 0  # nothing to synchronise
        (r1,) = rec["ranks"]
        assert r1["clock_of"] == 0 and r1["offset_ns"] == 0 and r1["predicted_error_ns"] == 0 and r1["error_ns"] == 0


@pytest.mark.unit
def test_the_tree_pairs_each_rank_with_its_lowest_bit_cleared_and_bounds_add_down_it():
    recs = clocks("clock-tree")
    assert [r["at"] for r in recs] == ["sync", "end"]
    for rec in recs:
        check_record(rec)
        assert rec["method"] == "tree" and rec["clock_domain"] == "rank" and rec["rounds"] == 2
        assert len(rec["domains"]) == 4 and all(d["count"] == 1 for d in rec["domains"])
        by = {x["rank"]: x for x in rec["ranks"]}
        for r, x in by.items():
            assert x["clock_of"] == r and x["parent"] == r & (r - 1) and x["depth"] == bin(r).count("1")
        # rank 3's path is 3 -> 2 -> 0: its bound is its parent's plus its own edge's
        assert by[3]["predicted_error_ns"] >= by[2]["predicted_error_ns"] > 0
    # the end reading comes after the run's drift: no bound shrinks with time since the sync
    for r in range(1, 4):
        assert recs[1]["ranks"][r - 1]["predicted_error_ns"] >= recs[0]["ranks"][r - 1]["predicted_error_ns"]


@pytest.mark.unit
def test_the_linear_method_pairs_every_rank_with_rank_0():
    for rec in clocks("clock-linear"):
        check_record(rec)
        assert rec["method"] == "linear" and rec["rounds"] == 3
        assert all(x["parent"] == 0 and x["depth"] == 1 for x in rec["ranks"])


@pytest.mark.unit
@pytest.mark.parametrize("name", ["clock-host", "clock-tree", "clock-linear"])
def test_the_summary_is_the_records(db, name):
    run = Store(db).load_run(replay(name, db))
    recs = clocks(name)
    c = derive(run).clock
    assert c == clock_summary(run.events)
    assert c.syncs == sum(r["at"] == "sync" for r in recs)
    assert c.predicted_ns == max(r["max_predicted_error_ns"] for r in recs)
    assert c.measured_ns == max(r["max_error_ns"] for r in recs)
    assert c.checked == sum(len(r["ranks"]) for r in recs) and c.within == sum(r["within_bound"] for r in recs)
    assert c.domains == len(recs[-1]["domains"]) and c.sync_s == pytest.approx(recs[0]["sync_s"])
    text = clock_text(c)
    assert text.startswith(f"{recs[0]['method']}: ")
    assert f"within the bound for {c.within} of {c.checked} rank readings" in text
    assert ("every rank reads one counter" in text) == (name == "clock-host")
    assert ("--clock-domain rank" in text) == (name != "clock-host")


@pytest.mark.unit
def test_records_before_clock_domains_still_summarise():
    """Runs stored before clock domains had one record per sync, the truth only on one host."""
    old = {"type": "clock", "method": "min-RTT offset per batch", "one_host": True, "reference_rank": 0,
           "ranks": [{"rank": 1, "offset_ns": 5.0, "drift_ppm": 0.1, "fit_residual_ns": 3.0,
                      "predicted_error_ns": 40.0, "true_offset_ns": 0.0, "true_drift_ppm": 0.0, "error_ns": 5.0}],
           "max_predicted_error_ns": 40.0, "max_error_ns": 5.0}  # fmt: skip
    c = clock_summary([Event("clock", None, None, None, None, None, old)])
    assert (c.syncs, c.predicted_ns, c.measured_ns, c.method, c.checked, c.within) == (1, 40.0, 5.0, None, 1, 1)
    assert (
        clock_text(c)
        == "error bound up to 40.0 ns; true error up to 5.00 ns, within the bound for 1 of 1 rank readings"
    )
