"""Launches as replicates (analysis/replicates.py) on synthetic launches with a known truth."""

import numpy as np
import pytest

from scope.analysis.replicates import Launch, combine, modes_of, next_launch_interval, pooled_sd

pytestmark = pytest.mark.unit


def launch(rng, median, n=2000, sigma=0.05):
    x = median * np.exp(sigma * rng.standard_normal(n))
    s = np.sort(x)
    # the engine's own 95 % CI of the median (order statistics n/2 -/+ 0.98 sqrt(n))
    j, k = int(n / 2 - 0.98 * np.sqrt(n)), int(n / 2 + 0.98 * np.sqrt(n))
    return Launch(float(np.median(x)), float(s[j]), float(s[k]), n), x


def test_median_is_the_median_of_launch_medians_and_the_interval_spans_them():
    rng = np.random.default_rng(1)
    ls = [launch(rng, m) for m in (1.0, 1.2, 1.05)]
    r = combine(ls)
    meds = sorted(i.median for i, _ in ls)
    assert r.n == 3 and r.median == pytest.approx(meds[1])
    # three launches 20 % apart: the two-stage interval reaches (nearly) both extremes
    assert r.ci_lo <= meds[0] * 1.01 and r.ci_hi >= meds[2] * 0.99
    assert r.next_lo <= r.ci_lo and r.next_hi >= r.ci_hi
    assert r.spread_rel == pytest.approx((meds[2] - meds[0]) / meds[1])
    assert r.spread_exceeds_within  # 20 % between launches against ~0.2 % within one


def test_launches_relaxed_by_the_spread_do_not_speak_for_one_launchs_interval():
    """Later launches stop once their own error is small beside the spread (rep_target): their
    wide intervals are on purpose, so what one launch claims is read from the first."""
    from dataclasses import replace

    rng = np.random.default_rng(5)
    first = launch(rng, 1.0)
    later = [launch(rng, m, n=12) for m in (1.2, 1.05)]  # few samples: wide intervals
    wide = combine([first, *later])
    ls = [first, *((replace(i, relaxed=True), x) for i, x in later)]
    r = combine(ls)
    own = max(first[0].median - first[0].ci_lo, first[0].ci_hi - first[0].median) / first[0].median
    assert r.within_rel == pytest.approx(own) and wide.within_rel > 3 * own
    assert r.spread_exceeds_within and r.median == wide.median


def test_identical_launches_do_not_claim_a_spread():
    rng = np.random.default_rng(2)
    r = combine([launch(rng, 1.0) for _ in range(3)])
    assert not r.spread_exceeds_within
    assert r.ci_lo < 1.0 < r.ci_hi and (r.ci_hi - r.ci_lo) < 0.02


def test_one_launch_keeps_its_own_interval_and_predicts_nothing():
    rng = np.random.default_rng(3)
    info, x = launch(rng, 2.0)
    r = combine([(info, x)])
    assert (r.ci_lo, r.ci_hi) == (info.ci_lo, info.ci_hi) and r.next_lo is None and r.spread_rel is None
    assert next_launch_interval([2.0]) is None


def test_next_launch_interval_covers_new_launches_at_its_level():
    """Launch medians vary by a launch effect (sd 8 % in log) on top of sampling noise; the
    interval from 3 launches must hold a 4th launch's median about 95 % of the time."""
    rng = np.random.default_rng(4)
    hits, trials = 0, 400
    for _ in range(trials):
        meds = list(np.exp(0.08 * rng.standard_normal(4)))
        lo, hi = next_launch_interval(meds[:3])
        hits += lo <= meds[3] <= hi
    assert 0.90 <= hits / trials <= 0.99


def test_the_runs_pooled_spread_widens_a_point_whose_launches_agreed_by_chance():
    """With sd 8 % per launch, three launches that happen to agree within 0.1 % predict a
    next launch within about +/-1.3 %; the run's pooled spread (8 %) must widen that to about
    the +/-20 % a launch at that spread can fall in, and not narrow a point's own wider one."""
    lucky = [1.0, 1.001, 0.999]
    own_lo, own_hi = next_launch_interval(lucky)
    assert own_hi / own_lo < 1.03
    lo, hi = next_launch_interval(lucky, prior_sd=0.08)
    assert 1.15 < hi < 1.3 and 0.77 < lo < 0.87
    wide = [1.0, 1.5, 0.7]
    assert next_launch_interval(wide, prior_sd=0.01) == pytest.approx(next_launch_interval(wide))
    # calibrated: 400 runs of 20 points, launch sd 8 %: pooled interval holds the 4th launch
    rng = np.random.default_rng(5)
    hits = trials = 0
    for _ in range(100):
        meds = np.exp(0.08 * rng.standard_normal((20, 4)))
        prior = pooled_sd([list(m[:3]) for m in meds])
        for m in meds:
            lo, hi = next_launch_interval(list(m[:3]), prior)
            hits += lo <= m[3] <= hi
            trials += 1
    assert 0.93 <= hits / trials <= 0.995


def test_two_modes_are_named_and_one_mode_is_not_split():
    rng = np.random.default_rng(5)
    two = np.concatenate([0.60 + 0.01 * rng.standard_normal(3000), 0.73 + 0.01 * rng.standard_normal(2000)])
    modes = modes_of(two)
    assert len(modes) == 2
    assert modes[0].at == pytest.approx(0.60, rel=0.02) and modes[1].at == pytest.approx(0.73, rel=0.02)
    assert modes[0].share == pytest.approx(0.6, abs=0.05) and modes[1].share == pytest.approx(0.4, abs=0.05)
    assert modes_of(0.65 * np.exp(0.05 * rng.standard_normal(5000))) == []
    # a long right tail (the usual shape of latencies) is not a second mode
    assert modes_of(0.65 + rng.exponential(0.05, 5000)) == []


def test_each_launch_does_its_share_of_the_point():
    """The settings are the stored point's: 3 launches of 1 % x sqrt(3), 7 samples and 1/3 of
    the minimum time each hold at least 20 samples and 10 ms together."""
    from scope.run.launches import launch_share

    v = launch_share({"precision": 0.01, "min-count": 20, "min-time": 0.01, "budget": 1.5}, 3)
    assert v["budget"] == pytest.approx(0.5)  # a point costs its budget however many launches
    assert v["precision"] == pytest.approx(0.01 * 3**0.5) and v["min-count"] == 7
    assert v["min-time"] == pytest.approx(0.01 / 3) and 3 * v["min-count"] >= 20
    few = launch_share(
        {"precision": 0.5, "min-count": 3, "min-time": 0, "budget": 2}, 10
    )  # never more than asked, never below 5 unless asked so
    assert few == {"precision": 1.0, "min-count": 3, "min-time": 0, "budget": 0.2}
    many = launch_share({"precision": 0.01, "min-count": 20, "min-time": 0.01, "budget": 1}, 8)
    assert many["min-count"] == 5


def test_earlier_launches_are_told_in_arguments_a_launcher_passes_on():
    """Each point's launches so far, as the engine parses them (engine/core/refs.c); split into
    repeated arguments below Linux's 128 KiB a string, and left out when a run is too large to
    say it all (its launches are then measured as with --fixed-launches)."""
    from scope.run.launches import EARLIER_ITEM_BYTES, EARLIER_TOTAL_BYTES, earlier_launches

    assert earlier_launches({}) == []
    assert earlier_launches({3: [(1.25, 0.0123)], 0: [(10.0, 0.01), (12.5, 0.02)]}) == [
        "--earlier-launches",
        "0=10/0.01:12.5/0.02,3=1.25/0.0123",
    ]
    many = {i: [(1.0 + i, 0.01)] for i in range(9000)}  # about 12 bytes a point
    args = earlier_launches(many)
    items = args[1::2]
    assert set(args[0::2]) == {"--earlier-launches"} and len(items) >= 2
    assert all(len(x) <= EARLIER_ITEM_BYTES for x in items)
    assert sorted(int(e.split("=")[0]) for x in items for e in x.split(",")) == list(range(9000))
    huge = {i: [(1.0 + i, 0.01)] * 3 for i in range(EARLIER_TOTAL_BYTES // 20)}
    assert earlier_launches(huge) == []


def test_the_launch_target_by_hand():
    """tests/oracles.launch_target, the engine's rep_target restated as a test oracle (checked against
    the engine's records in test_e2e): two launches 1.0 and 1.2 with exact medians differ by
    log 1.2 = 0.1823, an sd of 0.1823 / sqrt 2 = 0.1289, so 1.96 x 0.5 x 0.1289 = 0.1264."""
    from tests.oracles import launch_target

    assert launch_target([(1.0, 0.0)], 1.2, 0.0, 0.01) == pytest.approx(0.12635, abs=1e-4)
    assert launch_target([(1.0, 0.0)], 1.2, 0.0, 0.2) == 0.2  # never tighter than asked
    assert launch_target([(1.0, 0.0)], 3.0, 0.0, 0.01) == 0.25  # capped
    # own errors of 1.96 x 0.1289 each explain the whole spread: no loosening
    assert launch_target([(1.0, 0.2527)], 1.2, 0.2527, 0.01) == 0.01
    assert launch_target([], 1.2, 0.0, 0.01) == 0.01
    # a launch stopped by its budget before it had an interval (its record's ci_rel is null, the
    # engine's NaN): the engine's rep_target keeps the asked precision, and so does its twin
    assert launch_target([(1.0, 0.0)], 1.2, None, 0.01) == 0.01
