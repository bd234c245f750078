"""Issue 72: what a whole run's views read of every point, read without its whole record: the
record's PART_KEYS kept as a column of their own (store/encode.py part_text), decoded alone
(store/decode.py); a store written before the column reads them from the record, the same;
the points a run reports found by two queries of the index, the same rows as the one query
with a correlated OR that visited every launch's row."""

from __future__ import annotations

import json

import pytest

from scope.fetch.facts import derive_stored
from scope.model import PART_KEYS
from scope.store import Store, decode
from scope.views.terminal import show_run
from tests.conftest import replay

pytestmark = pytest.mark.unit

# The rule the two queries stand in for (points.py before), the reference the test reads by.
ONE_QUERY = (
    "SELECT * FROM points p WHERE run_id = ?"
    " AND (launch IS NULL OR (launch = (SELECT min(launch) FROM points q WHERE q.run_id = p.run_id"
    " AND q.seq = p.seq) AND NOT EXISTS (SELECT 1 FROM points q WHERE q.run_id = p.run_id"
    " AND q.seq = p.seq AND q.launch IS NULL))) ORDER BY seq, id"
)


@pytest.fixture(params=["windows", "launches"])
def stored(request, tmp_path):
    db = tmp_path / "r.db"
    rid = replay(request.param, db)
    store = Store(db)
    yield store, rid
    store.close()


def test_a_points_part_is_its_records_keys_that_views_read(stored):
    store, rid = stored
    rows = store.db.execute("SELECT record, part FROM points WHERE run_id = ?", (rid,)).fetchall()
    assert rows and all(r["part"] is not None for r in rows)
    for r in rows:
        rec = json.loads(r["record"])
        assert json.loads(r["part"]) == {k: rec[k] for k in PART_KEYS if k in rec}
    assert any({"launches", "window"} & set(json.loads(r["part"])) for r in rows)


def _shown(store, rid) -> str:
    return show_run(derive_stored(store, rid), None, None, None)


def _sampled(store, rid) -> int:
    """The points with 5 samples or more: where a window-timed one's record keeps no overlap (one
    stored before issue 72), the overlap asks for its reference samples (a nonblocking point's),
    which only its whole record holds."""
    return sum(p.window is not None and len(p.samples) >= 5 for p in store.load_run(rid).points)


def _without_overlaps(store) -> None:
    """The records as they were stored before issue 72: no overlap kept in them."""
    store.db.execute("UPDATE points SET record = json_remove(record, '$.overlap', '$.tail'), part = NULL")
    store.db.commit()


@pytest.mark.parametrize("older", [False, True], ids=["kept overlaps", "records before issue 72"])
def test_show_reads_no_whole_record_and_each_part_once(stored, monkeypatch, older):
    """Show reads each point's part once, and no whole record where the overlaps are kept in
    the records; a sampled window-timed point's whole record where they are not."""
    store, rid = stored
    if older:
        _without_overlaps(store)
    sampled = _sampled(store, rid) if older else 0
    whole, parts = [], []
    real_record, real_part = decode._record, decode._part
    monkeypatch.setattr(decode, "_record", lambda t, s: whole.append(1) or real_record(t, s))
    monkeypatch.setattr(decode, "_part", lambda t, s: parts.append(1) or real_part(t, s))
    loads: list[int] = []  # the run alone: no history of its configuration here
    real_load = store.load_run
    monkeypatch.setattr(store, "load_run", lambda i, **k: loads.append(i) or real_load(i, **k))
    text = _shown(store, rid)
    rows = store.points(rid)
    assert "median" in text and rows and loads == [rid], loads
    assert len(whole) == sampled and len(parts) == len(rows)


def test_a_store_written_before_the_column_shows_the_same(stored, monkeypatch):
    store, rid = stored
    before = _shown(store, rid)
    _without_overlaps(store)  # and before the overlaps were kept (issue 72)
    whole: list[int] = []
    real_record = decode._record
    monkeypatch.setattr(decode, "_record", lambda t, s: whole.append(1) or real_record(t, s))
    assert _shown(store, rid) == before
    assert len(whole) == _sampled(store, rid)  # the part is read from the record's text, not its decoding


def test_a_record_changed_after_drops_its_part(stored):
    """A record rewritten by hand (or by a later scrub) leaves no part that says otherwise."""
    store, rid = stored
    pid, text = store.db.execute("SELECT id, record FROM points WHERE run_id = ? LIMIT 1", (rid,)).fetchone()
    store.db.execute("UPDATE points SET record = ? WHERE id = ?", (text.replace('"', '"', 1), pid))
    assert store.db.execute("SELECT part FROM points WHERE id = ?", (pid,)).fetchone()[0] is None
    others = store.db.execute("SELECT count(*) FROM points WHERE part IS NULL").fetchone()[0]
    assert others == 1


def test_the_points_a_run_reports_are_the_rule_of_one_query(stored):
    """Combined points, and a point whose launches were not combined (its combined row gone,
    as a run stopped before combining leaves it) by its first launch's row, in the run's order."""
    store, rid = stored
    db = store.db
    combined = [r["seq"] for r in db.execute("SELECT seq FROM points WHERE run_id = ? AND launch IS NULL", (rid,))]
    launched = {r["seq"] for r in db.execute("SELECT seq FROM points WHERE run_id = ? AND launch > 1", (rid,))}
    if combined and launched:
        db.execute("DELETE FROM points WHERE run_id = ? AND launch IS NULL AND seq = ?", (rid, sorted(launched)[0]))
    ref = [r["id"] for r in db.execute(ONE_QUERY, (rid,))]
    assert [r["id"] for r in store.points(rid)] == ref
    tests = {r["test"] for r in db.execute("SELECT test FROM points WHERE run_id = ?", (rid,))}
    for t in tests:
        assert [r["id"] for r in store.points(rid, t)] == [r["id"] for r in store.points(rid) if r["test"] == t]
    if combined and launched:
        first = [r for r in store.points(rid) if r["launch"] is not None]
        assert [r["seq"] for r in first] == [sorted(launched)[0]] and first[0]["launch"] == 1
