"""Issue 72: a window-timed point's per-rank times kept as a binary column beside its record
(store/windows.py): the record's JSON comes back byte for byte, only exact arrays are moved,
an older store's records are moved by its migration, and a view that does not draw them does
not read them."""

from __future__ import annotations

import gzip
import json
import sqlite3
from pathlib import Path

import msgspec
import pytest

from scope.store import Store, windows
from tests.conftest import replay

pytestmark = pytest.mark.unit
FIXTURES = Path(__file__).parent / "fixtures"


def engine_points() -> list[dict]:
    lines = (FIXTURES / "windows" / "launch-1.jsonl").read_text().splitlines()
    recs = [json.loads(x) for x in lines if x.strip()]
    return [{k: v for k, v in r.items() if k != "samples"} for r in recs if r["type"] == "point"]


def test_a_record_split_and_joined_is_the_same_json_less_its_arrays_text():
    pts = engine_points()
    assert pts
    for rec in pts:
        small, blob = windows.split(rec)
        assert blob is not None and small["per_rank"]["start_us"] is None and small["per_rank"]["end_us"] is None
        assert list(small["per_rank"]) == list(rec["per_rank"])  # the keys keep their places
        assert msgspec.json.encode(windows.joined(small, blob)) == msgspec.json.encode(rec)
        ranks, reps = len(rec["per_rank"]["start_us"]), len(rec["per_rank"]["start_us"][0])
        assert len(blob) == 16 + 2 * (8 + 8 * ranks * reps)
        arrays_text = sum(len(msgspec.json.encode(rec["per_rank"][k])) for k in windows.KEYS)
        assert len(msgspec.json.encode(small)) == len(msgspec.json.encode(rec)) - arrays_text + 2 * len("null")
    assert windows.split(pts[0])[0] is not pts[0] and pts[0]["per_rank"]["start_us"]  # the input is not changed
    barrier = {"timing": "barrier", "per_rank": {"start_us": [[0, 0], [0, 0]], "end_us": [[3.5, 4.25], [5.0, 2.5]]}}
    small, blob = windows.split(barrier)  # starts all integers, ends all floats: both come back as they were
    assert blob is not None and msgspec.json.encode(windows.joined(small, blob)) == msgspec.json.encode(barrier)


@pytest.mark.parametrize(
    "start, end",
    [
        ([[0.5, 1.0], [0.25, 0]], [[1.5, 2.0], [1.25, 3.0]]),  # an integer among floats would come back 0.0
        ([[0, 1]], [[2**63, 1]]),  # past int64
        ([[0.5, 1.0], [0.25]], [[1.5, 2.0], [1.25]]),  # ragged
        ([[0.5, None]], [[1.5, 2.0]]),  # a missing value
        ([[0.5, 1.0]], [[1.5, 2.0], [2.5, 3.0]]),  # shapes differ
        ([], []),
        ("x", [[1.0]]),
    ],
)
def test_only_arrays_that_come_back_exactly_are_moved(start, end):
    """Rectangular arrays, all floats or all integers in each, are moved; not these."""
    rec = {"type": "point", "per_rank": {"own_us_median": [1.0], "start_us": start, "end_us": end}}
    small, blob = windows.split(rec)
    assert blob is None and small is rec


HEAD_2x1 = b"\x02" + b"\x00" * 7 + b"\x01" + b"\x00" * 7  # 2 ranks, 1 repetition: 2 x (8 + 16) bytes to follow
KIND_3 = b"\x03" + b"\x00" * 7


@pytest.mark.parametrize(
    "blob",
    [
        None,
        b"",
        b"\x01" * 15,
        HEAD_2x1,
        HEAD_2x1 + b"\x00" * 47,
        HEAD_2x1 + KIND_3 + b"\x00" * 40,
        b"\xff" * 16 + b"\x00" * 48,
    ],
)
def test_a_damaged_column_reads_as_none_and_the_record_stays_as_stored(blob):
    assert windows.arrays(blob) is None
    rec = {"per_rank": {"start_us": None, "end_us": None}}
    assert windows.joined(rec, blob) == rec


def test_an_older_store_has_its_records_arrays_moved_and_reads_the_same(tmp_path):
    """The store of an older scope (schema 12) opened by this one: each point's record, joined
    with its new column, is the record it stored."""
    path = tmp_path / "old.db"
    path.write_bytes(gzip.decompress((FIXTURES / "old-release" / "store.db.gz").read_bytes()))
    db = sqlite3.connect(path)
    before = {pid: json.loads(t) for pid, t in db.execute("SELECT id, record FROM points")}
    db.close()
    with_arrays = [pid for pid, r in before.items() if (r.get("per_rank") or {}).get("start_us")]
    assert with_arrays  # the fixture has window-timed points
    store = Store(path)
    try:
        after = {row["id"]: row for row in store.db.execute("SELECT id, record, windows FROM points")}
        for pid, rec in before.items():
            kept = json.loads(after[pid]["record"])
            assert windows.joined(kept, after[pid]["windows"]) == rec
            assert (after[pid]["windows"] is not None) == (pid in with_arrays)
    finally:
        store.close()


def test_a_run_loads_its_windows_only_where_a_view_draws_them(tmp_path):
    db = tmp_path / "w.db"
    rid = replay("windows", db)
    store = Store(db)
    try:
        reads: list[int] = []
        own = store._windows
        store._windows = lambda pid: reads.append(pid) or own(pid)
        run = store.load_run(rid)
        engine = {(r["index"], json.dumps(r["params"], sort_keys=True)): r for r in engine_points()}
        for p in run.points:
            assert p.window is not None and p.window.window_us > 0 and p.replication is not None
            assert p.record["per_rank"]["start_us"] is None
        assert reads == []  # window timing, skew and launches read without them
        for p in run.points:
            w = p.window
            assert len(w.start_us) == 2 and len(w.end_us[0]) == len(w.start_us[0]) > 0
            assert all(e >= s for rs, re_ in zip(w.start_us, w.end_us) for s, e in zip(rs, re_))
            assert w.start_us is w.start_us  # read once, kept
            whole = p.whole_record
            assert whole["per_rank"]["start_us"] == [list(r) for r in w.start_us]
            key = (whole["index"], json.dumps(whole["params"], sort_keys=True))
            if key in engine and whole.get("launches") is None:
                assert whole == engine[key]
        assert len(set(reads)) == len(run.points)
    finally:
        store.close()


def test_export_json_gives_the_engine_records_per_rank_arrays(tmp_path):
    from tests.conftest import run_scope

    db = tmp_path / "w.db"
    replay("windows", db)
    out = tmp_path / "x.json"
    assert run_scope("export", "last", "--format", "json", "-o", out, db=db).returncode == 0
    doc = json.loads(out.read_text())
    pts = doc["points"] if isinstance(doc, dict) else doc
    got = [p for p in pts if isinstance(p, dict) and p.get("per_rank")]
    assert got and all(isinstance(p["per_rank"]["start_us"], list) and p["per_rank"]["start_us"][0] for p in got)


def test_a_runs_records_are_read_a_chunk_of_points_a_query(tmp_path):
    """Records are read 256 points a query as views ask for them (not one query a point), and
    a point none of whose launches kept samples asks for none."""
    db = tmp_path / "w.db"
    rid = replay("windows", db)
    store = Store(db)
    try:
        said: list[str] = []
        store.db.set_trace_callback(said.append)
        run = store.load_run(rid)
        assert all(p.record["type"] == "point" for p in run.points) and len(run.points) == 4
        assert len([q for q in said if "SELECT id, record FROM points" in q]) == 1
        store.db.execute("UPDATE points SET samples = NULL")
        said.clear()
        run = store.load_run(rid)
        assert all(p.samples == [] for p in run.points)
        assert [q for q in said if "SELECT samples" in q] == []
    finally:
        store.close()
