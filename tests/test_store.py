import json
import sqlite3

import pytest

from scope.errors import ScopeError
from scope.store import MIGRATIONS, SCHEMA_VERSION, Store, samples_of

pytestmark = pytest.mark.unit

POINT = {
    "type": "point",
    "test": "p2p.pingpong",
    "index": 0,
    "points": 1,
    "params": {"size": 8, "mode": "standard", "blocking": True},
    "unit": "us",
    "count": 3,
    "batch": 1,
    "ops_per_iter": 2,
    "bytes_per_op": 8,
    "warmup": {"iterations": 24, "seconds": 0.01, "converged": True},
    "stop": "precision",
    "seconds": 0.1,
    "stats": {
        "min": 1.0,
        "median": 1.5,
        "mean": 1.6,
        "sd": 0.1,
        "max": 2.5,
        "p5": 1.0,
        "p25": 1.2,
        "p75": 1.8,
        "p95": 2.4,
        "p99": 2.5,
        "ci_lo": 1.4,
        "ci_hi": 1.6,
        "ci_rel": 0.067,
    },
    "bandwidth_MBps": {"median": 5.33},
    "samples": [1.0, 1.5, 2.5, None],
}


def test_fresh_database_has_current_schema(tmp_path):
    s = Store(tmp_path / "r.db")
    assert s.db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == len(MIGRATIONS)


def test_point_round_trip_with_samples(tmp_path):
    s = Store(tmp_path / "r.db")
    rid = s.begin_run(["mpiexec"], "mpiexec", 2)
    s.add_point(rid, POINT)
    row = s.points(rid)[0]
    assert row["median"] == 1.5 and row["size"] == 8 and row["bw_median"] == 5.33
    assert json.loads(row["params"]) == {"blocking": True, "mode": "standard"}
    got = samples_of(row)
    assert got[:3] == [1.0, 1.5, 2.5] and got[3] != got[3]  # None stored as NaN
    assert "samples" not in json.loads(row["record"])


def test_migration_from_version_1_keeps_data(tmp_path):
    path = tmp_path / "old.db"
    db = sqlite3.connect(path)
    db.executescript(MIGRATIONS[0] + "; PRAGMA user_version = 1;")
    db.execute("INSERT INTO runs (started_utc, status) VALUES ('2026-01-01T00:00:00Z', 'complete')")
    db.commit()
    db.close()
    s = Store(path)
    assert s.db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert [r["status"] for r in s.runs()] == ["complete"]
    assert s.runs()[0]["label"] is None  # column added by migration 2
    s.add_event(1, {"type": "skip", "test": "p2p.pingpong", "reason": "needs 2 ranks"})
    assert s.events(1)[0]["message"] == "needs 2 ranks"


def test_newer_database_is_refused_untouched(tmp_path):
    path = tmp_path / "new.db"
    db = sqlite3.connect(path)
    db.execute("PRAGMA user_version = 99")
    db.commit()
    db.close()
    with pytest.raises(ScopeError) as e:
        Store(path)
    assert "newer" in e.value.message and e.value.code == 3
    assert sqlite3.connect(path).execute("PRAGMA user_version").fetchone()[0] == 99


def test_corrupt_and_foreign_databases(tmp_path):
    bad = tmp_path / "bad.db"
    bad.write_bytes(b"this is not sqlite at all" * 100)
    with pytest.raises(ScopeError) as e:
        Store(bad)
    assert "corrupt" in e.value.message
    foreign = tmp_path / "foreign.db"
    db = sqlite3.connect(foreign)
    db.execute("CREATE TABLE x (y)")
    db.commit()
    db.close()
    with pytest.raises(ScopeError) as e:
        Store(foreign)
    assert "not SCOPE's" in e.value.message


def test_resolve_run(tmp_path):
    s = Store(tmp_path / "r.db")
    with pytest.raises(ScopeError):
        s.resolve_run("last")
    a, b = s.begin_run([], "mpiexec", 2), s.begin_run([], "mpiexec", 2)
    assert s.resolve_run("last") == b and s.resolve_run(-2) == a and s.resolve_run(str(a)) == a
    with pytest.raises(ScopeError):
        s.resolve_run(99)
    with pytest.raises(ScopeError):
        s.resolve_run("abc")


def test_unwritable_location(tmp_path):
    f = tmp_path / "file"
    f.write_text("x")
    with pytest.raises(ScopeError) as e:
        Store(f / "sub" / "r.db")
    assert e.value.code == 3


@pytest.mark.unit
def test_a_runs_records_are_read_when_a_view_asks_not_when_it_loads(tmp_path):
    """Issue 72: a loaded run holds no point record (a window-timed point's is 8 KB; 10^5 held
    as text were 318 MB most views never read); each is read once, when first asked for, and
    gives what it gave when it was held."""
    from tests.conftest import replay

    db = tmp_path / "w.db"
    rid = replay("windows", db)
    store = Store(db)
    try:
        reads = []
        text_of = store._record_text
        store._record_text = lambda pid, *chunked: reads.append(pid) or text_of(pid, *chunked)
        run = store.load_run(rid)
        assert reads == [] and len(run.points) == 4
        stored = {r["seq"]: json.loads(r["record"]) for r in store.points(rid)}
        for p in run.points:
            assert p.record == stored[p.seq] and p.window is not None
            assert p.record is p.record  # decoded once, kept
        assert sorted(reads) == sorted(set(reads)) and len(reads) == len(run.points)
    finally:
        store.close()


def test_a_parameter_setting_is_stored_as_its_json_whatever_was_written_before_it():
    """params_key writes each setting once (a cache): True, 1 and 1.0 are one key to a cache
    and three texts to JSON; a list (no cache key) is written all the same."""
    from scope.store.encode import params_key

    assert params_key({"a": 1, "b": 1.0, "size": 8}) == '{"a": 1, "b": 1.0}'
    assert params_key({"b": 1.0, "a": True}) == '{"a": true, "b": 1.0}'
    assert params_key({"b": 1, "a": 1.0}) == '{"a": 1.0, "b": 1}'
    assert params_key({"a": [1, 2], "size": 4}) == '{"a": [1, 2]}'
