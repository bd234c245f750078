"""The host's time of a nonblocking send calibrated from p2p.pingping (issue 73): both ranks send
at once, as a collective's step between two ranks does, and on the testbed that costs each host
more than a one-way message (10 us against 7.3).  Recorded on the testbed (fixtures testbed-p2p,
testbed-pingping, testbed-coll: 2 hosts at 1 Gbit/s); the simulations are deterministic."""

from __future__ import annotations

import dataclasses
import json
import shutil

import pytest

from scope.analysis.simcal import calibrate
from scope.analysis.simnet import (
    ENVELOPE,
    exchange_time_us,
    ois_setting,
    ois_us,
    pace_config,
    route_us,
    smpi_config,
    stream_time_us,
)
from scope.analysis.simsend import PACED
from scope.catalog.names import PINGPING, STREAM
from scope.store import Store
from tests.conftest import replay, require_simgrid, run_scope


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """The testbed's p2p run (ping-pong, stream), its exchange run and its collectives, one store."""
    db = tmp_path_factory.mktemp("exchange") / "x.db"
    ids = [replay(name, db) for name in ("testbed-p2p", "testbed-pingping", "testbed-coll", "simcal")]
    store = Store(db)
    runs = [store.load_run(i, samples=False) for i in ids]
    store.close()
    return db, ids, runs


def _paced(cal, p) -> bool:
    return p.median <= (1 + PACED) * (p.size + ENVELOPE) / cal.rate_MBps


@pytest.mark.unit
def test_the_exchange_gives_a_nonblocking_sends_host_time_and_the_stream_keeps_its_pace(recorded):
    """Calibrated with the exchange, a simulated ping-ping (each send's host time, then the route)
    gives back every measured exchange the route does not outrun, at its own pace; the platform's
    ois is the exchange's host time (a blocking send's where the link paces it), and the stream's
    model is what it was without the exchange, at every size."""
    _, _, (p2p, pingping, _, _) = recorded
    alone, cal = calibrate([p2p]), calibrate([pingping, p2p])
    assert cal.sources[-1]["test"] == PINGPING and cal.sources[-1]["run"] == pingping.id
    pts = sorted((p for p in pingping.points if p.test == PINGPING), key=lambda p: p.size)
    assert len(pts) == 24
    checked = 0
    for p in pts:
        if p.median < route_us(cal, p.size):
            continue  # faster than the calibrated route: no host time takes it back ("past-route")
        o = next(x for x in reversed(cal.paces.get(PINGPING) or cal.isend) if p.size >= x.first_size)
        assert exchange_time_us(cal, p.size) == pytest.approx(p.median, rel=o.max_residual + 1e-6), p.size
        host = ois_us(cal, p.size)
        assert (
            host <= cal.host_us * (1 + 1e-9) if _paced(cal, p) else host == pytest.approx(ois_us(cal, p.size, PINGPING))
        )
        checked += 1
    assert checked >= 20
    small = next(p for p in pts if p.size == 8)
    assert ois_us(cal, 8) == pytest.approx(small.median - route_us(cal, 8), rel=1e-6)
    assert ois_us(cal, 8) > cal.host_us + 2.0  # the exchange's surplus over a blocking send: 2.5 us here
    for p in p2p.points:
        if p.test == STREAM:
            w = int(p.ops_per_iter)
            assert stream_time_us(cal, p.size, w) == pytest.approx(stream_time_us(alone, p.size, w), rel=1e-9), p.size
    assert smpi_config(cal)["smpi/ois"] == ois_setting(cal.isend)
    assert pace_config(cal.record(), STREAM) == [f"smpi/ois:{ois_setting(cal.paces[STREAM])}"]


@pytest.mark.unit
def test_an_exchange_measured_elsewhere_is_not_taken(recorded):
    """An exchange within one host says nothing of the host's time between two: a calibration of
    the testbed's ping-pong ignores it (and the shared-memory run is newer)."""
    _, _, (p2p, _, _, shm) = recorded
    local = dataclasses.replace(
        shm, points=[dataclasses.replace(p, test=PINGPING) for p in shm.points if p.test == "p2p.pingpong"]
    )
    cal = calibrate([local, p2p])
    assert cal.isend == calibrate([p2p]).isend and all(s["test"] != PINGPING for s in cal.sources)


@pytest.mark.build
def test_sim_check_of_the_collectives_with_the_exchange(recorded, tmp_path):
    """The recorded collectives, checked on the platform calibrated from the ping-pong, the stream
    and the exchange: the exchanges of 8 B (allreduce's recursive doubling, alltoall's scattered)
    and allreduce's two of 512 B at 1 KiB come within 15 %, where they were 19-27 % under with
    the stream's host time; the collectives' simulations do not carry the stream's pace."""
    require_simgrid()
    src, (p2p, pingping, coll, _), _ = recorded
    db = tmp_path / "c.db"
    shutil.copy(src, db)
    got = run_scope("sim", "check", str(coll), "--from", str(p2p), "--from", str(pingping), "--json",
                    "--tolerance", "15", db=db)  # fmt: skip
    assert got.returncode == 0, got.stderr
    doc = json.loads(got.stdout)
    assert doc["points"] == 12 and doc["unmatched"] == 0
    assert any(s["test"] == PINGPING for s in doc["calibration"]["sources"])
    rows = {(r["test"], r["size"]): r for r in doc["rows"]}
    for key in (("coll.allreduce", 8), ("coll.allreduce", 1024), ("coll.alltoall", 8)):
        assert abs(rows[key]["error"]) < 0.15, (key, rows[key]["error"])
    assert doc["within"] >= 9


@pytest.mark.build
def test_a_check_with_every_point_within_its_tolerance_is_shown(recorded, tmp_path):
    """Every point within the tolerance leaves the reason column empty: the table shows it (it
    was wrapped at width 0, an internal error, the one outcome a check hopes for)."""
    require_simgrid()
    src, (p2p, _, coll, _), _ = recorded
    db = tmp_path / "w.db"
    shutil.copy(src, db)
    got = run_scope("sim", "check", str(coll), "--from", str(p2p), "--tolerance", "1000", db=db)
    assert got.returncode == 0, got.stderr
    assert "the simulation is within 1000 % of the measurement at 12 of 12 points" in got.stdout
    assert "outside at" not in got.stdout


@pytest.mark.build
def test_within_one_host_each_rank_is_simulated_on_a_host_of_its_own(tmp_path):
    """An exchange measured within this host (fixture simcal-pingping): its two copies run at
    once, each at the whole rate.  Checked on the platform calibrated within the host, each rank
    sits on a simulated host of its own, so the simulated exchange is the calibration's own
    formula (each send's host time, then the route) at every size; with both ranks on one
    simulated host the two crossings shared its link, 1.7-2.0x from 64 KiB on."""
    require_simgrid()
    db = tmp_path / "h.db"
    shm, exchange = replay("simcal", db), replay("simcal-pingping", db)
    got = run_scope("sim", "check", str(exchange), "--from", str(shm), "--from", str(exchange), "--json", db=db)
    assert got.returncode == 0, got.stderr
    doc = json.loads(got.stdout)
    assert doc["points"] >= 10 and doc["unmatched"] == 0
    big = [r for r in doc["rows"] if r["size"] >= 65536]
    assert len(big) >= 3
    for r in big:
        assert r["simulated_us"] == pytest.approx(r["model_us"], rel=0.05), r["size"]
    text = run_scope("sim", "check", str(exchange), "--from", str(shm), "--from", str(exchange), db=db).stdout
    assert "one rank a simulated host" in text
