"""Run bundles (store/bundle.py): a stored run as one document and back, and its strict reading
of hostile files.  What a hub stores is a bundle, so this is also the hub's input check."""

from __future__ import annotations

import base64
import gzip
import json

import msgspec
import numpy as np
import pytest

from scope import secrets
from scope.errors import ScopeError
from scope.store import Store, bundle_stream
from scope.store.bundle import checked, dump, read
from tests.conftest import replay, run_scope

pytestmark = pytest.mark.unit


def shown(db, run: str = "last") -> dict:
    p = run_scope("export", run, "--format", "json", db=db)
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    doc["run"].pop("id")
    return doc


def leaving(doc: dict) -> dict:
    """An exported run as its bundle carries it: each folder private to its machine (its I/O
    folder, its scratch, an import's source folder) `<private>` (scope/secrets.py)."""
    run = doc["run"]
    private = secrets.private_paths(run, run.get("context"))
    assert private or not (run.get("context") or {}).get("io")  # a run of io tests has one
    return secrets.Scrubber(private=private).walk(doc)


@pytest.mark.parametrize("name", ["baseline", "windows", "allpairs", "launches", "layers"])
def test_round_trip(name, tmp_path):
    """export --format bundle, import it elsewhere: the same run, figure for figure (points,
    intervals, launches, pairs, events, context), and the same bytes from the copy."""
    a, b = tmp_path / "a.db", tmp_path / "b.db"
    rid = replay(name, a)
    out = tmp_path / "run.scope.json.gz"
    assert run_scope("export", rid, "--format", "bundle", "-o", out, db=a).returncode == 0
    p = run_scope("import", out, db=b)
    assert p.returncode == 0 and "as run 1" in p.stdout, p.stderr
    assert leaving(shown(a, str(rid))) == shown(b)
    ra, rb = Store(a).load_run(rid), Store(b).load_run(1)
    assert len(ra.pairs) == len(rb.pairs) and len(ra.events) == len(rb.events)
    assert [e.type for e in ra.events] == [e.type for e in rb.events]
    assert [p.samples for p in ra.points] == [p.samples for p in rb.points]
    assert bundle_stream.encoded(Store(b), 1) == out.read_bytes()  # deterministic: the hub's digest holds


def test_imported_run_round_trip(tmp_path):
    """A run imported from a CSV (columns, no records) travels as well."""
    csv = tmp_path / "x.csv"
    csv.write_text("size,time_us\n8,1.5\n64,1.75\n1024,3.25\n")
    a, b = tmp_path / "a.db", tmp_path / "b.db"
    assert run_scope("import", csv, db=a).returncode == 0
    out = tmp_path / "x.gz"
    assert run_scope("export", "last", "--format", "bundle", "-o", out, db=a).returncode == 0
    assert run_scope("import", out, db=b).returncode == 0
    assert [p["stats"]["median"] for p in shown(b)["points"]] == [1.5, 1.75, 3.25]


@pytest.fixture(scope="module")
def good(tmp_path_factory):
    db = tmp_path_factory.mktemp("b") / "a.db"
    rid = replay("layers", db)
    return json.loads(msgspec.json.encode(dump(Store(db), rid)))


def refused(data: bytes, why: str) -> None:
    with pytest.raises(ScopeError) as e:
        read(data)
    assert why in e.value.message, e.value.message


def test_hostile_bundles(good):
    """Each refused with its reason, before anything is stored."""
    ok = json.dumps(good).encode()
    assert checked(ok)[1] == checked(gzip.compress(ok))[1] != checked(ok.replace(b"{", b"{ ", 1))[1]
    refused(ok[: len(ok) // 2], "not whole UTF-8 JSON")
    refused(gzip.compress(ok)[:-20], "not whole gzip data")
    refused(b"\xff\xfe" + ok, "not whole UTF-8 JSON")
    refused(b"[" * 100000 + b"]" * 100000, "not a SCOPE run bundle")
    with pytest.raises(ScopeError, match="over 1 MiB once decompressed"):
        read(gzip.compress(b"{" + b" " * (3 << 20) + b"}"), limit=1 << 20)
    for edit, why in (
        (lambda d: d.update(format="other"), "format"),
        (lambda d: d.update(version=99), "version"),
        (lambda d: d.update(surprise=1), "surprise"),
        (lambda d: d["run"].update(label="x" * 300), "label"),
        (lambda d: d["run"].update(ranks=-2), "ranks"),
        (lambda d: d["run"].update(started_utc="yesterday"), "started_utc"),
        (lambda d: d["points"][0]["record"]["stats"].update(median="fast"), "point 1"),
        (lambda d: d["points"][0]["record"].update(type="context"), "point 1"),
        (lambda d: d["points"][0].update(samples=[1.0, 2.0]), "samples"),
        (lambda d: d["points"][0].update(samples=f64([1.0, float("inf")])), "infinite"),
        (lambda d: d["context"].update(ranks=10**30), "its context"),
        (lambda d: d["tests"][0].pop("name"), "test descriptor 1"),
    ):
        doc = json.loads(ok)
        edit(doc)
        refused(json.dumps(doc).encode(), why)
    doc = json.loads(ok)
    nest = doc["context"].setdefault("mpi", {}).setdefault("transport", {}).setdefault("cvars", {})
    for _ in range(100):
        nest["x"] = nest = {}
    refused(json.dumps(doc).encode(), "nested past 32 levels")


def test_hostile_imported_columns(tmp_path):
    csv = tmp_path / "x.csv"
    csv.write_text("size,time_us\n8,1.5\n64,1.75\n")
    a = tmp_path / "a.db"
    assert run_scope("import", csv, db=a).returncode == 0
    base = json.loads(msgspec.json.encode(dump(Store(a), 1)))
    for edit, why in (
        (lambda i: i.update(sizes=i64([64, 8])), "ascending"),
        (lambda i: i.update(times=f64([1.5, -1])), "positive, finite"),
        (lambda i: i.update(times=f64([1.5, float("nan")])), "positive, finite"),
        (lambda i: i.update(times=f64([1.5])), "differ in length"),
        (lambda i: i.update(sizes=i64([8, -1])), "whole number of bytes"),
        (lambda i: i.update(sizes=base64.b64encode(b"\0" * 12).decode()), "not a whole int64 array"),
        (lambda i: i.update(sizes="not base64!"), "$.imported[0].sizes"),
        (lambda i: i.update(counts=i64([1, -5])), "negative count"),
        (lambda i: i.update(extra={"min": f64([1.0])}), "column 'min' is not 2 numbers"),
        (lambda i: i.update(extra={"min": f64([1.0, float("inf")])}), "column 'min' is not 2 numbers"),
    ):
        doc = json.loads(json.dumps(base))
        edit(doc["imported"][0])
        refused(json.dumps(doc).encode(), why)


def i64(values) -> str:
    return base64.b64encode(np.asarray(values, dtype="<i8").tobytes()).decode()


def f64(values) -> str:
    return base64.b64encode(np.asarray(values, dtype="<f8").tobytes()).decode()


def test_refused_import_stores_nothing(tmp_path, good):
    """`scope import` of a bad bundle: one line, exit 2, the database as it was."""
    db = tmp_path / "r.db"
    replay("layers", db)
    bad = json.loads(json.dumps(good))
    bad["points"][-1]["record"]["count"] = -1
    f = tmp_path / "bad.scope.json"
    f.write_text(json.dumps(bad))
    p = run_scope("import", f, db=db)
    assert p.returncode == 2 and len(p.stderr.splitlines()) == 1 and "point" in p.stderr
    assert [r["id"] for r in Store(db).runs()] == [1]
    p = run_scope("export", "1", "--format", "bundle", db=db)
    assert p.returncode == 2 and "give a file with -o" in p.stderr
