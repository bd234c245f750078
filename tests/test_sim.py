"""Simulated clusters (issue 55, first part): the platform writer, and a run of the engine built
with SimGrid's smpicc under smpirun, stored as a simulated run and said so wherever it is shown."""

from __future__ import annotations

import gzip
import hashlib
import json
import shutil
import xml.etree.ElementTree as ET

import pytest

from scope.run.simplatform import read_platform
from scope.run.simxml import platform_xml
from scope.store import Store
from scope.store.bundle import dump, encode
from tests.conftest import replay, require_simgrid, run_scope


@pytest.mark.unit
def test_a_flat_platform_has_its_hosts_and_links(tmp_path):
    text = platform_xml(64, 16, "100Gbps", "1.5us")
    c = ET.fromstring(text).find("cluster")
    assert c.get("radical") == "0-63" and c.get("core") == "16"
    assert float(c.get("bw")[:-3]) == pytest.approx(12.5e9) and float(c.get("lat")[:-1]) == pytest.approx(1.5e-6)
    (tmp_path / "p.xml").write_text(text)
    p = read_platform(str(tmp_path / "p.xml"))
    hosts, sha = p.hosts, p.sha256
    assert hosts[:2] == ["node-0", "node-1"] and len(hosts) == 64
    assert sha == hashlib.sha256(text.encode()).hexdigest()


@pytest.mark.unit
def test_a_fat_tree_and_the_refusals(tmp_path):
    c = ET.fromstring(platform_xml(32, 1, "10Gbps", "1us", "fattree")).find("cluster")
    assert c.get("topology") == "FAT_TREE" and c.get("topo_parameters") == "2;16,2;1,2;1,1"
    for argv, word in (
        (["--hosts", "4", "--rate", "fast"], "not a rate"),
        (["--hosts", "4", "--latency", "soon"], "not a time"),
        (["--hosts", "20", "--topology", "fattree"], "multiple of 16"),
    ):
        p = run_scope("sim", "platform", *argv, "-o", tmp_path / "x.xml")
        assert p.returncode == 2 and word in p.stderr, p.stderr


@pytest.mark.build
def test_a_simulated_run_is_stored_and_said_simulated(tmp_path):
    """smpicc builds the engine, smpirun runs it on a 2-host platform: the run stores points, its
    context records SimGrid, the platform and its digest, and show and compare say so."""
    require_simgrid()
    plat, db = tmp_path / "two.xml", tmp_path / "r.db"
    assert (
        run_scope("sim", "platform", "--hosts", "2", "--rate", "1Gbps", "--latency", "10us", "-o", plat).returncode == 0
    )
    secret = "sim-5e1f-PLANTED-token"  # issue 67: a simulated run's bundle carries no credential either
    env = {"SCOPE_BUILD_DIR": str(tmp_path / "build"), "SCOPE_HUB_TOKEN": secret, "UCX_NET_PASSWORD": secret}
    p = run_scope(
        "run", "p2p.pingpong", "--sim", plat, "-n", "2", "--sizes", "8,64K", "--launches", "1", db=db, env=env
    )
    assert p.returncode == 0, p.stderr
    bundle = gzip.decompress(encode(dump(Store(db), 1)))
    assert secret.encode() not in bundle
    assert json.loads(bundle)["context"]["env"]["SCOPE_HUB_TOKEN"] == "<redacted>"
    run = Store(db).load_run(1, samples=False)
    sim = run.context.sim
    assert sim["platform_sha256"] == hashlib.sha256(plat.read_bytes()).hexdigest() and sim["simgrid"][0].isdigit()
    assert "SMPI" in run.context.mpi_library and run.context.timer.selected == "mpi_wtime"
    t8, t64k = (next(q.median for q in run.points if q.size == s) for s in (8, 65536))
    assert t8 > 20 and t64k > t8 + 65536 / 125  # two 10 us links at least; 64 KiB at 1 Gbit/s at least
    shown = run_scope("show", "1", db=db).stdout
    assert "SIMULATED: SimGrid" in shown and "nodes: 2 simulated hosts of the platform" in shown  # not this machine
    (tmp_path / "bad.xml").write_text("<notaplatform/>")
    p = run_scope("run", "p2p.pingpong", "--sim", tmp_path / "bad.xml", db=tmp_path / "bad.db", env=env)
    assert p.returncode == 2 and "its DOCTYPE is not SimGrid's" in p.stderr  # the first thing wrong with it
    assert not (tmp_path / "bad.db").exists() or Store(tmp_path / "bad.db").runs() == []
    replay("launches", db)  # a run measured on a machine
    p = run_scope("compare", "1", "2", db=db)
    assert "[simulated]" in p.stderr


@pytest.mark.build
def test_simulated_hosts_have_their_own_clocks_and_the_truth_is_recorded(tmp_path):
    """4 ranks on 2 simulated hosts (2 a host) with each host's clock drawn off SimGrid's clock
    (offsets to 1 ms, drift to 20 ppm, seed 3): ranks of a host share one clock domain, the
    clock records carry every rank's true offset, and each rank's error stays within its
    predicted bound; the run records how the clocks were drawn."""
    require_simgrid()
    plat, db = tmp_path / "two.xml", tmp_path / "r.db"
    assert run_scope("sim", "platform", "--hosts", "2", "--cores", "2", "-o", plat).returncode == 0
    env = {"SCOPE_BUILD_DIR": str(tmp_path / "build")}
    argv = ["coll.allreduce", "--sim", plat, "-n", "4", "--sim-ppn", "2", "--sizes", "8", "--launches", "1"]
    p = run_scope("run", *argv, "--sim-clocks", "3:1000:20", db=db, env=env)
    assert p.returncode == 0, p.stderr
    run = Store(db).load_run(1, samples=False)
    assert run.context.sim["host_clocks"] == {"seed": 3, "max_offset_us": 1000.0, "max_drift_ppm": 20.0}
    clocks = [e.record for e in run.events if e.type == "clock"]
    assert clocks and all("simulated clock" in c["truth"] for c in clocks)
    for c in clocks:
        ranks = {r["rank"]: r for r in c["ranks"]}
        assert ranks[1]["true_offset_ns"] == pytest.approx(0, abs=1) and ranks[3]["clock_of"] == 2  # hosts share
        assert 0 < abs(ranks[2]["true_offset_ns"]) < 2e6 and 0 < abs(ranks[2]["true_drift_ppm"]) < 40
        assert all(r["error_ns"] <= r["predicted_error_ns"] for r in ranks.values()) and c["within_bound"] == 3
    assert run_scope("report", "1", "-o", tmp_path / "r.html", db=db).returncode == 0
    page = (tmp_path / "r.html").read_text()
    assert "SIMULATED</th>" in page and "up to 1,000 us and 20.0 ppm (seed 3)" in page  # the report says so too
    p = run_scope("run", *argv, "--sim-clocks", "3:1000", db=db, env=env)
    assert p.returncode == 2 and "SEED:MAX_OFFSET_US:MAX_DRIFT_PPM" in p.stderr


@pytest.mark.build
def test_a_long_window_keeps_its_start_times_on_a_drifting_simulated_clock(tmp_path):
    """A broadcast of 1 MiB over 10 Mbit/s links (a window of seconds, simulated) on hosts whose
    clocks drift by up to 500 ppm: a rank sleeping until its start counts the sleep in its own
    clock's time, so no repetition starts late (before, each woke the drift times the window
    past its start: 4 of 4 late, no sample)."""
    require_simgrid()
    plat, db = tmp_path / "slow.xml", tmp_path / "r.db"
    assert run_scope("sim", "platform", "--hosts", 2, "--rate", "10Mbps", "-o", plat).returncode == 0
    p = run_scope("run", "--sim", plat, "-n", 2, "--sim-clocks", "7:0:500", "coll.bcast", "--sizes", "1M",
                  "--launches", 1, db=db, env={"SCOPE_BUILD_DIR": str(tmp_path / "build")})  # fmt: skip
    assert p.returncode == 0, p.stderr
    (pt,) = Store(db).load_run(1, samples=False).points
    assert pt.window.timing == "window" and pt.window.invalid == 0 and pt.window.repetitions >= 2
    assert pt.median > 0.8e6  # us: 1 MiB at 1.25 MB/s, so each window lasts simulated seconds


@pytest.mark.unit
def test_the_scale_preset_and_the_warning_of_a_large_run_without_it():
    """`--sim-cfg scale` sets SMPI's own collectives and no detached sends, after SCOPE's
    defaults so they override them (SimGrid reads the last); a run of 1,024 ranks or more
    without both is warned, one with them, or a small one, is not."""
    from scope.errors import ScopeError
    from scope.run.sim import CONFIG, SCALE, config_of, scale_hint

    assert config_of(["scale"]) == [*CONFIG, *SCALE]
    assert config_of(["exact", "scale"])[-2:] == list(SCALE)
    assert "--sim-cfg scale" in scale_hint(1024, config_of([]))
    assert scale_hint(1024, config_of(["smpi/coll-selector:default"])) is not None  # one of the two
    assert scale_hint(16384, config_of(["scale"])) is None and scale_hint(1023, config_of([])) is None
    assert scale_hint(4096, config_of(list(SCALE))) is None
    with pytest.raises(ScopeError) as refused:
        config_of(["fast"])
    assert "or scale" in refused.value.hint


@pytest.mark.unit
def test_below_8_ranks_the_broadcast_is_mpichs_binomial_tree():
    """MPICH broadcasts by a binomial tree at every size below 8 ranks (MPIR_CVAR_BCAST_MIN_PROCS):
    a run of 2-7 ranks sets it before any --sim-cfg (which may override it), 8 and more keep the
    mpich selector's rules."""
    from scope.run.sim import CONFIG, SMALL_BCAST, config_of

    assert SMALL_BCAST == "smpi/bcast:binomial_tree"
    assert [config_of([], n) for n in (2, 7)] == [[*CONFIG, SMALL_BCAST]] * 2
    assert config_of([], 8) == config_of([], 1024) == config_of([]) == list(CONFIG)
    assert config_of(["smpi/bcast:scatter_LR_allgather"], 4)[-2:] == [SMALL_BCAST, "smpi/bcast:scatter_LR_allgather"]


@pytest.mark.unit
def test_a_simulation_needing_more_memory_maps_than_the_kernel_allows_is_refused_first(tmp_path):
    """SMPI maps each rank's globals (about 8 maps a rank): past vm.max_map_count the job aborts
    with a bare exit 134, so the run is refused before anything is built, naming the sysctl;
    a limit that cannot be read (not Linux) checks nothing."""
    from scope.errors import ScopeError
    from scope.run.sim import check_maps

    limit = tmp_path / "max_map_count"
    limit.write_text("65530\n")
    check_maps(4096, limit)  # 33,280 maps
    with pytest.raises(ScopeError) as refused:
        check_maps(16384, limit)
    assert "vm.max_map_count (65,530)" in refused.value.message and "sysctl -w vm.max_map_count=" in refused.value.hint
    check_maps(16384, tmp_path / "absent")


@pytest.mark.mpi
def test_scope_run_refuses_too_many_simulated_ranks_before_it_builds_or_stores(engine, tmp_path):
    if not (shutil.which("smpicc") and shutil.which("smpirun")):
        pytest.skip("SimGrid (libsimgrid-dev) is not installed")
    from scope.run.sim import MAPS_PER_RANK, MAX_MAP_COUNT

    ranks = int(MAX_MAP_COUNT.read_text()) // MAPS_PER_RANK + 1  # past this machine's limit, whatever it is
    plat, db = tmp_path / "p.xml", tmp_path / "r.db"
    made = run_scope("sim", "platform", "--hosts", "4", "--rate", "1Gbps", "--latency", "1us", "-o", plat)
    assert made.returncode == 0
    engines = engine.parent.parent  # the build folder: a simulation engine would be made beside it
    before = sorted(engines.iterdir())
    p = run_scope("run", "p2p.pingpong", "--sim", plat, "-n", str(ranks), "--sim-cfg", "scale", db=db)
    assert p.returncode == 3 and "vm.max_map_count" in p.stderr and "sysctl -w" in p.stderr, p.stderr
    assert sorted(engines.iterdir()) == before  # nothing built
    assert not db.exists() or Store(db).runs() == []
