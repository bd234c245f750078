"""Modules (thesis §8.1): the fixed, versioned baseline run as one run with per-test sizes, the
standard module's scaling, advanced runs marked, and the minimum configuration (Table 8.1)."""

import json
from argparse import Namespace

import pytest

from scope.catalog.modules import BASELINE, comparison_note, module_for, standard
from scope.errors import ScopeError
from scope.run.request import RunOptions
from scope.store import Store
from tests.conftest import run_scope

REGISTRY = [{"name": "p2p.pingpong", "params": [{"name": "mode", "default": "standard"}]}]


@pytest.mark.unit
def test_the_baseline_runs_as_one_run_with_its_own_sizes_and_is_marked(baseline_report):
    # a real `scope run --module baseline` (tests/fixtures/record.py: baseline), replayed: re-record
    # it when the module changes, and this test says whether the engine still measures it whole
    db, page, _ = baseline_report
    run = Store(db).load_run(1)
    assert run.ranks == 2 and run.status == "complete"
    sizes = {}
    for pt in run.points:
        sizes.setdefault(pt.test, set()).add(pt.size)
    assert set(sizes) == set(BASELINE.tests)  # every test measured, none skipped
    assert sizes["p2p.pingpong"] == {0, 8, 64, 512, 4096, 32768, 262144, 2097152}
    assert sizes["coll.allreduce"] == sizes["rma.get"] == {8, 1024, 65536}
    assert sizes["io.read"] == {1 << 20} and sizes["coll.barrier"] == {None}
    ft = [pt for pt in run.points if pt.test == "app.ft"]
    assert ft and all(pt.params["class"] == "S" for pt in ft)
    module = run.context.module
    assert module["name"] == "baseline" and module["version"] == "1" and module["below_minimum"] == []
    assert len(module["digest"]) == 12
    ctx = json.loads(Store(db).run(1)["context"])
    assert ctx["settings"]["test_sizes"] == list(BASELINE.test_sizes)
    rows = run_scope("export", "1", db=db).stdout.splitlines()
    assert rows[0].startswith("run,module,kind,test,") and all(r.startswith("1,baseline-1,measured,") for r in rows[1:])
    sheet = page.read_text().split("Data sheet")[1].split("</section>")[0]
    for figure in ("STREAM triad", "MPI latency", "allreduce", "one-sided put", "NAS FT class S", "MPI-IO read"):
        assert figure in sheet, figure
    assert "p2p.pingpong (blocking=yes, mode=standard, 0 B)" in sheet


@pytest.mark.mpi
def test_the_baseline_is_fixed_and_chooses_its_tests(db):
    p = run_scope("run", "--module", "baseline", "--sizes", "8", db=db)
    assert (
        p.returncode == 2
        and "the baseline module sets its own workload (--sizes" in p.stderr
        and "--module advanced" in p.stderr
    )
    p = run_scope("run", "--module", "baseline", "--budget", "0.5", db=db)
    assert p.returncode == 2 and "the baseline module sets its own workload (--budget" in p.stderr
    p = run_scope("run", "--module", "baseline", "-n", "4", db=db)
    assert p.returncode == 2 and "-n 4" in p.stderr
    p = run_scope("run", "--module", "baseline", "p2p.pingpong", db=db)
    assert p.returncode != 0 and "chooses its own tests" in p.stderr
    assert not db.exists() or not Store(db).runs()


@pytest.mark.unit
def test_modules_lists_each_module_and_the_minimum(db):
    p = run_scope("modules", db=db)
    assert p.returncode == 0, p.stderr
    assert "baseline (version 1)" in p.stdout and "coll.*=8,1K,64K" in p.stdout and "standard" in p.stdout
    assert "latency_us: 250.0" in p.stdout and "advanced" in p.stdout


@pytest.mark.unit
def test_the_workload_digest_follows_the_engine_s_defaults():
    same = BASELINE.digest(REGISTRY)
    assert BASELINE.digest(json.loads(json.dumps(REGISTRY))) == same
    changed = [{"name": "p2p.pingpong", "params": [{"name": "mode", "default": "sync"}]}]
    assert BASELINE.digest(changed) != same


@pytest.mark.unit
def test_standard_scales_sizes_and_classes_to_memory_and_time():
    # app.ft's classes and memory as the engine's plan gives them (88 bytes a grid point;
    # tests/test_plan.py checks the engine says so)
    ft = {"S": 88 * 64**3, "W": 88 * 128 * 128 * 32, "A": 88 * 256 * 256 * 128}
    m, why = standard(ranks=2, memory=1 << 30, time_limit=600, ft_memory=ft)
    assert m.sizes == f"0,8-{32 << 20}:x8"  # 1 GiB / 16 / 2 ranks
    assert "class=S,W" in m.params  # class A's 738 MB do not fit a quarter of 1 GiB
    m, _ = standard(ranks=2, memory=64 << 30, time_limit=3, ft_memory=ft)
    assert "class=S" in m.params  # W's three executions (~1 s at 0.5 GFLOP/s a rank) exceed 3 s / 4
    assert m.procs == "pow2" and m.ranks == 2 and any("ranks 2" in w for w in why)


@pytest.mark.unit
def test_advanced_says_what_changed_and_compare_says_so():
    m, said = module_for("advanced", {"param": ["class=W"], "sizes": "8,1K"}, 4, None, None)
    assert m.name == "advanced" and m.ranks == 4 and "class=W" in m.params and m.sizes == "8,1K"
    assert said == ["ranks 4 (baseline 2)", "sizes 8,1K", "parameters class=W"]
    base = {"name": "baseline", "version": "1", "digest": "a"}
    adv = {"name": "advanced", "version": "1", "digest": "b", "changes": said}
    assert "workloads differ" in comparison_note(base, adv)
    assert "different workloads" in comparison_note(base, dict(base, digest="c"))
    assert comparison_note(base, dict(base)) is None
    with pytest.raises(ScopeError, match="the standard module sets its own workload"):
        module_for("standard", {"sizes": "8"}, None, None, None)


def _slow_pingpong(db, mpi_library: str):
    """A stored ping-pong run, made with that MPI, whose latency is above Table 8.1's 250 us."""
    store = Store(db)
    rid = store.begin_run(["test"], "mpiexec", 2, "slow network")
    store.set_context(rid, {"type": "context", "mpi": {"library": mpi_library}, "placement": [], "ranks": 2})
    rec = {"type": "point", "index": 0, "test": "p2p.pingpong", "params": {"size": 0}, "unit": "us",
           "stats": {"median": 300.0, "count": 10}, "bytes_per_op": 0, "ops_per_iter": 1}  # fmt: skip
    store.add_point(rid, rec)
    store.finish_run(rid, "complete")
    return store


@pytest.mark.mpi
def test_below_the_minimum_the_baseline_is_refused_or_forced_and_marked(engine, db):
    from scope.cli.modulecmd import apply_module
    from scope.run.toolchain import mpi_library

    store = _slow_pingpong(db, mpi_library(engine))
    p = run_scope("doctor", "--module", "baseline", db=db)
    assert p.returncode == 3 and "[FAIL] latency" in p.stdout and "300.00 us (run 1)" in p.stdout
    p = run_scope("run", "--module", "baseline", db=db)
    assert p.returncode != 0 and "below the baseline's minimum configuration: latency" in p.stderr
    assert len(store.runs()) == 1  # refused before anything was launched
    args = Namespace(module="baseline", tests=[], force=True, launches=None, time_limit=None)
    o = RunOptions(ranks=2)
    apply_module(args, o, store, ranks_given=False)
    assert o.module[1]["below_minimum"][0].startswith("latency: needs < 250 us")
    assert o.tests == list(BASELINE.tests) and o.engine["test-sizes"] == list(BASELINE.test_sizes)


@pytest.mark.unit
def test_the_minimum_configuration_reads_runs_of_the_same_mpi(tmp_path):
    """doctor --module baseline once judged this MPI by another's latency: each requirement now
    comes from the latest run made with the MPI asked about, or says none was measured."""
    from scope.cli.minimum import requirements

    s = Store(tmp_path / "r.db")
    for library, us in (("MPICH Version:      5.0.2\nMPICH Release date: x", 300.0), ("Open MPI v5.0.11, x", 2.0)):
        rid = s.begin_run(["scope"], "mpiexec", 2)
        s.set_context(rid, {"type": "context", "mpi": {"library": library}, "placement": [], "ranks": 2})
        s.add_point(rid, {"type": "point", "test": "p2p.pingpong", "index": 0, "params": {"size": 0},
                          "unit": "us", "count": 20, "stats": {"median": us}})  # fmt: skip
        s.finish_run(rid, "complete")
    lat = {r.name: r for r in requirements(s, 2, None, None, "MPICH Version:      5.0.2")}["latency"]
    assert lat.ok is False and "300.00 us (run 1)" in lat.found  # MPICH's, not Open MPI's newer 2 us
    lat = {r.name: r for r in requirements(s, 2, None, None, "Open MPI v5.0.11, x")}["latency"]
    assert lat.ok is True and "(run 2)" in lat.found
    lat = {r.name: r for r in requirements(s, 2, None, None, "Intel(R) MPI Library 2021")}["latency"]
    assert lat.ok is None and "not measured yet with this MPI" in lat.found
