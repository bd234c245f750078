"""Issue 72: a run bundle as a stream of lines (version 2, store/bundle_stream.py and
bundle_lines.py): read back as the run it was, by `scope import` a line at a time and by the
hub whole; its samples left out by choice and said so; a hostile stream refused, saying why,
with nothing stored."""

from __future__ import annotations

import gzip
import json

import msgspec
import pytest

from scope.errors import ScopeError
from scope.store import Store, bundle_stream
from scope.store.bundle import checked
from tests.conftest import replay, run_scope


@pytest.fixture
def stream(tmp_path):
    """The windows fixture's run as a stream: its lines (decompressed) and the store it left."""
    db = tmp_path / "a.db"
    rid = replay("windows", db)
    out = tmp_path / "a.bundle"
    assert run_scope("export", rid, "--format", "bundle", "-o", out, db=db).returncode == 0
    return gzip.decompress(out.read_bytes()).splitlines(keepends=True), db


def imported(tmp_path, lines: list[bytes], name: str = "x.bundle"):
    f = tmp_path / name
    f.write_bytes(gzip.compress(b"".join(lines)))
    db = tmp_path / f"{name}.db"
    return run_scope("import", f, db=db), db


@pytest.mark.unit
def test_a_stream_is_a_head_a_line_a_row_and_an_end_that_counts_them(stream):
    lines, db = stream
    head, rows, end = json.loads(lines[0]), [json.loads(x) for x in lines[1:-1]], json.loads(lines[-1])
    assert head["version"] == 2 and head["layout"] == "lines" and head["samples"] == "kept"
    points = [r for r in rows if r["row"] == "point"]
    store = Store(db)
    n = store.db.execute("SELECT count(*), count(windows), count(samples) FROM points").fetchone()
    assert (end["row"], end["points"]) == ("end", len(points)) and len(points) == n[0]
    assert sum(p["windows"] is not None for p in points) == n[1] > 0  # beside the record, as the store keeps them
    assert sum(p["samples"] is not None for p in points) == n[2] > 0
    assert all(p["record"]["per_rank"]["start_us"] is None for p in points if p["windows"])


@pytest.mark.unit
def test_the_hub_and_the_import_read_a_stream_as_the_same_run(stream, tmp_path):
    lines, db = stream
    p, again = imported(tmp_path, lines)
    assert p.returncode == 0, p.stderr
    b, sha = checked(gzip.compress(b"".join(lines)))  # the hub's reading: the whole stream at once
    assert len(b.points) == Store(again).db.execute("SELECT count(*) FROM points").fetchone()[0]
    assert b.version == 2 and len(sha) == 64
    one = run_scope("export", "last", "--format", "json", db=again).stdout
    hub = tmp_path / "hub.db"
    from scope.store.bundle import load

    store = Store(hub)
    load(store, b)
    store.close()
    assert run_scope("export", "last", "--format", "json", db=hub).stdout == one


@pytest.mark.unit
def test_samples_left_out_by_choice_are_said_and_the_figures_stay(stream, tmp_path):
    _, db = stream
    out = tmp_path / "lean.bundle"
    p = run_scope("export", "last", "--format", "bundle", "--no-samples", "-o", out, db=db)
    assert p.returncode == 0 and "samples left out" in p.stderr
    lines = gzip.decompress(out.read_bytes()).splitlines()
    assert json.loads(lines[0])["samples"] == "left out"
    assert all(json.loads(x).get("samples") is None for x in lines[1:-1])
    got = tmp_path / "lean.db"
    assert run_scope("import", out, db=got).returncode == 0
    medians = [r[0] for r in Store(db).db.execute("SELECT median FROM points ORDER BY seq, launch")]
    assert [r[0] for r in Store(got).db.execute("SELECT median FROM points ORDER BY seq, launch")] == medians


@pytest.mark.unit
def test_export_copies_a_plain_record_without_decoding_it(stream, tmp_path, monkeypatch):
    """A record the store wrote with msgspec travels as its text (msgspec.Raw): none decoded."""
    _, db = stream
    decoded: list[str] = []
    real = bundle_stream.json.loads
    monkeypatch.setattr(bundle_stream.json, "loads", lambda t, *a, **k: decoded.append(t) or real(t, *a, **k))
    store = Store(db)
    data = bundle_stream.encoded(store, 1)
    n = store.db.execute("SELECT count(*) FROM points").fetchone()[0]
    assert n > 0 and len(gzip.decompress(data).splitlines()) > n
    assert [t for t in decoded if '"type":"point"' in t] == []


def _cut(lines):
    return lines[:-1]


def _miscount(lines):
    end = json.loads(lines[-1])
    end["points"] += 1
    return lines[:-1] + [json.dumps(end).encode() + b"\n"]


def _after_end(lines):
    return lines + [lines[1]]


def _twice(lines):
    return [lines[0], lines[1].replace(b'{"row":"point",', b'{"row":"point","launch":1,', 1), *lines[2:]]


def _windows_twice(lines):
    row = json.loads(lines[1])
    row["record"]["per_rank"]["start_us"] = [[1.0]]
    return [lines[0], json.dumps(row).encode() + b"\n", *lines[2:]]


def _windows_damaged(lines):
    row = json.loads(lines[1])
    row["windows"] = row["windows"][:-8]
    return [lines[0], json.dumps(row).encode() + b"\n", *lines[2:]]


def _deep(lines):
    row = json.loads(lines[1])
    deep: dict = {}
    for _ in range(40):
        deep = {"a": deep}
    row["record"]["extra_deep"] = deep
    return [lines[0], json.dumps(row).encode() + b"\n", *lines[2:]]


def _nested_in_strings(lines):
    """Brackets and keys inside a string count as neither: a valid row with them is read."""
    row = json.loads(lines[1])
    row["record"]["note"] = '[[[[{"a":' * 40
    return [lines[0], json.dumps(row).encode() + b"\n", *lines[2:]]


@pytest.mark.unit
def test_brackets_and_keys_inside_strings_are_text(stream, tmp_path):
    lines, _ = stream
    p, _db = imported(tmp_path, _nested_in_strings(list(lines)))
    assert p.returncode == 0, p.stderr
    spaced = [lines[0], json.dumps(json.loads(lines[1]), indent=None, separators=(", ", " : ")).encode() + b"\n"]
    p, _db = imported(tmp_path, spaced + list(lines[2:]), "spaced.bundle")  # JSON's spaces are JSON
    assert p.returncode == 0, p.stderr


def _unknown_row(lines):
    return [lines[0], b'{"row":"secret","x":1}\n', *lines[1:]]


def _no_head(lines):
    return lines[1:]


@pytest.mark.unit
@pytest.mark.parametrize(
    "spoil, why",
    [
        (_cut, "cut short"),
        (_miscount, "not the ones its end line counts"),
        (_after_end, "follows its end"),
        (_twice, "names 'launch' twice"),
        (_windows_twice, "beside its record and in it"),
        (_windows_damaged, "windows"),
        (_unknown_row, "line 2"),
        (_deep, "nested past 32 levels"),
        (_no_head, "not a SCOPE run bundle"),  # no head: no stream, and no document either
    ],
)
def test_a_hostile_stream_is_refused_saying_why_and_nothing_is_stored(stream, tmp_path, spoil, why):
    lines, _ = stream
    p, db = imported(tmp_path, spoil(list(lines)))
    assert p.returncode != 0 and why in p.stderr and "Traceback" not in p.stderr, p.stderr
    assert not db.exists() or Store(db).db.execute("SELECT count(*) FROM runs").fetchone()[0] == 0
    with pytest.raises(ScopeError, match="not a SCOPE run bundle"):
        checked(gzip.compress(b"".join(spoil(list(lines)))))


@pytest.mark.unit
def test_a_stream_past_its_limit_is_refused_when_it_passes_it(stream, tmp_path, monkeypatch):
    lines, _ = stream
    monkeypatch.setattr(bundle_stream.doc, "LIMIT", 1000)
    monkeypatch.setattr(bundle_stream, "GROWTH", 1)
    f = tmp_path / "big.bundle"
    f.write_bytes(gzip.compress(b"".join(lines)))
    with pytest.raises(ScopeError, match="over 0 MiB once decompressed"):
        bundle_stream.load_file(Store(tmp_path / "big.db"), f)
    assert msgspec.json.decode(lines[0])["format"] == "scope-run"


@pytest.mark.unit
def test_a_stream_written_as_many_members_reads_as_one_and_is_the_same_each_time(stream, tmp_path, monkeypatch):
    """Members compressed on the side (bundle_stream._Members): more than one, in their order."""
    lines, db = stream
    monkeypatch.setattr(bundle_stream._Members, "MEMBER", 4096)
    store = Store(db)
    data = bundle_stream.encoded(store, 1)
    assert data.count(b"\x1f\x8b\x08") > 3  # a header a member (at least)
    assert gzip.decompress(data).splitlines(keepends=True) == lines
    assert bundle_stream.encoded(store, 1) == data
    f = tmp_path / "members.bundle"
    f.write_bytes(data)
    p = run_scope("import", f, db=tmp_path / "members.db")
    points = sum(json.loads(x)["row"] == "point" for x in lines[1:])
    assert p.returncode == 0 and f"({points} point records)" in p.stdout, p.stderr


@pytest.mark.system
def test_a_push_without_samples_is_said_on_the_hub(stream, tmp_path):
    """`scope push --no-samples`: the hub stores the run and says its samples were left out, on
    the cluster's page and in its JSON; a push that keeps them says nothing."""
    from tests.hub_server import Hub
    from tests.test_hub import token

    _, db = stream
    url = str(tmp_path / "hub.db")
    tok = token(url, "lean")
    with Hub(url) as hub:
        env = {"SCOPE_HUB_TOKEN": tok}
        p = run_scope("push", "last", "--hub", hub.base, "--no-samples", db=db, env=env)
        assert p.returncode == 0, p.stderr
        runs = hub.get_json("/api/clusters/lean")["history"]
        assert [r["provenance"].get("samples") for r in runs] == ["left out"]
        code, page, _ = hub.get("/clusters/lean")
        assert code == 200 and "(samples left out)" in page.decode()
        bundle = gzip.decompress(hub.get(f"/api/runs/{runs[0]['id']}/bundle")[1])
        assert json.loads(bundle.split(b"\n", 1)[0])["samples"] == "left out"


@pytest.mark.unit
def test_a_stream_whose_gzip_is_cut_is_refused_and_nothing_is_stored(stream, tmp_path):
    lines, _ = stream
    data = gzip.compress(b"".join(lines))
    f = tmp_path / "cut.bundle"
    f.write_bytes(data[: len(data) // 2])
    db = tmp_path / "cut.db"
    p = run_scope("import", f, db=db)
    assert p.returncode != 0 and "not whole gzip data" in p.stderr and "Traceback" not in p.stderr, p.stderr
    assert not db.exists() or Store(db).db.execute("SELECT count(*) FROM runs").fetchone()[0] == 0


@pytest.mark.unit
def test_the_hub_stores_a_stream_as_it_reads_it_and_scrubs_one_that_shows_a_credential(stream):
    """hub/runs.py's ingest: a stream is stored a line at a time (its digest the SHA-256 of its
    text, its points counted); one whose context shows a credential (an older scope's) is read
    whole and kept without it."""
    import hashlib

    from scope.hub.runs import ingest

    lines, db = stream
    text = b"".join(lines)
    got = ingest(gzip.compress(text))
    assert got.digest == hashlib.sha256(text).hexdigest()
    assert got.row["points"] == len({json.loads(x)["record"]["index"] for x in lines[1:-1] if b'"row":"point"' in x})
    head = json.loads(lines[0])
    head["context"].setdefault("env", {})["MY_API_TOKEN"] = "planted-secret-value-123"
    leaky = [json.dumps(head).encode() + b"\n", *lines[1:]]
    kept = ingest(gzip.compress(b"".join(leaky)))
    assert b"planted-secret-value-123" not in gzip.decompress(kept.bundle)
    assert kept.row["points"] == got.row["points"]
