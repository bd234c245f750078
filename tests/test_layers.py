"""Layers below MPI on one node: cache line, shared-memory ring, TCP; and the layer table."""

import json

import pytest

from scope.analysis.layers import layers_of
from scope.store import Store
from tests.conftest import replay, run_scope

TESTS = ["node.c2c", "shm.pingpong", "shm.stream", "p2p.pingpong", "p2p.stream", "net.tcp.pingpong", "net.tcp.stream"]


@pytest.fixture(scope="module")
def layered(tmp_path_factory, engine):
    db = tmp_path_factory.mktemp("layers") / "r.db"
    # a 4 KiB ring: 64 KiB and 1 MiB messages must stream through it in pieces
    p = run_scope("run", *TESTS, "--sizes", "0,8,1K,4K,64K,1M", "-p", "ring=4096", "--budget", "0.05", "--quiet", db=db)
    return db, p


@pytest.mark.mpi
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


@pytest.fixture
def recorded(db):
    """The layer tests of one node as recorded (tests/fixtures/record.py: layers)."""
    replay("layers", db)
    return db


@pytest.mark.unit
def test_layer_table_is_the_stack_with_what_each_adds(recorded):
    run = Store(recorded).load_run(1)
    layers = layers_of([run])
    assert [ly.name for ly in layers] == ["cache line", "shared-memory channel", "MPI within a node", "TCP sockets"]
    # each row is its latency test's smallest size at the default setting: SCOPE's latency is
    # that point's minimum RTT/2 (§6.5.1), and a row adds its minimum over the one below
    source = {"cache line": "node.c2c", "shared-memory channel": "shm.pingpong", "MPI within a node": "p2p.pingpong"}
    for ly in layers[:3]:
        (pt,) = [p for p in run.points if p.test == source[ly.name] and (p.size or 0) == ly.latency_size]
        assert ly.min_us == pt.min and ly.latency_us == pt.median
    tcp = [p for p in run.points if p.test == "net.tcp.pingpong" and p.size == 0]
    assert layers[3].min_us == tcp[0].min
    # each layer against the one it is built on: cache line -> shm channel -> MPI within a node;
    # TCP sockets are a stack of their own, built on nothing measured here (not on MPI's shm)
    for below, ly in zip(layers[:3], layers[1:3]):
        assert ly.adds_us == pytest.approx(ly.min_us - below.min_us, abs=1e-12) and ly.over == below.name
    assert layers[0].adds_us is None and layers[3].adds_us is None and layers[3].over is None
    assert [ly.stack for ly in layers] == ["within a node"] * 3 + ["across the network"]
    out = run_scope("layers", db=recorded)
    assert out.returncode == 0 and "min adds over the layer" in out.stdout  # its header wraps past 100 columns
    tcp_row = next(ln for ln in out.stdout.splitlines() if "TCP sockets" in ln)
    assert "over" not in tcp_row.split("TCP sockets")[1].split("run 1")[0]
    assert "Layers (what each adds over the layer it is built on)" in run_scope("show", db=recorded).stdout
    assert all(ly.min_us <= ly.latency_us for ly in layers)  # a minimum never exceeds its median


@pytest.mark.unit
def test_layer_table_in_the_report(recorded, tmp_path):
    out = tmp_path / "r.html"
    assert run_scope("report", "-o", out, db=recorded).returncode == 0
    html = out.read_text()
    assert "id='layers'" in html and "shared-memory channel" in html and "TCP sockets" in html


@pytest.mark.unit
def test_tcp_reports_its_buffers_and_path(recorded):
    rec = json.loads(next(x for x in Store(recorded).points(1, "net.tcp.pingpong") if x["size"] == 0)["record"])
    assert rec["extra"]["sndbuf_bytes"] > 0 and rec["extra"]["rcvbuf_bytes"] > 0
    assert "1-byte token" in rec["note"] and "SO_SNDBUF" in rec["note"]


@pytest.mark.mpi
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


@pytest.mark.mpi
def test_cache_line_test_refuses_one_core(engine, db):
    p = run_scope("run", "node.c2c", "-p", "cpu0=1", "-p", "cpu1=1", "--quiet", db=db)
    assert p.returncode == 0
    ev = [e for e in Store(db).events(1) if e["type"] != "canary"]
    assert ev and ev[0]["type"] == "skip" and "must differ" in ev[0]["message"]


@pytest.mark.mpi
def test_layers_without_layer_tests(db, engine):
    run_scope("run", "p2p.pingping", "--sizes", "8", "--budget", "0.1", "--quiet", db=db)
    p = run_scope("layers", db=db)
    assert p.returncode == 2 and "no layer tests" in p.stderr


def _net_run(store, rinf_MBps: float, testbed: dict | None):
    """A stored net.udp.pingpong-like run (role link:1) whose times follow t = 20 us + n / r_inf."""
    from tests.conftest import descriptors

    store.save_tests([t for t in descriptors() if t["name"] == "net.udp.pingpong"])
    rid = store.begin_run(["synthetic"], "mpiexec", 2)
    ctx = {"type": "context", "mpi": {"library": "MPICH"}, "ranks": 2, "testbed": testbed,
           "placement": [{"rank": 0, "host": "a"}, {"rank": 1, "host": "a"}]}  # fmt: skip
    store.set_context(rid, ctx)
    for i, n in enumerate([1024 * 2**k for k in range(8)]):
        t = 20.0 + n / rinf_MBps
        store.add_point(rid, {"type": "point", "test": "net.udp.pingpong", "index": i, "params": {"size": n},
                              "unit": "us", "count": 50, "bytes_per_op": n, "ops_per_iter": 2,
                              "stats": {"median": t, "ci_lo": t, "ci_hi": t}})  # fmt: skip
    store.finish_run(rid, "complete")
    return rid


@pytest.mark.unit
def test_an_r_inf_above_the_link_is_flagged_and_not_shown_as_a_rate(tmp_path):
    """On a testbed shaped to 12.5 MB/s of payload, a fit of 1,000 MB/s is no rate of the link:
    a warning, and '-' where r_inf would stand; a fit of 10 MB/s under it is shown."""
    from scope.fetch.facts import derive_stored
    from scope.store import Store
    from scope.views.terminal import show_run

    s = Store(tmp_path / "r.db")
    bed = {"name": "t", "payload_MBps": 12.5}
    fast, slow, free = _net_run(s, 1000.0, bed), _net_run(s, 10.0, bed), _net_run(s, 1000.0, None)
    (f,) = derive_stored(s, fast).series
    assert f.link_MBps == 12.5 and f.rinf_beyond_link
    facts = derive_stored(s, fast)
    assert [w.kind for w in facts.warnings if w.kind == "beyond_link"] == ["beyond_link"]
    text = show_run(facts)
    assert "above the link's 12.5" in text and "r_inf = 1,000 MB/s" not in text
    (g,) = derive_stored(s, slow).series
    assert not g.rinf_beyond_link and "r_inf = 10.00 MB/s" in show_run(derive_stored(s, slow))
    (h,) = derive_stored(s, free).series  # one host, no testbed: no link crossed, no limit
    assert h.link_MBps is None and not h.rinf_beyond_link
