"""The application level: NAS EP and FT verified as NPB verifies them (the official values), at
1, 2 and 4 processes, with their phases and NPB's rates."""

import json
import math
from dataclasses import fields

import pytest

from scope.analysis.apps import ft_overlaps, lu_get_shares
from scope.analysis.kernels import KernelPoint, OpInContext
from scope.model import Point
from scope.store import Store
from tests.conftest import run_scope
from tests.oracles import phase_sums_off

# NPB's verification values (ep.f) and its class S output (the pairs in each annulus)
EP_S = {"sx": -3.247834652034740e3, "sy": -6.958407078382297e3, "pairs": 13176389}


@pytest.fixture(scope="module")
def ep(tmp_path_factory, engine):
    db = tmp_path_factory.mktemp("ep") / "r.db"
    p = run_scope("run", "-n", "4", "app.ep", "--procs", "1,2,4", "--budget", "0.3", "--quiet", db=db, timeout=600)
    assert p.returncode == 0, p.stderr
    return Store(db).load_run(1)


@pytest.mark.mpi
def test_ep_class_s_gives_npb_sums_and_pair_count_at_every_process_count(ep):
    assert sorted(p.procs for p in ep.points) == [1, 2, 4]
    assert not [e for e in ep.events if e.type in ("error", "skip")]
    for p in ep.points:
        assert p.record["validated"] == 2  # NPB's check before and after measuring
        assert phase_sums_off(p.whole_record) == []  # per rank, the phases add up to its own time
        assert p.extra["sx"] == pytest.approx(EP_S["sx"], rel=1e-8)
        assert p.extra["sy"] == pytest.approx(EP_S["sy"], rel=1e-8)
        assert p.extra["pairs"] == EP_S["pairs"]
        assert p.extra["nas_ops"] == 2**25  # NPB's Mop/s counts the 2^(M+1) numbers generated


@pytest.mark.mpi
def test_ep_spends_its_time_computing_and_reduces_once(ep):
    for p in ep.points:
        ph = p.record["phases"]
        assert len(ph["comp"]) == p.procs and len(ph["comm"]) == p.procs
        assert min(ph["comp"]) > 0
        # that it is noise beside the compute, and that 2 ranks each compute about half of what
        # one does, are claims about timing: bench/claims.py


# NPB's FT checksums of class S after iterations 1 and 6 (ft.f)
FT_S = {1: (5.546087004964e02, 4.845363331978e02), 6: (5.542683411902e02, 4.932597244941e02)}


@pytest.fixture(scope="module")
def ft_db(tmp_path_factory, engine):
    db = tmp_path_factory.mktemp("ft") / "r.db"
    p = run_scope(
        "run", "-n", "4", "app.ft", "-p", "transpose=alltoall,pairwise,nonblocking", "--procs", "1,2,3,4",
        "--budget", "0.3", "--launches", "2", "--quiet", db=db, timeout=900,
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    return db


@pytest.fixture(scope="module")
def ft(ft_db):
    return Store(ft_db).load_run(1)


@pytest.mark.mpi
def test_ft_meets_npb_checksums_with_every_transpose_at_every_process_count(ft, ft_db):
    got = {(p.params["transpose"], p.procs) for p in ft.points}
    assert got == {(t, n) for t in ("alltoall", "pairwise", "nonblocking") for n in (1, 2, 4)}
    assert not [e for e in ft.events if e.type == "error"]
    for p in ft.points:
        assert p.record["validated"] == 2
        assert p.extra["verification_error"] < p.extra["verification_bound"] == 1e-12  # NPB's, worst of 6 iterations
        # each launch's record: per rank, the phases add up to its own time (the combined point
        # pools the launches' phases; its per-rank times are the first launch's)
        assert [x for own, _ in Store(ft_db).launch_points(1, p.seq) for x in phase_sums_off(own)] == []
    skips = {(e.params["transpose"], e.params["procs"]) for e in ft.events if e.type == "skip"}
    assert skips == {(t, 3) for t in ("alltoall", "pairwise", "nonblocking")}  # 3 divides neither 64 nor 64


@pytest.mark.mpi
def test_ft_steps_add_up_to_its_compute_and_its_operations_are_counted(ft):
    for p in ft.points:
        ph = p.record["phases"]
        assert set(ph["steps"]) == {"fft", "pack", "evolve", "checksum"}
        for r in range(p.procs):
            assert sum(v[r] for v in ph["steps"].values()) == pytest.approx(ph["comp"][r], rel=0.01)
        assert all(v > 0 for v in ph["steps"]["fft"])  # 7 3-D FFTs outweigh the checksum: bench/claims.py
        ops = {o["name"]: o for o in p.record["ops"]}
        assert ops["transpose"]["calls"] == 7  # the forward transform's and one a step's inverse
        assert ops["checksum"]["calls"] == 6
        assert ops["transpose"]["bytes"] == 64 * (64 // p.procs) * (64 // p.procs) * 16


@pytest.mark.mpi
def test_compare_takes_two_settings_of_one_run(ft_db):
    p = run_scope("compare", "1", "1", "--vary", "transpose=alltoall,pairwise", "--json", db=ft_db)
    assert p.returncode in (0, 1), p.stderr
    rows = json.loads(p.stdout)
    assert sorted(r["params"]["procs"] for r in rows) == [1, 2, 4]
    assert all(r["params"]["transpose"] == "pairwise" and r["n_a"] == r["n_b"] == 2 for r in rows)
    assert all(math.isfinite(r["ratio"]) and math.isfinite(r["ci_lo"]) for r in rows)
    bad = run_scope("compare", "1", "1", db=ft_db)
    assert bad.returncode == 2 and "against itself" in bad.stderr


def _ft_point(transpose: str, launches: list[float], ops: list[dict] | None = None) -> KernelPoint:
    med = sorted(launches)[len(launches) // 2]
    rec = {"launches": {"planned": len(launches), "medians": launches}}
    given = {"seq": 0, "test": "app.ft", "params": {"class": "S", "transpose": transpose, "procs": 2}, "unit": "us"}
    point = Point(**{f.name: None for f in fields(Point)} | given | {"median": med, "load_record": lambda p: rec})
    kp = KernelPoint(point, "app.ft", {"class": "S", "transpose": transpose}, 2, {}, True)
    kp.ops = [OpInContext(**o) for o in ops or []]
    return kp


@pytest.mark.unit
def test_overlap_is_the_hidden_share_of_the_blocking_transposes_and_may_be_negative():
    ops = [{"name": "transpose", "test": "coll.alltoall", "bytes": 1, "calls": 7, "comm_us": 20.0, "idle_us": 5.0}]
    blk = _ft_point("alltoall", [1000.0, 1010.0, 990.0], ops)
    (o,) = ft_overlaps([blk, _ft_point("nonblocking", [900.0, 905.0, 895.0])])
    assert o.transposes_us == 7 * 25
    assert o.overlap == pytest.approx(100 / 175)  # 100 us of the 175 hidden
    assert o.lo < o.overlap < o.hi and "launch to launch" in o.covers
    (neg,) = ft_overlaps([blk, _ft_point("nonblocking", [1200.0, 1190.0, 1210.0])])
    assert neg.overlap == pytest.approx(-200 / 175) and neg.hi < 0  # costs more than it hides


@pytest.fixture(scope="module")
def lu(tmp_path_factory, engine):
    db = tmp_path_factory.mktemp("lu") / "r.db"
    p = run_scope(
        "run", "-n", "4", "app.lu", "-p", "n=256,250", "-p", "block=32", "-p", "get=blocking,nonblocking",
        "--procs", "1,2,4", "--budget", "0.3", "--quiet", db=db, timeout=600,
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    return Store(db).load_run(1)


@pytest.mark.mpi
def test_lu_factors_on_one_sided_gets_with_a_small_residual(lu):
    assert sorted((p.params["get"], p.procs) for p in lu.points) == sorted(
        (g, n) for g in ("blocking", "nonblocking") for n in (1, 2, 4)
    )
    assert not [e for e in lu.events if e.type == "error"]
    skips = [e for e in lu.events if e.type == "skip"]
    assert len(skips) == 6 and all("multiple of block" in e.message for e in skips)  # n = 250
    for p in lu.points:
        assert p.record["validated"] == 2 and p.extra["residual"] < 1e-12  # ||A - LU|| / ||A|| on a sample
        ph = p.record["phases"]
        assert set(ph["steps"]) == {"diag", "perimeter", "interior"}
        assert ph["idle_measured"]  # gets are made by some ranks only, yet the barriers still match
        ops = {o["name"]: o for o in p.record["ops"]}
        assert ops["barrier"]["calls"] == 2 * 8 + 2  # two a step of 256/32 blocks, one after T_init, one at the end
        assert (ops["get"]["calls"] > 0) == (p.procs > 1)  # one rank owns every block


@pytest.mark.unit
def test_lu_time_in_gets_is_read_against_the_one_sided_layer():
    ops = [{"name": "get", "test": "rma.get", "bytes": 8192, "calls": 100, "comm_us": 2.0, "idle_us": 0.0}]
    k = _ft_point("alltoall", [1000.0], ops)
    k.test, k.ops[0].loop_us = "app.lu", 1.5
    (g,) = lu_get_shares([k])
    assert g.in_gets_us == 200 and g.share == pytest.approx(0.2) and g.explained == pytest.approx(0.75)


@pytest.mark.mpi
def test_ft_switches_are_each_compared_with_alltoall_across_launches(ft):
    from scope.analysis.facts import derive

    rows = derive(ft).switches
    assert sorted((w.procs, w.transpose) for w in rows) == [
        (n, t) for n in (1, 2, 4) for t in ("nonblocking", "pairwise")
    ]
    for w in rows:
        assert w.ci_lo <= w.ratio <= w.ci_hi and w.verdict  # two launches a side: an interval and a verdict
        assert w.ratio == pytest.approx(
            w.median_us
            / next(p.median for p in ft.points if p.procs == w.procs and p.params["transpose"] == "alltoall"),
            rel=0.3,
        )  # the ratio of geometric means of launch medians, near the medians' ratio


@pytest.mark.mpi
def test_npb_verification_is_shown_with_its_reference_and_a_failure_is_an_error_in_npb_s_words(engine, db, tmp_path):
    """A value moved by 1e-6 (SCOPE_TEST_NPB_SKEW) fails NPB's 1e-8 and 1e-12 bounds: an error
    that names the value, NPB's reference and the relative error, no point, and a run listed
    `errors`, not `complete`.  A verified run shows and exports each value beside NPB's."""
    quick = ("-n", "2", "--budget", "0.1", "--quiet")
    bad = run_scope("run", "app.ep", "app.ft", *quick, db=db, env={"SCOPE_TEST_NPB_SKEW": "1e-6"})
    assert bad.returncode == 1, bad.stderr
    assert (
        "NPB verification failed: sx = -3.24783" in bad.stderr and "against NPB's -3.247834652034740e+03" in bad.stderr
    )
    assert (
        "NPB verification failed: checksum" in bad.stderr and "relative error 1.00e-06, NPB's bound 1e-12" in bad.stderr
    )
    s = Store(db)
    assert s.run(1)["status"] == "errors" and not s.points(1)
    good = run_scope("run", "app.ep", "app.ft", *quick, db=db)
    assert good.returncode == 0 and s.run(2)["status"] == "complete"
    shown = run_scope("show", "2", db=db).stdout
    assert "NPB verification" in shown and "(NPB: -3247.83465203474)" in shown and "passed" in shown
    rows = run_scope("export", "2", db=db).stdout.splitlines()
    head = rows[0].split(",")
    ep_row = next(r.split(",") for r in rows[1:] if r.startswith("2,,measured,app.ep"))
    page = tmp_path / "npb.html"  # issue 70: the report's table printed a dict's bound method
    assert run_scope("report", "2", "-o", page, db=db).returncode == 0
    html = page.read_text()
    assert "built-in method" not in html and "(NPB: -3247.83465203474); sy = " in html
    assert float(ep_row[head.index("extra.sx_reference")]) == EP_S["sx"]
    assert float(ep_row[head.index("extra.verification_error")]) <= 1e-8
