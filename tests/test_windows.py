"""The figures of a window-timed point's table row (MPIBench's shares above n x minimum, outliers,
a nonblocking point's overlap), derived once in analysis and carried alike by `show`'s table and
`show --json` (issue 42), on a recorded run (tests/fixtures/windows: coll.allreduce, nonblocking
no and overlap, 8 B and 4 KiB, with its samples)."""

from __future__ import annotations

import json
import statistics

import pytest

from scope.fetch.facts import derive_stored
from scope.store import Store
from tests.conftest import replay, run_scope


@pytest.fixture
def stored(tmp_path):
    db = tmp_path / "w.db"
    return db, replay("windows", db)


def by_hand(samples: list[float], factor: float) -> float:
    low = min(samples)
    return sum(x > factor * low for x in samples) / len(samples)


@pytest.mark.unit
def test_window_figures_are_the_samples(stored):
    db, rid = stored
    facts = derive_stored(Store(db), rid)
    ws = facts.windows()
    assert len(ws) == 4  # two sizes of each variant
    for w in ws:
        x = w.point.samples
        assert len(x) >= 5 and w.median_us == w.point.median
        assert w.above_2x_min == pytest.approx(by_hand(x, 2)) and w.above_4x_min == pytest.approx(by_hand(x, 4))
        med = statistics.median(x)
        assert w.outliers == sum(v > 10 * med for v in x)
        if w.point.params["nonblocking"] == "overlap":
            # 1 - (t_total - t_compute) / t_pure on the medians; its interval around it
            pure, comp = statistics.median(w.point.reference_samples), w.point.extra["compute_us"]
            assert w.overlap.value == pytest.approx(1 - (med - comp) / pure)
            assert w.overlap.ci_lo <= w.overlap.value <= w.overlap.ci_hi
        else:
            assert w.overlap is None
    assert facts.windows() is ws  # derived once


@pytest.mark.unit
def test_a_subset_of_ranks_is_its_own_completion(stored):
    db, rid = stored
    facts = derive_stored(Store(db), rid)
    one = facts.windows([1])
    for w, all_ranks in zip(one, facts.windows()):
        assert w.ranks == (1,) and w.point is all_ranks.point
        ends = w.point.window.end_us[1]  # rank 1's exit after the common start, a repetition each
        assert w.median_us == pytest.approx(statistics.median(ends) / (w.point.ops_per_iter or 1))
    with pytest.raises(ValueError):
        facts.windows([7])


@pytest.mark.unit
def test_show_json_carries_what_the_table_shows(stored):
    db, rid = stored
    doc = json.loads(run_scope("show", str(rid), "--json", db=db).stdout)
    table = run_scope("show", str(rid), db=db).stdout
    facts = derive_stored(Store(db), rid)
    assert len(doc["windows"]) == 4
    for got, w in zip(doc["windows"], facts.windows()):
        assert got["size"] == w.point.size and got["params"] == w.point.params
        assert got["above_2x_min"] == pytest.approx(w.above_2x_min) and got["outliers"] == w.outliers
        if w.overlap:
            ov = got["overlap"]
            assert ov["value"] == pytest.approx(w.overlap.value)
            # the table prints the same interval, in per cent
            assert f"{ov['value'] * 100:.0f} % ({ov['ci_lo'] * 100:.0f}..{ov['ci_hi'] * 100:.0f})" in table
    sub = json.loads(run_scope("show", str(rid), "--json", "--ranks", "0", db=db).stdout)
    assert all(w["ranks"] == [0] for w in sub["windows"])
    bad = run_scope("show", str(rid), "--json", "--ranks", "9", db=db)
    assert bad.returncode == 2 and "bad --ranks" in bad.stderr
