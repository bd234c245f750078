"""One summary-statistics implementation in the front end (analysis/stats.py), held to the same
vectors as the engine's core/stats.c (tests/data/stats_vectors.txt, read by
engine/unit/test_core.c too): the one-sample, all-equal and empty cases included (issue 42)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from scope.analysis.stats import ci_rel, median, median_ci_ranks, quantiles, row_medians, summarise
from scope.run.combine import combined_record

VECTORS = Path(__file__).resolve().parent / "data" / "stats_vectors.txt"
FIELDS = "n min max mean sd median p5 p25 p75 p95 p99 ci_lo ci_hi ci_rel".split()


def vectors():
    for line in VECTORS.read_text().splitlines():
        if line.startswith("#") or not line.strip():
            continue
        name, samples, want = line.split("\t")
        x = [] if samples == "-" else [float(v) for v in samples.split(",")]
        yield name, x, dict(zip(FIELDS, (float(v) for v in want.split())))


@pytest.mark.unit
@pytest.mark.parametrize("name,x,want", list(vectors()), ids=[v[0] for v in vectors()])
def test_summary_agrees_with_the_shared_vectors(name, x, want):
    got = summarise(x)
    for k, w in want.items():
        g = getattr(got, k)
        if math.isnan(w):
            assert g is None, f"{name}: {k} = {g}, undefined in the vectors"
        else:
            assert g == pytest.approx(w, rel=1e-12, abs=1e-12), f"{name}: {k}"


@pytest.mark.unit
def test_the_vectors_cover_the_edges():
    names = {v[0] for v in vectors()}
    assert {"none", "one sample", "all equal", "six: the first interval"} <= names
    assert len(names) >= 10


@pytest.mark.unit
def test_median_interval_ranks_by_hand():
    assert median_ci_ranks(5) is None  # P(all above or all below) = 1/16 > 5 %
    assert median_ci_ranks(6) == (1, 6)  # 1 - 2/64 = 96.9 % coverage
    assert median_ci_ranks(9) == (2, 8)  # P(B <= 1) = 10/512 <= 2.5 %
    assert ci_rel(10.0, 9.0, 12.0) == 0.2 and ci_rel(0.0, -1.0, 1.0) is None and ci_rel(5.0, None, 6.0) is None


@pytest.mark.unit
def test_pooled_launches_use_the_one_summary():
    # two launches of one sample each: the pooled sd is of two samples, a launch's alone undefined
    rec = {"stats": {"median": 1.0, "ci_lo": None, "ci_hi": None}, "count": 1}
    one = combined_record([(rec, [1.0])], 1, 0)
    assert one["stats"]["sd"] is None and one["stats"]["min"] == 1.0
    two = combined_record([(rec, [1.0]), (dict(rec, stats={"median": 3.0}), [3.0])], 2, 0)
    assert two["stats"]["sd"] == pytest.approx(math.sqrt(2)) and two["stats"]["p25"] == pytest.approx(1.5)
    assert "page_faults" not in two  # records from before the count have none to sum
    counted = combined_record([(dict(rec, page_faults=3), [1.0]), (dict(rec, page_faults=0), [2.0])], 2, 0)
    assert counted["page_faults"] == 3  # a combined point's faults are its launches' together


@pytest.mark.unit
@pytest.mark.parametrize("n", [1, 2, 3, 7, 100, 1001])
def test_quantiles_are_numpys_type_7(n):
    """stats.quantiles (no numpy.ma import on first use: issue 52) gives np.quantile's figures."""
    x = np.sort(np.random.default_rng(n).lognormal(size=n))
    qs = [0, 0.005, 0.05, 0.25, 0.5, 0.75, 0.95, 0.995, 1]
    assert np.allclose(quantiles(x, qs), np.quantile(x, qs), rtol=0, atol=1e-12)
    assert median(list(x[::-1])) == pytest.approx(float(np.median(x)), abs=1e-12)


@pytest.mark.unit
@pytest.mark.parametrize("n", [1, 2, 5, 6, 300, 301])
@pytest.mark.parametrize("ties", [False, True])
def test_row_medians_are_numpys_to_the_bit(n, ties):
    """A bootstrap's medians by sorting each row: numpy's values exactly (the middle one, or the
    mean of the two), so an overlap's interval is what it was."""
    x = np.random.default_rng(n).random(n) * 1e3
    if ties:
        x = np.round(x / 100) * 100
    a = x[np.random.default_rng(7).integers(0, n, (200, n))]
    assert row_medians(a).tobytes() == np.median(a, axis=1).tobytes()
