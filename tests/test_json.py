"""Strict JSON from every command that writes JSON, with the keys docs/json.md gives."""

import json

import pytest

from scope.store import Store
from tests.conftest import FIXTURES, run_scope
from tests.test_noise import stored_run

pytestmark = pytest.mark.unit


def strict(text: str):
    """json.loads that refuses NaN and Infinity, as an RFC 8259 reader does."""

    def refuse(name):
        raise ValueError(f"{name} is not JSON")

    return json.loads(text, parse_constant=refuse)


def test_compare_json_is_strict_where_a_ratio_has_no_interval(db):
    s = Store(db)
    a, b = stored_run(s, 2.0, 0.01, 1, launches=1), stored_run(s, 2.1, 0.01, 2, launches=1)
    p = run_scope("compare", a, b, "--json", db=db)
    assert p.returncode == 0, p.stderr
    rows = strict(p.stdout)  # one launch each: no CI, no p: null, once NaN
    assert rows[0]["ci_lo"] is None and rows[0]["p_value"] is None and rows[0]["ratio"] > 1
    assert {"test", "params", "size", "n_a", "n_b", "center_a", "center_b", "ratio", "verdict"} <= set(rows[0])


def test_runs_show_layers_and_export_write_strict_json(db):
    assert run_scope("import", FIXTURES / "layers", db=db).returncode == 0
    runs = strict(run_scope("runs", "--json", db=db).stdout)
    assert [r["id"] for r in runs] == [1] and runs[0]["status"] == "complete" and "p2p.pingpong" in runs[0]["tests"]
    assert set(runs[0]) >= {"started_utc", "ranks", "npoints", "origin", "mpi_library", "launches"}
    shown = strict(run_scope("show", "1", "--json", db=db).stdout)
    assert shown["format"] == "scope-show" and shown["run"]["id"] == 1 and shown["points"]
    assert {"warnings", "canary", "drift", "fits", "events"} <= set(shown)
    layers = strict(run_scope("layers", "1", "--json", db=db).stdout)
    names = [ly["name"] for k in layers["kinds"] for ly in k["layers"]]
    assert "cache line" in names and all("stack" in ly for k in layers["kinds"] for ly in k["layers"])
    exported = strict(run_scope("export", "1", "--format", "json", db=db).stdout)
    assert exported["format"] == "scope-export" and exported["points"][0].get("samples") is not None
    assert strict(run_scope("runs", "--json", db=db.parent / "none.db").stdout) == []


@pytest.mark.loads_pyarrow
def test_the_pandas_frames_are_tidy_typed_and_agree(db):
    """Parameters as categories written as typed (yes/no), integer sizes, one row per point and
    statistic in the long frame, one per sample in the samples frame, and the same values."""
    import pandas as pd

    import scope

    assert run_scope("import", FIXTURES / "layers", db=db).returncode == 0
    res = scope.connect(db)
    wide = res.points(run=1)
    assert str(wide["size"].dtype) == "Int64" and isinstance(wide["blocking"].dtype, pd.CategoricalDtype)
    assert set(wide["blocking"].dropna().unique()) <= {"yes", "no"}
    long = res.tidy(run=1)
    assert {"run", "test", "size", "statistic", "value", "unit", "launches"} <= set(long.columns)
    pp = wide[(wide.test == "p2p.pingpong") & (wide["size"] == 8)].iloc[0]
    got = long[(long.test == "p2p.pingpong") & (long["size"] == 8) & (long.statistic == "median")]["value"]
    assert got.tolist() == [pp["median"]]
    samples = res.samples_frame(run=1, test="p2p.pingpong")
    eight = samples[samples["size"] == 8]["value"]
    assert len(eight) == pp["count"] and eight.median() == pytest.approx(pp["median"])
    assert res.samples(1, "p2p.pingpong", 8, blocking=True).size == len(eight)  # a typed value finds it
    assert scope.open is scope.connect and "open" not in scope.__all__


def test_parquet_without_pyarrow_says_how_to_get_it(db, tmp_path):
    """pyarrow is the [parquet] extra: without it the export is one line naming the extra."""
    import os
    import subprocess
    import sys

    assert run_scope("import", FIXTURES / "layers", db=db).returncode == 0
    shim = tmp_path / "shim"
    shim.mkdir()
    (shim / "pyarrow.py").write_text("raise ImportError('pyarrow is not installed (a test stand-in)')\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(shim), os.environ.get("PYTHONPATH", "")]))
    cmd = [
        sys.executable,
        "-m",
        "scope",
        "--db",
        str(db),
        "export",
        "1",
        "--format",
        "parquet",
        "-o",
        str(tmp_path / "x.parquet"),
    ]
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120)
    assert p.returncode == 3 and "pip install 'scope-bench[parquet]'" in p.stderr and p.stderr.count("\n") == 1, (
        p.stderr
    )


@pytest.mark.unit
def test_a_streamed_element_is_the_standard_librarys_text_whichever_writes_it():
    """views/jsonout.py writes a plain item with msgspec (5x faster on floats) where its text is
    the standard library's, fixing the floats repr writes with an exponent: 60,000 items of
    floats drawn from every magnitude (and NaN, infinities, non-ASCII text, a float's text in a
    string, big integers), each the same text as json's compact encoder (strict) writes."""
    import json as std
    import random
    import struct

    from scope.views import jsonout

    enc = std.JSONEncoder(allow_nan=False, separators=(",", ":"))
    rng = random.Random(72)
    odd = [1e16, 1e-5, 1.1e-05, 1.5e-7, 0.0001, 0.00009999, 1e22, 5e-324, -0.0, 9999999999999998.0, float("nan")]
    fast = 0
    for i in range(30_000):
        xs = [struct.unpack("d", struct.pack("Q", rng.getrandbits(64)))[0] for _ in range(3)]
        xs += [rng.random() * 10 ** rng.randint(-12, 20), rng.choice(odd), round(rng.random() * 1e6, rng.randint(0, 8))]
        extra = [1, 10**17, 2**64, True, None, "é", "1e-05", {"1e16": 1e16}][i % 8]
        for item in ({"a": xs, "b": xs[i % 6], "c": [extra]}, {"w": [xs[i % 6]] * 12, "p": {"s": xs[:2]}}):
            try:
                want = enc.encode(item)
            except ValueError:
                want = enc.encode(jsonout.strict(item))
            assert jsonout._compact(item) == want, item
            fast += jsonout._msgspec_text(item) is not None
    assert fast > 30_000  # most went the fast way
