"""Layers below MPI on one node: cache line, shared-memory ring, TCP; and the layer table."""

import json

import pytest

from scope.analysis.layers import layers_of
from scope.store import Store
from tests.conftest import run_scope

pytestmark = pytest.mark.mpi

TESTS = ["node.c2c", "shm.pingpong", "shm.stream", "p2p.pingpong", "p2p.stream", "net.tcp.pingpong", "net.tcp.stream"]


@pytest.fixture(scope="module")
def layered(tmp_path_factory, engine):
    db = tmp_path_factory.mktemp("layers") / "r.db"
    # a 4 KiB ring: 64 KiB and 1 MiB messages must stream through it in pieces
    p = run_scope("run", *TESTS, "--sizes", "0,8,1K,4K,64K,1M", "-p", "ring=4096", "--budget", "0.15", "--quiet", db=db)
    return db, p


def test_every_layer_test_passes_its_data_checks(layered):
    db, p = layered
    assert p.returncode == 0, p.stderr
    s = Store(db)
    assert not [e for e in s.events(1) if e["type"] == "error"]
    pts = s.points(1)
    assert {x["test"] for x in pts} == set(TESTS)
    for x in pts:
        assert json.loads(x["record"])["validated"] == 2
    shm_sizes = sorted(x["size"] for x in pts if x["test"] == "shm.pingpong")
    assert shm_sizes == [0, 8, 1024, 4096, 65536, 1048576]  # up to 256 times the ring


def test_layer_table_is_ordered(layered):
    db, _ = layered
    layers = layers_of([Store(db).load_run(1)])
    assert [ly.name for ly in layers] == ["cache line", "shared-memory channel", "MPI within a node", "TCP sockets"]
    lat = [ly.min_us for ly in layers]
    assert lat == sorted(lat), lat  # each layer costs at least the one below (SCOPE latency: min RTT/2)
    out = run_scope("layers", db=db)
    assert out.returncode == 0 and "min adds over below" in out.stdout and "faster than below" not in out.stdout
    assert "Layers (what each adds" in run_scope("show", db=db).stdout
    assert all(ly.min_us <= ly.latency_us for ly in layers)


def test_layer_table_in_the_report(layered, tmp_path):
    db, _ = layered
    out = tmp_path / "r.html"
    assert run_scope("report", "-o", out, db=db).returncode == 0
    html = out.read_text()
    assert "id='layers'" in html and "shared-memory channel" in html and "TCP sockets" in html


def test_tcp_reports_its_buffers_and_path(layered):
    db, _ = layered
    rec = json.loads(next(x for x in Store(db).points(1, "net.tcp.pingpong") if x["size"] == 0)["record"])
    assert rec["extra"]["sndbuf_bytes"] > 0 and rec["extra"]["rcvbuf_bytes"] > 0
    assert "1-byte token" in rec["note"] and "SO_SNDBUF" in rec["note"]


def test_corrupted_ring_data_is_caught(engine, db):
    p = run_scope(
        "run",
        "shm.pingpong",
        "net.tcp.pingpong",
        "--sizes",
        "64,8K",
        "--budget",
        "0.1",
        "--quiet",
        db=db,
        env={"SCOPE_TEST_CORRUPT": "1"},
    )
    assert p.returncode == 1
    assert len([e for e in Store(db).events(1) if e["type"] == "error"]) == 4


def test_cache_line_test_refuses_one_core(engine, db):
    p = run_scope("run", "node.c2c", "-p", "cpu0=1", "-p", "cpu1=1", "--quiet", db=db)
    assert p.returncode == 0
    ev = Store(db).events(1)
    assert ev and ev[0]["type"] == "skip" and "must differ" in ev[0]["message"]


def test_layers_without_layer_tests(db, engine):
    run_scope("run", "p2p.pingping", "--sizes", "8", "--budget", "0.1", "--quiet", db=db)
    p = run_scope("layers", db=db)
    assert p.returncode == 2 and "no layer tests" in p.stderr
