import numpy as np
import pytest

from scope.analysis.compare import compare_samples, mann_whitney_p
from scope.store import Store
from tests.conftest import run_scope


def lognormal(median, n, seed, sigma=0.1):
    return np.random.default_rng(seed).lognormal(np.log(median), sigma, n)


def test_mann_whitney_against_hand_computed_values():
    # U = 0 for fully separated samples of 5: exact two-sided p = 2/252 = 0.0079; the
    # continuity-corrected normal approximation gives 0.0122.
    assert mann_whitney_p(np.arange(1, 6), np.arange(6, 11)) == pytest.approx(0.0122, abs=0.001)
    assert mann_whitney_p(np.ones(10), np.ones(10)) == 1.0
    assert mann_whitney_p(np.arange(20.0), np.arange(20.0)) > 0.9


def test_known_five_percent_shift_is_slower():
    c = compare_samples(lognormal(10, 2000, 1), lognormal(10.5, 2000, 2))
    assert c.verdict == "slower" and c.p_value < 1e-6
    assert c.ci_lo <= 1.05 <= c.ci_hi and c.ratio == pytest.approx(1.05, rel=0.01)


def test_faster_is_faster():
    assert compare_samples(lognormal(10, 2000, 3), lognormal(9.5, 2000, 4)).verdict == "faster"


def test_two_draws_of_one_distribution_show_no_difference():
    for seed in range(5):
        c = compare_samples(lognormal(10, 2000, 10 + seed), lognormal(10, 2000, 20 + seed))
        assert c.verdict == "no difference", c


def test_small_or_noisy_samples_are_insufficient():
    assert compare_samples([1, 2, 3], [1, 2, 3]).verdict == "insufficient data"
    assert compare_samples([], [1.0] * 10).verdict == "insufficient data"
    # a real 5 % shift hidden in 60 % noise with 15 samples cannot be shown either way
    c = compare_samples(lognormal(10, 15, 5, 0.6), lognormal(10.5, 15, 6, 0.6))
    assert c.verdict == "insufficient data"


def test_effect_below_threshold_is_not_a_regression():
    """Significant but 0.5 %: with a 2 % threshold it is not called slower."""
    c = compare_samples(lognormal(10, 20000, 7, 0.02), lognormal(10.05, 20000, 8, 0.02))
    assert c.p_value < 0.05 and c.verdict == "no difference"


def _synthetic_run(store, median, seed):
    rid = store.begin_run(["synthetic"], "test", 2)
    for i, size in enumerate([8, 1024]):
        x = lognormal(median * (1 + size / 1024), 1500, seed + i)
        store.add_point(
            rid,
            {
                "type": "point",
                "test": "p2p.pingpong",
                "index": i,
                "params": {"size": size},
                "unit": "us",
                "count": len(x),
                "stats": {"median": float(np.median(x))},
                "samples": x.tolist(),
            },
        )
    store.finish_run(rid, "complete")
    return rid


def test_cli_compare_is_a_regression_gate(db):
    s = Store(db)
    a = _synthetic_run(s, 2.0, 100)
    same = _synthetic_run(s, 2.0, 200)
    slow = _synthetic_run(s, 2.1, 300)
    ok = run_scope("compare", a, same, db=db)
    rows = [ln for ln in ok.stdout.splitlines() if ln.startswith("p2p.pingpong")]
    assert ok.returncode == 0 and len(rows) == 2 and all(r.rstrip().endswith("no difference") for r in rows), ok.stdout
    bad = run_scope("compare", a, slow, "--markdown", db=db)
    assert bad.returncode == 1 and bad.stdout.count("| slower |") == 2, bad.stdout
    loose = run_scope("compare", a, slow, "--min-effect", "0.10", db=db)
    rows = [ln for ln in loose.stdout.splitlines() if ln.startswith("p2p.pingpong")]
    assert loose.returncode == 0 and not any(r.rstrip().endswith("slower") for r in rows)
    missing = run_scope("compare", a, 99, db=db)
    assert missing.returncode == 2 and "no run 99" in missing.stderr
