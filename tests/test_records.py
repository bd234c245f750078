"""The engine's records are declared once (scope/records.py): real engine output validates
against the declarations, docs/records.md documents exactly their fields, and a record that
does not match is never stored as if it did."""

import gzip
import json
import re
from pathlib import Path

import msgspec
import pytest

from scope.errors import ScopeError
from scope.records import TYPES, problem
from scope.run.recorder import replay
from scope.run.stream import engine_records
from scope.store import Store
from tests.conftest import FIXTURES, ROOT

DOC = ROOT / "docs" / "records.md"


def recorded() -> list[dict]:
    out = []
    for f in sorted(FIXTURES.glob("*/*.jsonl*")) + [FIXTURES / "describe.jsonl"]:
        opener = gzip.open if f.suffix == ".gz" else open
        with opener(f, "rt") as fh:
            out += [json.loads(line) for line in fh if line.strip()]
    return out


@pytest.mark.unit
def test_every_recorded_record_matches_its_declared_type():
    recs = recorded()
    kinds = {r["type"] for r in recs}
    assert {"context", "plan", "point", "clock", "end", "test"} <= kinds
    assert [p for p in map(problem, recs) if p] == []


@pytest.mark.unit
def test_a_wrong_type_is_named_with_its_field():
    point = next(r for r in recorded() if r["type"] == "point")
    assert problem(dict(point, count="many")) == "point record: Expected `int`, got `str` - at `$.count`"
    assert "$.stats.median" in problem(dict(point, stats=dict(point["stats"], median="fast")))
    assert problem(dict(point, colour="red")) is None  # a field this front end does not know: ignored
    assert problem({"type": "newer-kind", "x": 1}) is None  # a type a newer engine may write
    # a combined point's kept overlap (issue 72): a figure of three finite numbers, or null
    assert problem(dict(point, overlap={"value": 0.5, "ci_lo": 0.4, "ci_hi": 0.6})) is None
    assert problem(dict(point, overlap=None)) is None
    assert "$.overlap.ci_hi" in problem(dict(point, overlap={"value": 0.5, "ci_lo": 0.4, "ci_hi": "wide"}))
    assert "$.overlap.value" in problem(dict(point, overlap={"value": 1e309, "ci_lo": 0.4, "ci_hi": 0.6}))
    assert problem(dict(point, tail={"above_2x_min": 0.1, "above_4x_min": None, "outliers": 2})) is None
    assert "$.tail.outliers" in problem(dict(point, tail={"above_2x_min": 0.1, "above_4x_min": 0.0, "outliers": -1}))
    assert "$.tail" in problem(dict(point, tail=None))  # written for every combined timed point: never null
    with pytest.raises(ScopeError, match="cannot read: end record"):
        engine_records('{"type": "end", "status": "ok", "points": "two", "errors": 0, "skips": 0, "seconds": 1}')


@pytest.mark.unit
def test_a_stream_with_a_malformed_record_is_refused_saying_where(tmp_path):
    """An import is validated as strictly as a live record, before anything is stored (issue
    44: a damaged stream used to be stored, incomplete): the file, the line and msgspec's words."""
    src = FIXTURES / "stream"
    d = tmp_path / "s"
    d.mkdir()
    (d / "tests.jsonl").write_text((src / "tests.jsonl").read_text())
    lines = (src / "launch-1.jsonl").read_text().splitlines()
    bad = [json.loads(x) for x in lines]
    k = next(i for i, r in enumerate(bad) if r["type"] == "point")
    bad[k]["stats"]["median"] = "fast"
    (d / "launch-1.jsonl").write_text("\n".join(json.dumps(r) for r in bad) + "\n")
    store = Store(tmp_path / "r.db")
    with pytest.raises(ScopeError) as e:
        replay(store, d)
    assert f"line {k + 1}" in e.value.message and "$.stats.median" in e.value.message
    assert store.runs() == []


def documented(doc: Path = DOC) -> dict[str, set[str]]:
    """Each record type's top-level fields as records.md (or `doc`) gives them: the first
    column of its tables, and the keys of `{...}` spans that open a line."""
    out: dict[str, set[str]] = {}
    kind, fields_table = None, False
    for line in doc.read_text().splitlines():
        if line.startswith("| ") and not line.startswith("| `"):
            fields_table = line.startswith("| field |")  # a table's header says what it lists
        head = re.match(r"^#{2,3} `([a-z]+)`", line)
        if head:
            kind = head.group(1)
            out.setdefault(kind, set())
            continue
        if line.startswith("## "):
            kind = None
        if kind is None:
            continue
        if line.startswith("| `") and fields_table:
            out[kind] |= set(re.findall(r"`([a-z_A-Z0-9]+)`", line.split("|")[1]))
        for span in re.findall(r"^`(\{.*\})`", line):
            out[kind] |= top_keys(span)
    return out


def top_keys(span: str) -> set[str]:
    body, depth, part, keys = span[1:-1], 0, "", set()
    for ch in body + ",":
        if ch in "{[":
            depth += 1
        elif ch in "}]":
            depth -= 1
        if ch == "," and depth == 0:
            m = re.match(r"\s*([a-z_A-Z0-9]+)", part)
            if m:
                keys.add(m.group(1))
            part = ""
        elif depth == 0 or ch not in "{}[]":
            part += ch if depth == 0 else ""
    return keys - {"type"}


@pytest.mark.unit
def test_records_md_documents_exactly_the_declared_fields():
    docs = documented()
    for kind, struct in TYPES.items():
        declared = set(struct.__struct_fields__)
        assert kind in docs, f"records.md has no section for `{kind}`"
        assert docs[kind] == declared, (kind, sorted(docs[kind] - declared), sorted(declared - docs[kind]))


@pytest.mark.mpi
def test_live_engine_output_matches_the_declarations(engine, tmp_path):
    """Every engine command's output and a run's stream (loop, window, kernel and paired
    points) validate: engine_records and the recorder check them, so a mismatch fails here."""
    import subprocess

    for args in (["--list", "--json"], ["--plan", "2", "--tests", "coll.*"], ["--version", "--json"]):
        p = subprocess.run([str(engine), *args], capture_output=True, text=True, timeout=60)
        assert p.returncode == 0 and engine_records(p.stdout)
    from tests.conftest import run_scope

    d = tmp_path / "saved"
    p = run_scope(
        "run", "p2p.pingpong", "coll.bcast", "kernel.jacobi", "-p", "nonblocking=no,yes", "-p", "n=64",
        "-n", "2", "--sizes", "8", "--budget", "0.05", "--quiet", "--save-stream", d, db=tmp_path / "r.db",
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    recs = [json.loads(x) for x in (d / "launch-1.jsonl").read_text().splitlines()]
    assert any(r.get("reference") for r in recs) and any(r.get("phases") for r in recs)
    assert [x for x in map(problem, recs) if x] == []
    assert all(msgspec.convert(r, TYPES[r["type"]]) for r in recs)


@pytest.mark.unit
def test_every_test_the_front_end_names_is_in_the_engine_s_registry():
    from scope.catalog import baseline, modules, names
    from tests.conftest import descriptors

    registry = {t["name"] for t in descriptors()}
    named = {*names.ALL, *baseline.DEFAULT_TESTS, *modules.BASELINE.tests}
    assert len(names.ALL) >= 18 and named - registry == set()


@pytest.mark.mpi
def test_the_recorded_registry_is_the_engine_s(engine):
    """tests/fixtures/describe.jsonl stays the engine's (tests/fixtures/record.py describe)."""
    import subprocess

    from tests.conftest import descriptors

    live = [r for r in engine_records(subprocess.run([str(engine), "--list", "--json"], capture_output=True,
                                                      text=True).stdout) if r["type"] == "test"]  # fmt: skip
    assert live == descriptors()
