"""A simulated platform calibrated from a measured run (issue 73): the calibration's arithmetic
against its own fits, the platform it writes (SimGrid's bounds, the calibration carried in it,
what-ifs), the comparison of a run with its simulation, and `scope sim check` on a recorded run
(tests/fixtures/simcal: a ping-pong and a stream over MPICH's protocols on one host)."""

from __future__ import annotations

import dataclasses
import json
import shutil
import xml.etree.ElementTree as ET

import pytest

from scope.analysis.breakpoints import fit_piecewise
from scope.analysis.simcal import calibrate
from scope.analysis.simcheck import REASONS, check
from scope.analysis.simnet import (
    DETACHED,
    ENVELOPE,
    Calibration,
    bytes_us,
    ois_setting,
    ois_us,
    pace_config,
    smpi_config,
    stream_time_us,
    time_us,
)
from scope.analysis.simsend import PACED
from scope.catalog.names import PINGPONG, STREAM
from scope.run.simcal import WhatIf, calibrated_xml
from scope.run.simplatform import read_platform
from scope.store import Store
from tests.conftest import replay, require_simgrid, run_scope
from tests.test_report import chromium


def _points(run, test):
    return sorted((p for p in run.points if p.test == test), key=lambda p: p.size)


def _sections(text: str) -> list[list[float]]:
    return [[float(x) for x in part.split(":")] for part in text.split(";")]


@pytest.mark.unit
def test_the_network_reproduces_each_range_of_the_ping_pongs_fit(measured):
    """Every measured size: the calibrated time of a blocking message (the host's time of the
    send and SMPI's formula with the factors) is the ping-pong's own piecewise fit at that size,
    to rounding; the first range's latency factor is 1 and the largest sizes' rate factor 1; a
    range across DETACHED is split there (a send from it pays no smpi/os); SMPI's section bounds
    are first size + 15 (it compares size + its 16-byte envelope, strictly, measured on SimGrid
    3.32)."""
    _, run = measured
    cal = calibrate([run])
    assert isinstance(cal, Calibration) and cal.same_host
    pts = _points(run, PINGPONG)
    fit = fit_piecewise([p.size for p in pts], [p.median for p in pts])
    want = []
    for s in fit.segments:
        cut = s.first_size < DETACHED <= s.last_size
        want += [(s.first_size, DETACHED - 1), (DETACHED, s.last_size)] if cut else [(s.first_size, s.last_size)]
    assert [(r.first_size, r.last_size) for r in cal.ranges] == want
    stream = _points(run, STREAM)
    assert 0 < cal.host_us == pytest.approx(stream[0].median)  # the stream's time a message at 0 B
    assert cal.latency_us == pytest.approx(fit.segments[0].t0_us - ENVELOPE / fit.segments[0].rinf_MBps - cal.host_us)
    assert smpi_config(cal)["smpi/os"] == f"0:{cal.host_us * 1e-6:.9g}:0"
    assert len(cal.ranges) >= 2  # MPICH's 8 KiB switch on one host, at least
    for p in pts:
        seg = next(s for s in fit.segments if s.first_size <= p.size <= s.last_size)
        assert time_us(cal, p.size) == pytest.approx(seg.t0_us + p.size / seg.rinf_MBps, rel=1e-9, abs=1e-9)
    assert cal.ranges[0].lat_factor == pytest.approx(1.0) and cal.ranges[-1].bw_factor == pytest.approx(1.0)
    cfg = smpi_config(cal)
    bounds = [int(b) for b, _ in _sections(cfg["smpi/lat-factor"])]
    assert bounds == [0] + [r.first_size + ENVELOPE - 1 for r in cal.ranges[1:]]
    assert [f for _, f in _sections(cfg["smpi/bw-factor"])] == pytest.approx([r.bw_factor for r in cal.ranges])
    assert cfg["network/weight-S"] == "0" and cfg["network/crosstraffic"] == "0"


@pytest.mark.unit
def test_the_nonblocking_sends_host_time_explains_the_stream(measured):
    """The stream's model (the host's time of each send, the window's shared route, the
    acknowledgement) gives back each measured stream time within the share's own fit residual,
    at every window the engine kept (64 down to 1), where the stream is no faster than the
    calibrated route carries its bytes; where it is, the model is the route's time."""
    _, run = measured
    cal = calibrate([run])
    assert cal.isend and cal.isend[0].first_size == 0
    ois = _sections(smpi_config(cal)["smpi/ois"])
    assert [int(b) for b, *_ in ois] == [max(o.first_size - 1, 0) for o in cal.isend]  # compared strictly, by size
    windows = set()
    for p in _points(run, STREAM):
        w = int(p.ops_per_iter)
        windows.add(w)
        o = next(x for x in reversed(cal.paces.get(STREAM) or cal.isend) if p.size >= x.first_size)
        if p.median >= bytes_us(cal, p.size):
            assert stream_time_us(cal, p.size, w) == pytest.approx(p.median, rel=o.max_residual + 1e-6), p.size
        else:
            assert bytes_us(cal, p.size) < stream_time_us(cal, p.size, w) < time_us(cal, p.size) * 1.05
    assert {1, 64} <= windows


@pytest.mark.unit
def test_where_the_link_paces_the_stream_a_send_is_charged_the_hosts_time_and_the_stream_its_pace(measured):
    """Within this host the stream's largest sizes take their bytes' time at the route's rate
    (within PACED): there a nonblocking send's host time is a blocking send's (o), and the
    stream's pace is kept apart, given only to the stream's own simulation (pace_config).
    Below, both are the same share."""
    _, run = measured
    cal = calibrate([run])
    pace = cal.paces.get(STREAM)
    assert pace and cal.isend != pace
    paced = [p for p in _points(run, STREAM) if p.median <= (1 + PACED) * (p.size + ENVELOPE) / cal.rate_MBps]
    assert paced and paced[0].size >= 65536 and all(p.size >= paced[0].size for p in paced)
    for p in paced:
        assert ois_us(cal, p.size) <= cal.host_us * (1 + 1e-6), p.size
    assert ois_us(cal, 65536, STREAM) > 10 * cal.host_us  # what a collective's sends paid before
    for p in _points(run, STREAM):
        if p.size < paced[0].size // 2:
            assert ois_us(cal, p.size) == pytest.approx(ois_us(cal, p.size, STREAM), rel=0.05), p.size
    assert smpi_config(cal)["smpi/ois"] == ois_setting(cal.isend)
    assert pace_config(cal.record(), STREAM) == [f"smpi/ois:{ois_setting(pace)}"]
    assert pace_config(dataclasses.replace(cal, paces={}).record(), STREAM) == []


@pytest.mark.unit
def test_the_platform_carries_its_calibration_and_what_ifs_change_its_links(measured, tmp_path):
    _, run = measured
    cal = calibrate([run])
    cal.sources[0]["note"] = "a--b -->"  # stored text: it must neither end the comment nor break the XML
    text = calibrated_xml(cal, WhatIf())
    (tmp_path / "p.xml").write_text(text)
    plat = read_platform(str(tmp_path / "p.xml"))
    assert plat.hosts == ["node-0", "node-1"] and plat.cores == [2, 2]
    assert plat.calibration["sources"][0]["note"] == "a--b -->" and plat.calibration["sources"][0]["run"] == run.id
    root = ET.fromstring(text)
    props = {p.get("id"): p.get("value") for p in root.find("config")}
    assert props == smpi_config(cal)
    c = root.find("cluster")
    assert float(c.get("lat")[:-1]) == pytest.approx(cal.latency_us * 1e-6 / 2, rel=1e-8)  # two links a route
    assert float(c.get("bw")[:-3]) == pytest.approx(cal.rate_MBps * 1e6, rel=1e-8)
    assert c.get("loopback_bw") is None  # within a host the route is shared, as memory bandwidth is
    big = ET.fromstring(calibrated_xml(cal, WhatIf(hosts=64, rate="x4", latency="3us"))).find("cluster")
    assert big.get("radical") == "0-63"
    assert float(big.get("bw")[:-3]) == pytest.approx(4 * cal.rate_MBps * 1e6, rel=1e-8)
    assert float(big.get("lat")[:-1]) == pytest.approx(1.5e-6, rel=1e-8)


@pytest.mark.unit
def test_sim_platform_from_a_run_and_its_refusals(measured, tmp_path):
    db, run = measured
    out = tmp_path / "cal.xml"
    p = run_scope("sim", "platform", "--from", str(run.id), "--hosts", "16", "--rate", "x2", "-o", out, db=db)
    assert p.returncode == 0, p.stderr
    assert "16 hosts" in p.stderr and "calibrated within a host" in p.stderr
    assert read_platform(str(out)).calibration["what_if"] == {"hosts": 16, "rate": "x2", "topology": "flat"}
    for argv, word in (
        (["--from", str(run.id), "--rate", "x0"], "a scale must be above 0"),
        (["--from", str(run.id), "--slow", "1:0.5"], "leave out --from, or --slow and --slow-link"),
        (["--from", "99"], "99"),
        ([], "needs --hosts, or --from RUN"),
    ):
        p = run_scope("sim", "platform", *argv, "-o", tmp_path / "x.xml", db=db)
        assert p.returncode == 2 and word in p.stderr, (argv, p.stderr)
        assert "Traceback" not in p.stderr


@pytest.mark.unit
def test_sim_check_refuses_before_it_simulates(measured, tmp_path):
    db, run = measured
    for argv, word in (
        ([str(run.id), "--page", tmp_path / "no" / "p.html"], "folder"),
        (["99"], "no run 99"),
        ([str(run.id), "--tolerance", "0"], "must be positive"),
    ):
        p = run_scope("sim", "check", *argv, db=db)
        assert p.returncode == 2 and word in p.stderr and "Traceback" not in p.stderr, (argv, p.stderr)
    store = Store(db)
    assert [r["id"] for r in store.runs()] == [run.id]  # nothing simulated, nothing stored
    store.close()


@pytest.mark.unit
def test_a_run_without_a_ping_pong_is_refused_with_the_fix(tmp_path):
    db = tmp_path / "w.db"
    rid = replay("windows", db)  # collectives only
    p = run_scope("sim", "platform", "--from", str(rid), "-o", tmp_path / "x.xml", db=db)
    assert p.returncode == 2 and "no run given has p2p.pingpong" in p.stderr and "scope run p2p.pingpong" in p.stderr


@pytest.mark.unit
def test_the_check_says_each_points_error_and_why(measured):
    """A run against a copy of itself whose medians are moved by known factors: each error is
    that factor, the headline counts the points within, and a stream point faster than the
    calibrated route is said to be so."""
    _, run = measured
    cal = calibrate([run])
    factor = {PINGPONG: 1.0, STREAM: 1.08}
    sim = dataclasses.replace(run, id=run.id + 100, points=[dataclasses.replace(p, median=p.median * factor[p.test])
                                                            for p in run.points])  # fmt: skip
    c = check(run, [sim], 0.05, cal)
    assert len(c.rows) == len(run.points) and c.unmatched == 0
    for r in c.rows:
        assert r.error == pytest.approx(factor[r.test] - 1, abs=1e-12)
        assert r.within == (r.test == PINGPONG) and r.procs == run.ranks
        assert (r.why is None) == r.within and (r.why is None or r.why in REASONS)
    assert c.within == len(_points(run, PINGPONG))
    assert c.headline().startswith(f"the simulation is within 5 % of the measurement at {c.within} of {len(c.rows)}")
    faster = [r for r in c.rows if r.test == STREAM and r.measured_us < bytes_us(cal, r.size)]
    assert faster and all(r.why in ("past-route", "off-line") for r in faster)


@pytest.mark.build
def test_sim_check_simulates_the_run_on_its_calibration(measured, tmp_path):
    """`scope sim check` on the recorded run: SMPI gives back the calibrated model (the
    ping-pong's fit, the stream's model) at every size within 3 % (the simulated engine's own
    timer reads add about 0.015 us); each point outside the tolerance says why; the simulated
    run records its calibration and `scope show` says it."""
    require_simgrid()
    src, run = measured
    db = tmp_path / "c.db"
    shutil.copy(src, db)
    page = tmp_path / "check.html"
    p = run_scope("sim", "check", str(run.id), "--json", "--tolerance", "10", "--page", page, db=db)
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    dom = chromium(tmp_path, "--virtual-time-budget=5000", "--dump-dom", page.as_uri())
    assert dom.count("<svg") == 2 and doc["headline"] in dom  # a plot a test, the headline as the JSON's
    assert dom.count('class="out"') == doc["points"] - doc["within"]
    cal = calibrate([run])
    windows = {p.size: int(p.ops_per_iter) for p in _points(run, STREAM)}
    assert doc["points"] == len(run.points) and doc["unmatched"] == 0
    for r in doc["rows"]:
        model = time_us(cal, r["size"]) if r["test"] == PINGPONG else stream_time_us(cal, r["size"], windows[r["size"]])
        assert r["simulated_us"] == pytest.approx(model, rel=0.03), r
        assert (r["why"] is None) == (abs(r["error"]) <= 0.10) and (r["why"] is None or r["why"] in doc["reasons"])
    assert doc["calibration"]["sources"][0] == {**cal.sources[0]}
    store = Store(db)
    sim = store.load_run(doc["simulated_run"], samples=False)
    store.close()
    assert sim.context.sim["calibration"]["sources"][0]["run"] == run.id and sim.label == f"sim check of run {run.id}"
    shown = run_scope("show", str(doc["simulated_run"]), db=db)
    assert f"calibrated from p2p.pingpong of run {run.id}" in shown.stdout


@pytest.fixture(scope="module")
def screened(tmp_path_factory):
    """A screen of 4 testbed hosts, host 2's links at a quarter of the others' rate (recorded),
    and the ping-pong run, in one store."""
    db = tmp_path_factory.mktemp("screen") / "s.db"
    screen, p2p = replay("screen-slowhost", db), replay("simcal", db)
    return db, screen, p2p


@pytest.mark.unit
def test_a_screens_slow_host_is_planted_as_its_links_share(screened, tmp_path):
    """The screen flags scope-h2 (its links at a quarter, by tc); the calibration keeps it as
    host 2's link at the share of the rate the screen's times give (the bytes' times, less the
    pairs' fixed part), and the platform writes that link alone slower."""
    db, screen, p2p = screened
    store = Store(db)
    runs = [store.load_run(p2p, samples=False), store.load_run(screen, samples=False)]
    store.close()
    cal = calibrate(runs)
    assert list(cal.host_shares) == [2] and 0.2 < cal.host_shares[2] < 0.35
    src = next(s for s in cal.sources if s["test"] == "p2p.allpairs")
    assert src["run"] == screen and list(src["slow_hosts"]) == ["scope-h2"] and cal.hosts == 4
    root = ET.fromstring(calibrated_xml(cal, WhatIf()))
    rates = {ln.get("id"): float(ln.get("bandwidth")[:-3]) for ln in root.iter("link")}
    assert rates["link-2"] == pytest.approx(cal.host_shares[2] * cal.rate_MBps * 1e6, rel=1e-5)
    assert all(rates[f"link-{h}"] == pytest.approx(cal.rate_MBps * 1e6, rel=1e-5) for h in (0, 1, 3))
    assert {p.get("id") for p in root.find("config")} >= {"smpi/lat-factor", "smpi/bw-factor"}


@pytest.mark.build
def test_the_planted_slow_host_reappears_in_a_simulated_screen(screened, tmp_path):
    """The calibrated platform's own screen (p2p.allpairs under SMPI) flags node-2 and nothing
    else: the measured cluster's slow host, carried through the calibration."""
    require_simgrid()
    src, screen, p2p = screened
    db, plat = tmp_path / "s.db", tmp_path / "p.xml"
    shutil.copy(src, db)
    p = run_scope("sim", "platform", "--from", screen, "--from", p2p, "-o", plat, db=db)
    assert p.returncode == 0, p.stderr
    p = run_scope("run", "--sim", plat, "-n", 4, "--sim-clocks", "none", "p2p.allpairs", "--sizes", "256K",
                  "--launches", 1, db=db)  # fmt: skip
    assert p.returncode == 0, p.stderr
    shown = run_scope("show", "last", "--json", db=db)
    doc = json.loads(shown.stdout)
    flags = [f for sc in doc["screens"] for f in sc["flags"]]
    assert [(f["kind"], f["hosts"]) for f in flags] == [("host", ["node-2"])], flags


@pytest.mark.build
def test_predict_sim_runs_the_kernel_on_the_calibrated_platform(tmp_path):
    """`scope predict KERNEL --sim`: beside the analytic prediction, the kernel itself under SMPI
    on a platform calibrated from the same inputs, its computation simulated at node.dgemm's
    rate; every count has a simulated time, the simulated run records where its values came
    from, and the JSON marks each figure. (Simulated computation is this host's timing of each
    burst: a live time, so no figure is compared with a constant here; bench/sim_calibration.py
    compares them with the measured.)"""
    require_simgrid()
    db = tmp_path / "p.db"
    ids = {name: replay(name, db) for name in ("simcal", "pred-dgemm", "pred-stream", "pred-kernels")}
    p = run_scope("predict", "kernel.jacobi", "-p", "n=128", "-p", "iters=4", "--procs", "1,2", "--sim", "--json",
                  db=db)  # fmt: skip
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert [r["procs"] for r in doc["rows"]] == [1, 2]
    assert all(r["simulated_us"] > 0 and r["measured_us"] > 0 and r["total_us"] > 0 for r in doc["rows"])
    for r in doc["rows"]:
        assert r["simulated_error"] == pytest.approx(r["simulated_us"] / r["measured_us"] - 1)
    sim = doc["simulated"]
    assert {s["test"]: s["run"] for s in sim["calibration"]["sources"]} == {
        PINGPONG: ids["simcal"], STREAM: ids["simcal"], "node.dgemm": ids["pred-dgemm"]}  # fmt: skip
    store = Store(db)
    run = store.load_run(sim["run"], samples=False)
    store.close()
    assert "smpi/simulate-computation:yes" in run.context.sim["config"]
    assert f"smpi/host-speed:{sim['host_speed_flops']:.0f}f" in run.context.sim["config"]
    assert run.context.sim["calibration"]["flops_per_core"] == sim["host_speed_flops"]
    text = run_scope("predict", "kernel.jacobi", "-p", "n=128", "-p", "iters=4", "--procs", "1,2", "--sim", db=db)
    assert text.returncode == 0, text.stderr
    assert "sim error" in text.stdout and "predicted: the analytic cost model; measured: this machine" in text.stdout
    refused = run_scope("predict", "--check", "last", "--sim", db=db)
    assert refused.returncode != 0 and "--sim simulates a prediction" in refused.stderr


def checked_kernels(tmp_path, recorded: str) -> tuple:
    """The recorded kernel run `recorded` in a store with the calibration's inputs (the
    ping-pong and stream of `simcal`, node.dgemm), checked against its simulation: (the store,
    the runs' ids by fixture, the check's JSON)."""
    require_simgrid()
    db = tmp_path / "k.db"
    ids = {name: replay(name, db) for name in ("simcal", "pred-dgemm", recorded)}
    p = run_scope("sim", "check", ids[recorded], "--from", ids["simcal"], "--from", ids["pred-dgemm"], "--json",
                  db=db)  # fmt: skip
    assert p.returncode == 0, p.stderr
    return db, ids, json.loads(p.stdout)


@pytest.mark.build
def test_sim_check_of_a_kernel_run_simulates_its_computation(tmp_path):
    """A kernel run checked against its simulation: every point (each process count, its n and
    iterations) has its simulated twin, computed with SMPI's computation on at the calibrated
    node.dgemm rate, and the simulated matmul multiplies with the same BLAS as the measured."""
    db, ids, doc = checked_kernels(tmp_path, "pred-kernels")
    assert doc["unmatched"] == 0 and sorted((r["test"], r["procs"]) for r in doc["rows"]) == [
        ("kernel.jacobi", 1), ("kernel.jacobi", 2), ("kernel.matmul", 1), ("kernel.matmul", 2)]  # fmt: skip
    assert all(r["simulated_us"] > 0 and r["size"] is None for r in doc["rows"])
    store = Store(db)
    sim = store.load_run(doc["simulated_run"], samples=False)
    measured = store.load_run(ids["pred-kernels"], samples=False)
    store.close()
    assert {"smpi/simulate-computation:yes", "smpi/cpu-threshold:5e-06"} <= set(sim.context.sim["config"])
    notes = {(p.test, p.procs): p.note for p in sim.points}
    assert all("OpenBLAS" in (notes[(p.test, p.procs)] or "") for p in measured.points if p.test == "kernel.matmul")
