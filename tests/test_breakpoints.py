import numpy as np
import pytest

from scope.analysis.breakpoints import fit_piecewise

pytestmark = pytest.mark.unit

SIZES = [0] + [2**k for k in range(0, 23)]


def curve(segments, noise, seed):
    """segments: [(up_to_size, t0, rinf)], noise: relative sd."""
    rng = np.random.default_rng(seed)
    out = []
    for n in SIZES:
        t0, rinf = next((a, b) for lim, a, b in segments if n <= lim)
        out.append((t0 + n / rinf) * (1 + rng.normal(0, noise)))
    return out


def test_recovers_known_switches():
    # eager up to 4 KiB, rendezvous from 8 KiB, a third regime from 256 KiB
    segs = [(4096, 1.0, 3000.0), (131072, 6.0, 8000.0), (1 << 30, 40.0, 12000.0)]
    for seed in range(5):
        pw = fit_piecewise(SIZES, curve(segs, 0.005, seed))
        assert pw.switches == [(4096, 8192), (131072, 262144)], (seed, pw.switches)
        mid = pw.segments[1]
        assert mid.t0_us == pytest.approx(6.0, rel=0.1) and mid.rinf_MBps == pytest.approx(8000, rel=0.05)


def test_a_long_series_finds_a_switch_between_grid_positions():
    # 4096 sizes: cuts are sought on a coarser grid, then refined; a switch off that grid must
    # come out exact, not as an extra short segment straddling it
    rng = np.random.default_rng(3)
    sizes = np.arange(1, 4097) * 256
    switch = 2047 * 256  # index 2046: not a multiple of the grid step
    t = np.where(sizes < switch, 1 + sizes / 3000, 6 + sizes / 9000) * (1 + rng.normal(0, 0.01, len(sizes)))
    pw = fit_piecewise(sizes.tolist(), t.tolist())
    assert pw.switches == [(switch - 256, switch)]


def test_a_single_line_stays_one_segment():
    for seed in range(5):
        pw = fit_piecewise(SIZES, curve([(1 << 30, 2.0, 5000.0)], 0.01, seed))
        assert len(pw.segments) == 1 and pw.switches == []
        assert pw.segments[0].rinf_MBps == pytest.approx(5000, rel=0.05)


def test_positions_and_degenerate_input():
    segs = [(1024, 1.0, 1000.0), (1 << 30, 10.0, 4000.0)]
    pw = fit_piecewise(SIZES, curve(segs, 0.002, 1))
    assert pw.switches == [(1024, 2048)]
    assert pw.switch_positions()[0] == pytest.approx((1024 * 2048) ** 0.5)
    assert fit_piecewise([8, 16], [1, 2]) is None


def test_unphysical_segments_are_marked_and_warned(tmp_path):
    """A curve whose last segment's line crosses zero: its t0 is negative, and the reader is
    told wherever that t0 appears."""
    from scope.analysis.facts import derive
    from scope.store import Store
    from scope.views.terminal import show_run

    s = Store(tmp_path / "s.db")
    rid = s.begin_run(["synthetic"], "test", 2)
    segs = [(4096, 1.0, 3000.0), (1 << 30, -4.0, 1000.0)]  # t0 < 0 beyond 4 KiB, yet every time > 0
    times = curve(segs, 0.002, 4)
    for i, (n, t) in enumerate(zip(SIZES, times)):
        rec = {"type": "point", "test": "p2p.pingpong", "index": i, "params": {"size": n}, "unit": "us"}
        s.add_point(rid, {**rec, "stats": {"median": t}, "bytes_per_op": n})
    facts = derive(s.load_run(rid))
    (w,) = [x for x in facts.warnings if x.kind == "unphysical"]
    assert "negative t0" in w.message
    text = show_run(facts)
    assert "(unphysical)" in text and "warning [unphysical]" in text
