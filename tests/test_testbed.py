"""The multi-host testbed: namespaces, shaped links, MPI over TCP across them.  Needs root and
iproute2; without them every test here is skipped with that reason."""

import json
import os
import shutil
import subprocess

import pytest

from scope.run.testbed import parse_size, payload_ceiling_MBps, payload_rate_MBps
from scope.store import Store
from tests.conftest import as_at_a_terminal, run_scope

NAME = "sctest"
need_root = pytest.mark.skipif(
    os.geteuid() != 0 or not shutil.which("ip") or not shutil.which("tc"), reason="the testbed needs root and iproute2"
)


def namespaces():
    return subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout


def links():
    return subprocess.run(["ip", "link", "show"], capture_output=True, text=True).stdout


@pytest.fixture
def bed():
    run_scope("testbed", "down", "--name", NAME)
    yield
    run_scope("testbed", "down", "--name", NAME)
    assert f"{NAME}-h" not in namespaces() and f"{NAME}-br" not in links()


@pytest.mark.unit
def test_payload_ground_truth():
    # SCOPE App. A: at MTU 1500 with TCP timestamps, 1448 payload bytes per 1514-byte frame
    assert payload_rate_MBps(100e6, 1500) == pytest.approx(12.5 * 1448 / 1514)
    assert payload_rate_MBps(None, 1500) is None


@pytest.mark.unit
def test_a_sample_can_borrow_the_bucket_s_burst_and_no_more():
    # 128 KiB of payload is 137,046.6 bytes of frames; a full 16 KiB bucket lets 16,384 of them
    # through at once, so the sample takes 120,662.6 / 25e6 s = 4.8265 ms: 27.157 MB/s at most
    assert payload_ceiling_MBps(200e6, 1500, 16384, 131072) == pytest.approx(27.157, abs=1e-3)
    # a long sample: the burst is a vanishing share, the ceiling tends to the payload rate
    assert payload_ceiling_MBps(200e6, 1500, 16384, 2**34) == pytest.approx(payload_rate_MBps(200e6, 1500), rel=1e-5)
    assert parse_size("16kb") == 16384 and parse_size("1500b") == 1500 and parse_size("1m") == 2**20


@pytest.mark.system
@need_root
def test_shaped_link_rates_agree_with_tcp_and_mpi(bed, db):
    # 200 Mbit/s: a rate two shared cores can push through veth and tbf with room to spare, so
    # the link, not the CPU, sets the rate (at 1 Gbit/s a loaded 2-core machine fell 5-8 % short)
    up = run_scope("testbed", "up", "--hosts", "2", "--rate", "200mbit", "--name", NAME)
    assert up.returncode == 0, up.stderr
    assert "198.18.0.1" in up.stdout and "23.91 MB/s" in up.stdout
    st = run_scope("testbed", "status", "--name", NAME)
    assert st.stdout.count(" up") >= 2
    p = run_scope(
        "run",
        "--testbed",
        NAME,
        "p2p.stream",
        "net.tcp.stream",
        "p2p.pingpong",
        "net.tcp.pingpong",
        "--sizes",
        # sizes on the plateau, each bounded by the link (within_link)
        "0,16K,64K,256K",
        "-p",
        "window=8",
        "--budget",
        "1",
        "--quiet",
        db=db,
        timeout=300,
    )
    assert p.returncode == 0, p.stderr
    s = Store(db)
    ctx = json.loads(s.run(1)["context"])
    assert ctx["testbed"]["name"] == NAME
    assert ctx["placement"][0]["netns"] != ctx["placement"][1]["netns"]
    assert (
        ctx["testbed"]["transport"].startswith("TCP over veth") and "shared memory off" in ctx["testbed"]["transport"]
    )
    within_link(s.load_run(1), ("net.tcp.stream", "p2p.stream"), 200e6, 16384)
    assert not [e for e in s.events(1) if e["kind"] == "transport"]
    layers = run_scope("layers", db=db).stdout
    assert "TCP sockets" in layers and "MPI over the network" in layers
    # (that MPI over TCP costs at least TCP's own floor is a claim: bench/claims.py)


def within_link(run, tests, rate_bits: float, burst_bytes: float, low: float = 0.9) -> None:
    """Every point of these bandwidth tests at the link's payload rate (SCOPE App. A): no sample
    above what its bytes can show through tbf (the bucket's burst is the one allowance,
    payload_ceiling_MBps), and, where a sample carries 512 KiB or more, the best sample within
    `low` of the rate: the link, not the CPU, sets it.  Neither the median nor a short sample's
    best is bounded below: beside busy cores a descheduled sender made the median of 5 ms
    samples 0.77 of the rate, and once the best of ~180 samples of 128 KiB (16 KiB x 8 at
    200 Mbit/s, 5.5 ms each) 0.76, honestly (bench/claims.py measures it quiet); a longer sample
    loses a share of itself to a descheduling, not most of it."""
    truth = payload_rate_MBps(rate_bits, 1500)
    for pt in (p for p in run.points if p.test in tests and p.size >= 16384):
        carried = pt.size * pt.ops_per_iter
        ceiling = payload_ceiling_MBps(rate_bits, 1500, burst_bytes, carried)
        best = pt.bytes_per_op / pt.min  # MB/s of the fastest sample
        assert pt.bw_median <= best <= ceiling, (pt.test, pt.size, best, ceiling)
        assert carried < 512 * 1024 or best >= low * truth, (pt.test, pt.size, best, truth)


@pytest.mark.system
@need_root
def test_a_slow_link_point_keeps_its_budget(bed, db):
    # 20 Mbit/s: 256 KiB takes ~0.11 s, a window of 64 of them 7 s; with --budget 2 the window
    # is cut to fit, and the point ends within its budget, the data checks included.  1 MiB takes
    # 0.44 s: the window is cut to one message, the pilot's data check is its only warm-up, and
    # no sample is begun that would end past the budget.  The rate is still the link's payload rate
    up = run_scope("testbed", "up", "--name", NAME, "--rate", "20mbit")
    assert up.returncode == 0, up.stderr
    p = run_scope("run", "--testbed", NAME, "p2p.stream", "--sizes", "256K,1M", "--budget", "2", "--quiet", db=db)
    assert p.returncode == 0, p.stderr
    run = Store(db).load_run(1)
    for pt in run.points:
        assert "stream_window" in pt.gave_up and pt.params["window"] == 64 and pt.ops_per_iter < 64
        # no sample is begun that its estimate says would end past the budget: the point ends
        # within the budget plus what its longest sample overran that estimate by, at most itself
        assert pt.seconds <= 2.0 + max(pt.samples) * pt.ops_per_iter / 1e6
    within_link(run, ("p2p.stream",), 20e6, 16384, low=0.97)


@pytest.mark.system
@need_root
@pytest.mark.parametrize(
    "args,word",
    [
        (["--hosts", "0"], "2 to 64 hosts"),
        (["--hosts", "2", "--rate", "fast"], "not a rate"),
        (["--hosts", "2", "--rate", "1gbit", "--burst", "nonsense"], "could not build"),
        (["--hosts", "2", "--rate", "0bit"], "outside 8kbit .. 1000gbit"),  # refused before tc is asked
        (["--hosts", "2", "--mtu", "100"], "MTU"),
    ],
)
def test_bad_testbeds_leave_nothing_behind(bed, args, word):
    p = run_scope("testbed", "up", *args, "--name", NAME)
    assert p.returncode == 2 and word in p.stderr and "Traceback" not in p.stderr
    assert f"{NAME}-h" not in namespaces() and f"{NAME}-br" not in links()


@pytest.mark.system
@need_root
def test_a_name_already_taken(bed):
    assert run_scope("testbed", "up", "--hosts", "2", "--name", NAME).returncode == 0
    p = run_scope("testbed", "up", "--hosts", "3", "--name", NAME)
    assert p.returncode == 2 and "already exists" in p.stderr
    assert namespaces().count(f"{NAME}-h") == 2  # the first testbed is untouched


@pytest.mark.system
@need_root
def test_down_and_run_without_a_testbed(db):
    p = run_scope("testbed", "down", "--name", "nosuch")
    assert p.returncode == 2 and "no testbed named 'nosuch'" in p.stderr
    p = run_scope("run", "--testbed", "nosuch", "p2p.pingpong", db=db)
    assert p.returncode == 2 and "no testbed named 'nosuch' is up" in p.stderr


@pytest.mark.unit
def test_without_root_it_says_so(monkeypatch):
    import scope.run.testbed as tb
    from scope.errors import ScopeError

    monkeypatch.setattr(tb.os, "geteuid", lambda: 1000)
    with pytest.raises(ScopeError) as e:
        tb.up("x", 2)
    assert "needs root" in e.value.message and "skipped" in e.value.hint


@pytest.mark.mpi
def test_layer_test_on_one_rank(engine, db):
    p = run_scope("run", "net.tcp.pingpong", "shm.pingpong", "-n", "1", "--sizes", "8", "--quiet", db=db)
    assert p.returncode == 2 and "shm.pingpong, net.tcp.pingpong need at least 2 ranks" in p.stderr


@pytest.mark.mpi
def test_udp_counts_loss_and_skips_jumbo(engine, db):
    p = run_scope("run", "net.udp.pingpong", "--sizes", "8,1K,64K", "--budget", "0.2", "--quiet", db=db)
    assert p.returncode == 0, p.stderr
    s = Store(db)
    pts = s.points(1)
    assert [x["size"] for x in pts] == [8, 1024]
    for x in pts:
        extra = json.loads(x["record"])["extra"]
        assert extra["lost"] == 0 and extra["sent"] >= 2 * x["count"]
    assert "larger than one UDP datagram" in next(e for e in s.events(1) if e["type"] == "skip")["message"]


@pytest.mark.system
@need_root
def test_a_foreign_link_is_refused_and_left_alone(bed):
    foreign = f"{NAME}-v1"
    subprocess.run(["ip", "link", "add", foreign, "type", "veth", "peer", "name", f"{NAME}-x1"], check=True)
    try:
        p = run_scope("testbed", "up", "--hosts", "2", "--name", NAME)
        assert p.returncode == 2 and f"link {foreign} exists and is not part of a testbed" in p.stderr, p.stderr
        assert foreign in links()  # not ours: not removed
        assert f"{NAME}-h" not in namespaces() and f"{NAME}-br" not in links()
    finally:
        subprocess.run(["ip", "link", "del", foreign], check=False)


@pytest.mark.system
@need_root
def test_interrupted_up_takes_back_what_it_made(bed):
    import signal
    import sys
    import time

    cmd = [sys.executable, "-m", "scope", "testbed", "up", "--hosts", "40", "--name", NAME]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=as_at_a_terminal)
    deadline = time.monotonic() + 30
    while namespaces().count(f"{NAME}-h") < 3 and time.monotonic() < deadline:
        time.sleep(0.05)
    p.send_signal(signal.SIGINT)
    rc = p.wait(timeout=60)
    assert rc in (130, 0), p.stderr.read()
    if rc == 130:  # stopped half-way: nothing of it is left
        assert f"{NAME}-h" not in namespaces() and f"{NAME}-br" not in links() and f"{NAME}-v" not in links()


@pytest.mark.system
@need_root
def test_tune_across_testbed_hosts_writes_a_file_the_apply_uses_there(bed, db, tmp_path):
    """Tuned per processes per host: 2 ranks on two hosts (1 per host) and on one (2 per host),
    a decision for each, and MPICH's file keyed on comm_avg_ppn."""
    up = run_scope("testbed", "up", "--hosts", "2", "--rate", "1gbit", "--name", NAME)
    assert up.returncode == 0, up.stderr
    out = tmp_path / "tb.json"
    # one launch an algorithm: the file's keys and their use are the question, not replicates
    common = [
        "--testbed",
        NAME,
        "--ppn",
        "1,2",
        "--sizes",
        "8,64K",
        "--procs",
        "2",
        "--launches",
        "1",
        "--budget",
        "0.1",
    ]
    p = run_scope("tune", "bcast", "--algorithms", "binomial,scatter_ring_allgather", *common, "-o", out, db=db)
    assert p.returncode == 0, p.stderr
    spread, packed = (json.loads(Store(db).run(i)["context"]) for i in (1, 2))
    assert spread["testbed"]["name"] == NAME and spread["testbed"]["ppn"] == 1 and packed["testbed"]["ppn"] == 2
    assert spread["placement"][0]["netns"] != spread["placement"][1]["netns"]
    assert packed["placement"][0]["netns"] == packed["placement"][1]["netns"]
    assert packed["env"]["MPIR_CVAR_NUM_CLIQUES"] == "1" and packed["env"]["MPIR_CVAR_NOLOCAL"] == "0"
    assert "2 at 1 per host:" in p.stdout and "2 at 2 per host:" in p.stdout
    intra = json.loads(out.read_text())["collective=bcast"]["comm_type=intra"]
    assert list(intra) == ["comm_avg_ppn<=1", "comm_avg_ppn<=2", "comm_avg_ppn=any"]
    a = run_scope("tune", "bcast", "--apply", out, *common, db=db)
    assert a.returncode == 0, a.stderr  # MPICH parsed the ppn conditions (its dry run refuses what it cannot)
    assert "2 ranks at 1 per host" in a.stdout and "2 ranks at 2 per host" in a.stdout
    assert a.stdout.count("launches alternating") == 2 and "64 KiB" in a.stdout


@pytest.mark.system
@need_root
def test_processes_per_host_place_ranks_round_robin_as_mpich_is_told(bed, db):
    up = run_scope("testbed", "up", "--hosts", "2", "--name", NAME)
    assert up.returncode == 0, up.stderr
    bad = run_scope("run", "--testbed", NAME, "-n", "3", "--ppn", "2", "coll.barrier", db=db)
    assert bad.returncode == 2 and "cannot be placed 2 per host" in bad.stderr and not Store(db).runs()
    # where the ranks land is the question, not the barrier's time: timed after a barrier, as the
    # global clock's synchronisation of 4 ranks on 2 cores took 1.8-7 s of the test
    p = run_scope("run", "--testbed", NAME, "-n", "4", "--ppn", "2", "coll.barrier", "--timing", "barrier", "--budget",
                  "0.1", db=db)  # fmt: skip
    assert p.returncode == 0, p.stderr
    ctx = json.loads(Store(db).run(1)["context"])
    ns = [r["netns"] for r in sorted(ctx["placement"], key=lambda r: r["rank"])]
    assert ns[0] == ns[2] != ns[1] == ns[3]  # rank i on host i mod 2: MPICH's clique map
    assert ctx["env"]["MPIR_CVAR_NUM_CLIQUES"] == "2" and "2 ranks per host" in ctx["testbed"]["transport"]


@pytest.mark.system
@need_root
def test_a_screen_groups_ranks_that_wrap_onto_a_host_with_that_host(bed, db):
    """Issue 58: 6 ranks on 3 hosts, one rank a host in turn, so ranks 3-5 run on hosts 0-2
    again; MPI, told nothing of hosts, takes each rank for a node.  The screen groups the ranks
    by the namespace they ran in: three hosts, each named as the testbed's.  4 ranks, which
    would wrap unevenly, are refused before launch.  (Which link is flagged is a timing
    verdict: bench/screen_testbed.py plants one, 5 runs.)"""
    up = run_scope("testbed", "up", "--hosts", "3", "--name", NAME)
    assert up.returncode == 0, up.stderr
    uneven = run_scope("run", "p2p.allpairs", "--testbed", NAME, "-n", "4", "--sizes", "8", db=db)
    assert uneven.returncode == 2 and "wrap unevenly" in uneven.stderr and "-n 6" in uneven.stderr
    p = run_scope("run", "p2p.allpairs", "--testbed", NAME, "-n", "6", "--sizes", "8", "--budget", "0.05", db=db)
    assert p.returncode == 0, p.stderr
    (sc,) = json.loads(run_scope("show", "last", "--json", db=db).stdout)["screens"]
    assert sc["hosts"] == [f"{NAME}-h0", f"{NAME}-h1", f"{NAME}-h2"]
    assert sc["host_of_rank"] == [r % 3 for r in range(6)]
    (row,) = Store(db).runs()
    assert json.loads(Store(db).run(row["id"])["context"])["testbed"]["hosts_used"] == 3
