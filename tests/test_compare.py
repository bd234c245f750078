import numpy as np
import pytest
from scipy import stats

from scope.analysis.compare import ONE_LAUNCH_EACH, ONE_LAUNCH_SIDE, compare_launches, holm, welch_log
from scope.run.combine import combine_launches
from scope.store import Store
from tests.conftest import run_scope

pytestmark = pytest.mark.unit


def launch_medians(median, launches, seed, sd=0.02):
    return list(median * np.exp(sd * np.random.default_rng(seed).standard_normal(launches)))


def test_welch_on_logs_matches_the_textbook_test():
    a, b = [1.0, 1.1, 0.95, 1.02], [1.2, 1.15, 1.3]
    ratio, lo, hi, p = welch_log(np.array(a), np.array(b))[:4]
    ref = stats.ttest_ind(np.log(b), np.log(a), equal_var=False)
    assert p == pytest.approx(ref.pvalue, rel=1e-9)
    assert ratio == pytest.approx(np.exp(np.mean(np.log(b)) - np.mean(np.log(a))))
    assert lo < ratio < hi


def test_identical_runs_give_no_verdict_of_change():
    """Two runs of one process, 3 launches each, 50 times: a verdict of change at most as
    often as alpha allows (and then only beyond the 2 % minimum effect)."""
    calls = [
        compare_launches(launch_medians(1.0, 3, 2 * s), launch_medians(1.0, 3, 2 * s + 1)).verdict for s in range(50)
    ]
    assert sum(v in ("slower", "faster") for v in calls) <= 5, calls


def test_a_ten_percent_change_is_found():
    calls = [compare_launches(launch_medians(1.0, 3, s), launch_medians(1.1, 3, 100 + s)).verdict for s in range(20)]
    assert calls.count("slower") >= 18, calls
    assert compare_launches(launch_medians(1.0, 3, 7), launch_medians(0.9, 3, 8)).verdict == "faster"


def test_the_columns_shown_are_the_statistic_the_ratio_divides():
    """Launch medians 1, 1, 4 against 2, 2, 2: the medians (1 and 2) would say B/A = 2 beside a
    ratio of 1.26; the geometric means (4^(1/3) = 1.587 and 2) divide to the ratio shown."""
    from scope.views.compare import render

    c = compare_launches([1.0, 1.0, 4.0], [2.0, 2.0, 2.0])
    assert c.center_a == pytest.approx(4 ** (1 / 3)) and c.center_b == pytest.approx(2.0)
    assert c.ratio == pytest.approx(c.center_b / c.center_a) == pytest.approx(2 / 4 ** (1 / 3))
    row = {"test": "p2p.pingpong", "params": {}, "size": 8, **c.as_dict()}
    text = render([row], 1, 2, False, 0.02)
    assert "1.59" in text and "1.260" in text and "(geo." in text and "mean)" in text  # headers wrap past 100 columns


def test_holm_adjusts_step_down():
    # Holm (1979): sorted p 0.01, 0.02, 0.04 of 3 -> 0.03, 0.04, 0.04 (monotone)
    assert holm([0.04, 0.01, float("nan"), 0.02]) == pytest.approx([0.04, 0.03, float("nan"), 0.04], nan_ok=True)


def test_small_effects_and_single_launches():
    # a tight 0.5 % shift with a 2 % minimum effect: no change (the CI lies inside the band)
    c = compare_launches(launch_medians(1.0, 5, 1, 0.001), launch_medians(1.005, 5, 2, 0.001))
    assert c.verdict == "no change" and c.p_value < 0.05
    assert compare_launches([1.0], [1.5]).verdict == ONE_LAUNCH_EACH
    assert compare_launches([1.0, 1.01], [1.5]).verdict == ONE_LAUNCH_SIDE
    assert compare_launches([1.0, 1.3], [1.1, 0.8]).verdict == "insufficient data"


def _synthetic_run(store, median, seed, launches=3):
    """A run stored as the runner stores one: each launch's points, then their combination."""
    rid = store.begin_run(["synthetic"], "test", 2, launches=launches)
    rng = np.random.default_rng(seed)
    for k in range(1, launches + 1):
        shift = np.exp(0.01 * rng.standard_normal())  # a launch moves all its samples together
        for i, size in enumerate([8, 1024]):
            x = median * (1 + size / 1024) * shift * rng.lognormal(0, 0.05, 1500)
            m = float(np.median(x))
            store.add_point(
                rid,
                {
                    "type": "point",
                    "test": "p2p.pingpong",
                    "index": i,
                    "params": {"size": size},
                    "unit": "us",
                    "count": len(x),
                    "stats": {"median": m, "ci_lo": m * 0.997, "ci_hi": m * 1.003},
                    "samples": x.tolist(),
                },
                launch=k,
            )
    combine_launches(store, rid, launches)
    store.finish_run(rid, "complete")
    return rid


def test_cli_compare_is_a_regression_gate(db):
    s = Store(db)
    a = _synthetic_run(s, 2.0, 100)
    same = _synthetic_run(s, 2.0, 200)
    slow = _synthetic_run(s, 2.3, 300)
    ok = run_scope("compare", a, same, db=db)
    rows = [ln for ln in ok.stdout.splitlines() if ln.startswith("p2p.pingpong")]
    assert ok.returncode == 0 and len(rows) == 2 and not any("slower" in r or "faster" in r for r in rows), ok.stdout
    assert all(" 3/3 " in r for r in rows) and "Launches are the replicates" in ok.stdout
    bad = run_scope("compare", a, slow, "--markdown", db=db)
    assert bad.returncode == 1 and bad.stdout.count("| slower |") == 2, bad.stdout
    loose = run_scope("compare", a, slow, "--min-effect", "0.20", db=db)
    rows = [ln for ln in loose.stdout.splitlines() if ln.startswith("p2p.pingpong")]
    assert loose.returncode == 0 and not any(r.rstrip().endswith("slower") for r in rows)
    one_a, one_b = _synthetic_run(s, 2.0, 400, launches=1), _synthetic_run(s, 3.0, 500, launches=1)
    single = run_scope("compare", one_a, one_b, db=db)
    rows = [ln for ln in single.stdout.splitlines() if ln.startswith("p2p.pingpong")]
    assert single.returncode == 0 and all(r.rstrip().endswith(ONE_LAUNCH_EACH) for r in rows), single.stdout
    missing = run_scope("compare", a, 99, db=db)
    assert missing.returncode == 2 and "no run 99" in missing.stderr
