"""The host's time of a send in a calibrated platform (issue 73): part of every one-way time the
ping-pong measured, charged to each send (smpi/os, smpi/ois) and taken out of the route's
latency, so a collective's nonblocking sends do not pay it twice."""

from __future__ import annotations

import dataclasses
import json
from types import SimpleNamespace

import pytest

from scope.analysis.breakpoints import fit_piecewise
from scope.analysis.simcal import MAX_RATE_MBPS, _ranges, calibrate
from scope.analysis.simnet import DETACHED, finite_calibration, stream_time_us, time_us, undetached_config
from scope.catalog.names import PINGPONG, STREAM
from scope.run.sim import detached_thresh
from scope.views.fmt import calibration_text
from tests.conftest import replay, require_simgrid, run_scope
from tests.test_simcal import _points, checked_kernels


@pytest.mark.unit
def test_a_host_time_longer_than_a_ping_pong_keeps_every_message_a_time(measured):
    """A stream whose time a message at 0 B is 40x the ping-pong's at 8 KiB (a noisy stream, or
    a line past a token bucket's burst): the host's time is cut to the shortest one-way time
    below DETACHED, every factor stays finite and above zero (else SimGrid refuses the
    platform), and each measured size's blocking time is still the fit's."""
    _, run = measured
    pp = _points(run, PINGPONG)
    at_8k = next(p.median for p in pp if p.size == 8192)
    slow = [dataclasses.replace(p, median=p.median * (40 * at_8k / p.median if p.size == 0 else 1.0))
            for p in _points(run, STREAM)]  # fmt: skip
    others = [p for p in run.points if p.test != STREAM]
    cal = calibrate([dataclasses.replace(run, points=others + slow)])
    fit = fit_piecewise([p.size for p in pp], [p.median for p in pp])
    shortest = min(g.t0_us + p.size / g.rinf_MBps for g in fit.segments for p in pp
                   if g.first_size <= p.size <= g.last_size and p.size < DETACHED)  # fmt: skip
    assert 0 < cal.host_us <= shortest - 1e-3 + 1e-12 and cal.host_us < slow[0].median
    assert finite_calibration(cal) is None
    assert all(r.lat_factor >= 0 and 0 < r.bw_factor < float("inf") for r in cal.ranges)
    for p in pp:
        seg = next(s for s in fit.segments if s.first_size <= p.size <= s.last_size)
        assert time_us(cal, p.size) == pytest.approx(seg.t0_us + p.size / seg.rinf_MBps, rel=1e-9, abs=1e-9)


@pytest.mark.unit
def test_without_a_stream_the_route_keeps_the_whole_one_way_time(measured):
    """No p2p.stream: no host time is known, so none is charged (smpi/os zero) and the route's
    latency is the first range's, as before the host's time was split out."""
    _, run = measured
    cal = calibrate([dataclasses.replace(run, points=[p for p in run.points if p.test != STREAM])])
    pp = _points(run, PINGPONG)
    fit = fit_piecewise([p.size for p in pp], [p.median for p in pp])
    g = fit.segments[0]
    assert cal.host_us == 0.0 and cal.isend == []
    assert cal.latency_us == pytest.approx(g.t0_us - 16 / g.rinf_MBps)


@pytest.mark.unit
def test_a_range_below_the_first_ones_latency_caps_the_host_time():
    """A ping-pong whose first sizes (0-8 B) took 10 us and the rest 7 us + n / 1000 MB/s (two
    ranges, the second's line below the first's latency), with a stream of 9.9 us a message:
    the host's time is the shortest line below DETACHED less 1 ns, not the first range's
    latency (which would leave 16 B a negative time: a rate factor SimGrid refuses)."""
    sizes = [0, 1, 2, 4, 8] + [1 << k for k in range(4, 21)]
    fit = fit_piecewise(sizes, [10.0 if n <= 8 else 7.0 + n / 1000 for n in sizes])
    assert [(g.first_size, g.last_size) for g in fit.segments] == [(0, 8), (16, 1 << 20)]
    host, lat, _, ranges = _ranges(fit, [SimpleNamespace(size=n) for n in sizes], 9.9)
    assert host == pytest.approx(7.016 - 1e-3) and lat == pytest.approx(10.0 - 16 / MAX_RATE_MBPS - host)
    assert all(r.lat_factor >= 0 and 0 < r.bw_factor < float("inf") for r in ranges)


@pytest.mark.unit
def test_without_detached_sends_the_host_time_returns_to_the_latency(measured):
    """`--sim-cfg scale` detaches no send, and SMPI charges smpi/os to detached sends alone: the
    sections below DETACHED take the host's time back in their latency factor (host / L), the
    others keep theirs; with SimGrid's default threshold, or no host time, nothing moves."""
    _, run = measured
    cal = calibrate([run])
    record = cal.record()
    (cfg,) = undetached_config(record, 0)
    key, value = cfg.split(":", 1)
    got = [[float(x) for x in part.split(":")] for part in value.split(";")]
    assert key == "smpi/lat-factor" and [int(b) for b, _ in got] == [r.first_size + 15 if r.first_size else 0
                                                                      for r in cal.ranges]  # fmt: skip
    for (_, f), r in zip(got, cal.ranges):
        back = cal.host_us / cal.latency_us if r.first_size < DETACHED else 0.0
        assert f == pytest.approx(r.lat_factor + back, rel=1e-8)
    assert undetached_config(record, DETACHED) == [] and undetached_config({**record, "host_us": 0.0}, 0) == []
    assert undetached_config(None, 0) == []
    assert detached_thresh(["smpi/coll-selector:mpich"]) == DETACHED
    assert detached_thresh(["smpi/send-is-detached-thresh:0", "x/y:1"]) == 0


@pytest.mark.build
def test_a_ping_pong_takes_the_same_time_with_and_without_detached_sends(tmp_path):
    """The recorded run's ping-pong simulated on its own calibration, once with SimGrid's
    defaults and once with `--sim-cfg scale` (no detached send): the same simulated time at
    every size, the host's time charged as smpi/os in one and in the latency in the other."""
    require_simgrid()
    db, plat = tmp_path / "s.db", tmp_path / "p.xml"
    rid = replay("simcal", db)
    assert run_scope("sim", "platform", "--from", rid, "-o", plat, db=db).returncode == 0
    times = []
    for extra in ([], ["--sim-cfg", "scale"]):
        p = run_scope("run", "--sim", plat, "-n", 2, *extra, "p2p.pingpong", "--sizes", "0,8,1K,8K,32K,64K,1M",
                      "--launches", 1, db=db)  # fmt: skip
        assert p.returncode == 0, p.stderr
        doc = json.loads(run_scope("show", "last", "--json", db=db).stdout)
        times.append({pt["params"]["size"]: pt["stats"]["median"] for pt in doc["points"]})
    assert times[0].keys() == times[1].keys() and len(times[0]) == 7
    assert all(times[1][n] == pytest.approx(t, rel=1e-6) for n, t in times[0].items()), times


@pytest.mark.build
def test_a_window_timed_application_keeps_its_repetitions_when_its_computation_is_simulated(tmp_path):
    """app.ft at 1 and 2 ranks (recorded, window-timed) checked against its simulation with its
    computation on: every point has its simulated twin. SMPI's own work around a rank's wait for
    a window's start (1.3-1.7 us of this host, simulated as computation above SMPI's 1 us
    threshold) made every start late and left app.ft without a sample, most runs; bursts under
    5 us are not simulated now."""
    _, _, doc = checked_kernels(tmp_path, "pred-ft")
    assert doc["unmatched"] == 0 and sorted(r["procs"] for r in doc["rows"]) == [1, 2], doc["rows"]
    assert all(r["test"] == "app.ft" and r["simulated_us"] > 1000 for r in doc["rows"])


@pytest.fixture(scope="module")
def with_loggp(tmp_path_factory):
    """The calibration's ping-pong and stream run and a p2p.loggp run (both within this host), one store."""
    db = tmp_path_factory.mktemp("loggp") / "l.db"
    return db, replay("simcal", db), replay("loggp", db)


@pytest.mark.unit
def test_loggps_o_is_the_host_time_of_a_send_where_it_was_measured(with_loggp):
    """A p2p.loggp run measured where the ping-pong was gives the host's time of a send (its o,
    PRTT method, fitted at its longest burst) in place of the stream's time a message at 0 B:
    within this host 0.08 us against the stream's 0.49 (the stream's is the gap g, a message's
    pace, which stays its nonblocking sends' time); the source names it, each blocking time is
    still the ping-pong's fit, and a run measured elsewhere (between hosts) is not taken."""
    from scope.analysis.loggp import fit_loggp
    from scope.store import Store

    db, simcal, loggp = with_loggp
    store = Store(db)
    pp_run, lg_run = store.load_run(simcal, samples=False), store.load_run(loggp, samples=False)
    fits = fit_loggp([p for p in lg_run.points if p.test == "p2p.loggp"])
    o = max(fits, key=lambda f: f.n).o_us
    alone, both = calibrate([pp_run]), calibrate([pp_run, lg_run])
    stream0 = _points(pp_run, STREAM)[0].median
    assert alone.host_us == pytest.approx(stream0) and both.host_us == pytest.approx(o) and 0 < o < stream0 / 2
    src = next(s for s in both.sources if s["test"] == "p2p.loggp")
    assert src["run"] == loggp and src["o_us"] == pytest.approx(o)
    assert "p2p.loggp of run 2 (o 0.0838 us)" in calibration_text(both.record())
    pp = _points(pp_run, PINGPONG)
    fit = fit_piecewise([p.size for p in pp], [p.median for p in pp])
    for p in pp:
        seg = next(s for s in fit.segments if s.first_size <= p.size <= s.last_size)
        assert time_us(both, p.size) == pytest.approx(seg.t0_us + p.size / seg.rinf_MBps, rel=1e-9, abs=1e-9)
    for p in _points(pp_run, STREAM):  # the stream's pace is its nonblocking sends', whichever o is charged
        w = int(p.ops_per_iter or 1)
        assert stream_time_us(both, p.size, w) == pytest.approx(stream_time_us(alone, p.size, w), rel=1e-3)
    elsewhere = dataclasses.replace(lg_run, context=dataclasses.replace(lg_run.context, placement=[
        dataclasses.replace(pl, host=f"h{pl.rank}") for pl in lg_run.context.placement]))  # fmt: skip
    assert calibrate([pp_run, elsewhere]).host_us == pytest.approx(stream0)
    store.close()


@pytest.mark.build
def test_a_platform_with_loggps_o_still_gives_back_the_ping_pong(with_loggp, tmp_path):
    """sim check of the ping-pong run on the platform calibrated from it and the LogGP run: the
    simulated ping-pong is the calibrated formula within 3 % at every size, o charged as each
    blocking send's host time (smpi/os) and taken out of the route's latency."""
    require_simgrid()
    db, simcal, loggp = with_loggp
    got = run_scope("sim", "check", str(simcal), "--from", str(simcal), "--from", str(loggp), "--json", db=db)
    assert got.returncode == 0, got.stderr
    doc = json.loads(got.stdout)
    assert any(s["test"] == "p2p.loggp" for s in doc["calibration"]["sources"])
    rows = [r for r in doc["rows"] if r["test"] == PINGPONG]
    assert len(rows) >= 20 and all(r["simulated_us"] == pytest.approx(r["model_us"], rel=0.03) for r in rows)
