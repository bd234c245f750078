"""The kernel level: every algorithm checks its own result, phases add up and idle time is
measured (a rank made late by a known time leaves its partners idle for that long, whatever
offset its clock has), operations in context find their loop figures, and the cost models
give the hand-computed values."""

import json
import math

import pytest

from scope.analysis.predict import Inputs, Rate, mg_levels, predict
from scope.run.combine import _combine_phases
from scope.store import Store
from tests.conftest import run_scope
from tests.oracles import phase_sums_off

KERNELS = ["kernel.matmul", "kernel.cannon", "kernel.jacobi", "kernel.psrs"]


@pytest.fixture(scope="module")
def kernel_db(tmp_path_factory, engine):
    db = tmp_path_factory.mktemp("kernels") / "r.db"
    p = run_scope(
        # --max-count: the record keeps the per-rank times of the first 5000 repetitions
        # (engine/measure.c WINDOW_KEEP), and the phases-add-up oracle needs all of them; a fast
        # machine ran 6028 within the budget
        "run", "-n", "4", *KERNELS, "-p", "n=96", "-p", "split=row,col", "-p", "iters=4", "--procs", "1,2,4",
        "--budget", "0.3", "--max-count", "2000", "--quiet", db=db, timeout=900,
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    return db


@pytest.fixture(scope="module")
def kernels(kernel_db):
    return Store(kernel_db).load_run(1)


@pytest.mark.mpi
def test_every_kernel_verifies_its_result_at_every_process_count(kernels):
    got = {(p.test, p.params.get("split"), p.procs) for p in kernels.points}
    want = {("kernel.matmul", s, n) for s in ("row", "col") for n in (1, 2, 4)}
    want |= {(t, None, n) for t in ("kernel.jacobi", "kernel.psrs") for n in (1, 2, 4)}
    want |= {("kernel.cannon", None, 1), ("kernel.cannon", None, 4)}
    assert got == want
    assert all(p.record["validated"] == 2 for p in kernels.points)  # checked before and after measuring
    assert [x for p in kernels.points for x in phase_sums_off(p.whole_record)] == []  # the phases add up
    assert not [e for e in kernels.events if e.type == "error"]
    (skip,) = [e for e in kernels.events if e.type == "skip"]
    assert skip.test == "kernel.cannon" and skip.params["procs"] == 2 and "square number of ranks" in skip.message


@pytest.fixture(scope="module")
def multigrid(tmp_path_factory, engine):
    db = tmp_path_factory.mktemp("multigrid") / "r.db"
    p = run_scope(
        "run", "-n", "4", "kernel.multigrid", "-p", "n=63,64", "-p", "cycles=2", "--procs", "1,2,4",
        "--budget", "0.3", "--quiet", db=db, timeout=600,
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    return Store(db).load_run(1)


@pytest.mark.mpi
def test_multigrid_matches_the_serial_cycles_and_shrinks_the_residual_as_multigrid_does(multigrid):
    """At 4 ranks the coarsest levels have fewer rows than ranks (some hold none); the check is
    exact against one rank's cycles either way.  n = 64 has no coarser grid: a skip per point."""
    assert sorted(p.procs for p in multigrid.points) == [1, 2, 4]
    for p in multigrid.points:
        assert p.record["validated"] == 2
        assert p.extra["levels"] == 6 and p.extra["updates"] == 2 * 32525  # 6 (N-1)^2 + (N/2-1)^2 a level
        assert 0.01 < p.extra["residual_factor"] < 0.2  # V(2,2): about 0.1 a cycle (Briggs et al., ch. 4)
        (halo,) = p.record["ops"]
        assert halo["test"] == "p2p.exchange" and halo["calls"] == 2 * 6 and halo["bytes"] == 65 * 8
    assert not [e for e in multigrid.events if e.type == "error"]
    skips = [e for e in multigrid.events if e.type == "skip"]
    assert len(skips) == 3 and all("n + 1 must be even" in e.message for e in skips)


@pytest.mark.mpi
def test_phases_are_per_rank_and_one_rank_never_waits(kernels):
    for p in kernels.points:
        ph = p.record["phases"]
        assert all(len(ph[k]) == p.procs for k in ("init", "comp", "comm", "idle"))
        assert ph["repetitions"] >= 1 and ph["idle_measured"]
        assert all(x >= 0 for k in ("init", "comp", "comm", "idle") for x in ph[k])
        if p.procs == 1:  # nobody to wait for
            assert ph["idle"] == [0.0]
        assert ph["comp"][0] > 0


@pytest.mark.mpi
def test_operations_in_context_are_named_with_their_loop_test(kernels):
    (mm,) = [p for p in kernels.points if p.test == "kernel.matmul" and p.procs == 4 and p.params["split"] == "row"]
    ops = {o["name"]: o for o in mm.record["ops"]}
    assert set(ops) == {"scatterv", "bcast", "gatherv"}
    assert ops["bcast"]["test"] == "coll.bcast" and ops["bcast"]["bytes"] == 96 * 96 * 8
    assert ops["scatterv"]["bytes"] == 24 * 96 * 8 and ops["scatterv"]["calls"] == 1
    (ja,) = [p for p in kernels.points if p.test == "kernel.jacobi" and p.procs == 4]
    (halo,) = ja.record["ops"]
    assert halo["test"] == "p2p.exchange" and halo["calls"] == 4 and halo["bytes"] == 96 * 8


@pytest.mark.mpi
def test_show_and_report_carry_the_kernel_tables(kernel_db, tmp_path):
    out = run_scope("show", db=kernel_db).stdout
    assert "Kernels and applications (T: the median" in out and "= mean us" in out and "Operations in context" in out
    rows = [ln.split() for ln in out.splitlines() if ln.startswith("kernel.jacobi ")]
    # test, its setting named by what differs from its test's other rows (nothing: "-"), procs
    four = [r for r in rows if r[1:3] == ["-", "4"] and any(t.endswith("%") for t in r)]
    assert four  # the kernel table's row, with its efficiency
    assert "kernel.jacobi: iters=4 n=96" in out  # the setting said once, in the settings lines
    # no lower levels stored: the prediction names the run that would provide them
    assert "not predicted: scope run " in out and "--tests" not in out  # scope run has no --tests
    rep = run_scope("report", "-o", str(tmp_path / "r.html"), db=kernel_db)
    assert rep.returncode == 0, rep.stderr
    html = (tmp_path / "r.html").read_text()
    assert "Kernels and applications: phases, operations in context, prediction" in html


@pytest.mark.mpi
@pytest.mark.parametrize("test", ["kernel.jacobi", "kernel.matmul", "kernel.psrs", "kernel.multigrid"])
def test_a_late_rank_is_waited_for_on_the_global_clock(engine, db, test):
    """Rank 1 computes 3 ms more at the start of every repetition (SCOPE_TEST_LATE) and its
    clock runs 5 ms ahead (SCOPE_TEST_CLOCK).  Its compute holds the 3 ms it was made to spend
    (a floor no load can lower), and rank 0, which waits for it, is idle; that rank 0's idle
    grows by the 3 ms (within 10 %) against a run without the delay is a claim about timing on
    this machine: bench/claims.py measures it."""
    args = {"kernel.jacobi": ["-p", "iters=4", "-p", "n=64"], "kernel.multigrid": ["-p", "cycles=2", "-p", "n=63"]}
    argv = ["run", test, *args.get(test, ["-p", "n=64"]), "--procs", "2", "--budget", "0.3", "--quiet"]
    p = run_scope(*argv, db=db, env={"SCOPE_TEST_LATE": "1:3000", "SCOPE_TEST_CLOCK": "1:5000:0"})
    assert p.returncode == 0, p.stderr
    (pt,) = Store(db).load_run(1).points
    ph = pt.record["phases"]
    assert ph["comp"][1] >= 3000 and ph["idle"][0] > 0
    assert all(v >= 0 for phase in ("init", "comp", "comm", "idle") for v in ph[phase])


@pytest.mark.unit
def test_a_prediction_is_frozen_with_its_inputs_whole():
    """What a stored prediction keeps gives back the same inputs and the same predictions."""
    import json

    from scope.analysis.collectives import CollectiveModel
    from scope.analysis.frozen import input_runs, inputs_of, inputs_record, prediction_of, prediction_record

    inp = Inputs(t0_us=2.0, rinf_MBps=1000.0, hockney_run=1, cores=2, one_host=True, llc_bytes=3e7, bcast_run=5)
    inp.dgemm = [(1000, 4, Rate(10.0, "n=1000 procs=4", 2))]
    inp.stream = {"triad": [(1, Rate(2000.0, "triad procs=1", 3))]}
    inp.update = {"kernel.jacobi": [(768, Rate(1.5, "n=768 procs=1", 4))]}
    inp.sort = Rate(3.0, "n=1048576 procs=1", 6)
    inp.bcast = CollectiveModel("bcast", {}, {"t_oc": 1.0, "t_init": 0.1, "t_s": 2.0, "t_w": 0.001}, r2=float("nan"))
    back = inputs_of(json.loads(json.dumps(inputs_record(inp), allow_nan=False)))
    assert back.bcast.r2 is None and back.bcast.params == inp.bcast.params
    back.bcast.r2 = inp.bcast.r2 = None
    assert back == inp and input_runs(back) == [1, 2, 3, 4, 5, 6]
    for test, s in (("kernel.matmul", {"n": 1000, "split": "row"}), ("kernel.jacobi", {"n": 768, "iters": 10})):
        x = predict(test, s, 2, inp)
        assert prediction_of(json.loads(json.dumps(prediction_record(x)))) == x == predict(test, s, 2, back)


@pytest.mark.unit
def test_cost_models_give_the_hand_computed_times():
    inp = Inputs(t0_us=2.0, rinf_MBps=1000.0, hockney_run=1, cores=64)
    inp.dgemm = [(1000, 4, Rate(10.0, "n=1000 procs=4", 2))]
    inp.stream = {"copy": [(1, Rate(4000.0, "copy procs=1", 3))], "triad": [(4, Rate(2000.0, "triad procs=4", 3))]}
    m = predict("kernel.matmul", {"n": 1000, "split": "row"}, 4, inp)
    assert m.missing is None
    assert m.comp_us == pytest.approx(2 * 250 * 1000 * 1000 / 10e3)  # 2 rows n n / rate
    # 2 x scatter (L a + 3/4 M b) + bcast above 12 KiB ((L + p - 1) a + 2 (3/4) m b); L = 2
    assert m.comm_us == pytest.approx(2 * (2 * 2 + 0.75 * 8e6 / 1000) + (5 * 2 + 1.5 * 8e6 / 1000))
    assert m.init_us == 0
    col = predict("kernel.matmul", {"n": 1000, "split": "col"}, 4, inp)
    assert col.init_us == pytest.approx(2 * 2 * 8e6 / 4000)  # rank 0 packs B and unpacks C
    c = predict("kernel.cannon", {"n": 1000}, 4, inp)
    assert c.comm_us == pytest.approx(4 * (2 + 8 * 500 * 500 / 1000))  # q=2: 2 alignment + 2 shifts
    assert predict("kernel.cannon", {"n": 1000}, 3, inp).missing.startswith("Cannon")
    j = predict("kernel.jacobi", {"n": 1000, "iters": 10}, 4, inp)  # no one-rank rate: the STREAM roofline
    assert j.comp_us == pytest.approx(10 * 250 * 1000 * 24 / 2000)
    assert j.comm_us == pytest.approx(10 * 2 * (2 + 8 * 1002 / 1000))
    inp.update = {"kernel.jacobi": [(1000, Rate(5.0, "n=1000 procs=1", 4))]}  # 5 ns an update, grids in the cache
    inp.llc_bytes = 1e12
    assert predict("kernel.jacobi", {"n": 1000, "iters": 10}, 4, inp).comp_us == pytest.approx(10 * 250 * 1000 * 5e-3)
    s = predict("kernel.psrs", {"n": 1 << 20}, 4, inp)
    assert s.missing and "kernel.psrs --procs 1" in s.missing
    inp.sort = Rate(2.0, "n=1048576 procs=1", 5)
    s = predict("kernel.psrs", {"n": 1 << 20}, 4, inp)
    k = (1 << 20) / 4
    assert s.comp_us == pytest.approx(2e-3 * (k * math.log2(k) + k * 2 + 16 * 4))
    # a memory-bound sort slows as its node's ranks share memory: triad 3000 MB/s on one rank,
    # 2000 a rank with 4 ranks a node: each key-level 1.5x
    inp.stream["triad"].append((1, Rate(3000.0, "triad procs=1", 3)))
    s = predict("kernel.psrs", {"n": 1 << 20}, 4, inp)
    assert s.comp_us == pytest.approx(1.5 * 2e-3 * (k * math.log2(k) + k * 2 + 16 * 4))
    assert any("memory shared by 4 ranks a node" in u for u in s.used)


@pytest.mark.unit
def test_ranks_sharing_cores_take_turns_for_their_copies_as_for_their_compute():
    """4 ranks on one host of 2 cores: T_init, T_comp and T_comm all twice what 4 cores give."""
    inp = Inputs(t0_us=2.0, rinf_MBps=1000.0, hockney_run=1, cores=4, one_host=True)
    inp.dgemm = [(1000, 2, Rate(10.0, "n=1000 procs=2", 2)), (1000, 4, Rate(10.0, "n=1000 procs=4", 2))]
    inp.stream = {"copy": [(2, Rate(4000.0, "copy procs=2", 3)), (4, Rate(4000.0, "copy procs=4", 3))]}
    own = predict("kernel.matmul", {"n": 1000, "split": "col"}, 4, inp)
    inp.cores = 2
    shared = predict("kernel.matmul", {"n": 1000, "split": "col"}, 4, inp)
    for phase in ("init_us", "comp_us", "comm_us"):
        assert getattr(shared, phase) == pytest.approx(2 * getattr(own, phase)) and getattr(own, phase) > 0


@pytest.mark.unit
def test_an_own_rate_is_read_on_the_statistic_of_the_point_s_time():
    """A one-rank PSRS point whose five repetitions fell in two machine states (median 230 ms,
    mean 276 ms): its phases are means, so the sort rate is comp x median / mean."""
    from types import SimpleNamespace

    from scope.analysis.inputs import one_rank_comp

    p = SimpleNamespace(test="kernel.psrs", procs=1, median=229768.0, mean=275813.0,
                        record={"phases": {"comp": [273969.0]}})  # fmt: skip
    assert one_rank_comp(p) == pytest.approx(273969.0 * 229768.0 / 275813.0)


@pytest.mark.unit
def test_the_multigrid_cost_model_gives_the_hand_computed_times():
    """n = 63 on 4 ranks: levels of N = 64, 32, 16, 8, 4, 2 intervals; the slowest rank holds
    16, 8, 4, 2, 1, 1 rows of them (a coarse row goes with the fine row under it)."""
    assert mg_levels(63) == [64, 32, 16, 8, 4, 2] and mg_levels(63, 3) == [64, 32, 16] and mg_levels(64) == [65]
    inp = Inputs(t0_us=1.0, rinf_MBps=1000.0, hockney_run=1, cores=64)
    inp.stream = {"triad": [(4, Rate(2000.0, "triad procs=4", 3))]}
    inp.update = {"kernel.multigrid": [(63, Rate(2.0, "n=63 procs=1", 4))]}
    m = predict("kernel.multigrid", {"n": 63, "cycles": 2, "nu": 2, "levels": 0}, 4, inp)
    # visits a cycle: (2 nu + 2) rows (N - 1) + the coarse rows (N/2 - 1) a level, N rows (N - 1) at the bottom
    visits = (6 * 16 * 63 + 8 * 31) + (6 * 8 * 31 + 4 * 15) + (6 * 4 * 15 + 2 * 7) + (6 * 2 * 7 + 3) + (6 * 3 + 1) + 2
    assert visits == 8326
    assert m.comp_us == pytest.approx(2 * visits * 2.0e-3)
    h = {N: 2 * (1 + 8 * (N + 1) / 1000) for N in (64, 32, 16, 8, 4, 2)}  # 2 neighbours, both ways at once
    per_cycle = sum(6 * h[N] + h[N // 2] for N in (64, 32, 16, 8, 4)) + 2 * h[2]
    assert m.comm_us == pytest.approx(2 * per_cycle) and m.comm_us == pytest.approx(175.104)
    assert predict("kernel.multigrid", {"n": 64, "cycles": 2, "nu": 2}, 4, inp).missing.startswith("kernel.multigrid")


@pytest.mark.unit
def test_a_prediction_without_lower_levels_names_the_command():
    p = predict("kernel.matmul", {"n": 512, "split": "row"}, 4, Inputs())
    assert p.missing == "scope run p2p.pingpong"
    p = predict("kernel.matmul", {"n": 512, "split": "row"}, 4, Inputs(t0_us=1, rinf_MBps=1e3))
    assert p.missing.startswith("scope run node.dgemm")


@pytest.mark.mpi
def test_scope_predict_from_stored_runs(engine, db):
    bad = run_scope("predict", "kernel.matmul", db=db)
    assert bad.returncode != 0 and "\n" not in bad.stderr.strip()  # no database yet: one line
    for args in (
        ["p2p.pingpong", "--sizes", "1K-1M:x4"],
        ["node.dgemm", "-p", "n=64,128", "--procs", "1"],
        ["kernel.matmul", "-p", "n=128", "--procs", "1,2"],
    ):
        p = run_scope("run", *args, "--budget", "0.2", "--quiet", db=db)
        assert p.returncode == 0, p.stderr
    p = run_scope("predict", "kernel.matmul", "-p", "n=128", "--procs", "1,2,1024", db=db)
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert any(ln.startswith("2 ") and "(run 3)" in ln for ln in lines)  # measured beside predicted
    assert any(ln.startswith("1024 ") for ln in lines)
    assert "DGEMM" in p.stdout and "p2p.pingpong, run 1" in p.stdout
    # with the lower levels stored, the report draws the predicted scalability as an image
    rep = run_scope("report", "3", "-o", str(db.parent / "k.html"), db=db)
    assert rep.returncode == 0, rep.stderr
    html = (db.parent / "k.html").read_text()
    assert '<img class="plot" alt="predicted scalability of kernel.matmul' in html and "&lt;img" not in html
    miss = run_scope("predict", "kernel.jacobi", db=db)
    assert miss.returncode != 0 and "node.stream" in miss.stderr
    # the run's prediction was frozen when it was stored: a later, faster ping-pong leaves it
    frozen = run_scope("predict", "--check", "3", db=db)
    assert frozen.returncode == 0 and "frozen at" in frozen.stdout and "inputs from runs 1, 2" in frozen.stdout
    later = run_scope("run", "p2p.pingpong", "--sizes", "1K-1M:x4", "--budget", "0.1", "--quiet", db=db)
    assert later.returncode == 0, later.stderr
    again = run_scope("predict", "--check", "3", db=db)
    assert again.stdout.splitlines()[1:] == frozen.stdout.splitlines()[1:]
    anew = run_scope("predict", "--check", "3", "--again", db=db)
    assert "made now (prediction" in anew.stdout and "inputs from runs 2, 4" in anew.stdout, anew.stdout
    assert "measured T us" in anew.stdout and "median |error|" in anew.stdout
    doc = json.loads(run_scope("predict", "--check", "3", "--json", db=db).stdout)
    assert doc["format"] == "scope-predict-check" and doc["input_runs"] == [2, 4] and doc["points"]
    rows = json.loads(run_scope("predict", "kernel.matmul", "-p", "n=128", "--procs", "1,2", "--json", db=db).stdout)
    assert [r["procs"] for r in rows["rows"]] == [1, 2] and rows["rows"][1]["measured_us"] > 0
    for argv, hint in (
        (["predict", "kernel.nope"], "predict one of"),
        (["predict", "kernel.matmul", "-p", "m=3"], "parameters of the selected tests: n, split"),
        (["predict", "kernel.matmul", "--procs", "0"], "process counts >= 1"),
        (["predict", "kernel.cannon", "--procs", "1,3"], "does not run on 3 processes with n=512: Cannon's"),
        (["predict", "kernel.jacobi", "-p", "n=8", "--procs", "16"], "fewer grid rows than ranks"),
        (["predict", "kernel.matmul", "-p", "n=64,128"], "a prediction is of one setting"),
        (["predict", "--check", "1"], "run 1 has no kernel or application points"),
    ):
        r = run_scope(*argv, db=db)
        assert r.returncode == 2 and hint in r.stderr and "Traceback" not in r.stderr


@pytest.mark.unit
def test_phase_accounts_over_launches_weigh_each_launch_by_its_repetitions():
    a = {"phases": {"repetitions": 10, "idle_measured": True, "comp": [10.0, 20.0], "idle": [0.0, 4.0]}}
    b = {"phases": {"repetitions": 30, "idle_measured": True, "comp": [14.0, 24.0], "idle": [0.0, 8.0]}}
    a["phases"]["steps"], b["phases"]["steps"] = {"fft": [6.0, 8.0]}, {"fft": [10.0, 12.0]}
    a["ops"] = [{"name": "x", "comm_us": [1.0, 1.0], "idle_us": [0.0, 2.0]}]
    b["ops"] = [{"name": "x", "comm_us": [3.0, 5.0], "idle_us": [0.0, 6.0]}]
    out = {"phases": dict(a["phases"]), "ops": a["ops"]}
    _combine_phases(out, [a, b])
    assert out["phases"]["repetitions"] == 40
    assert out["phases"]["comp"] == [13.0, 23.0] and out["phases"]["idle"] == [0.0, 7.0]
    assert out["ops"][0]["comm_us"] == [2.5, 4.0] and out["ops"][0]["idle_us"] == [0.0, 5.0]
    assert out["phases"]["steps"] == {"fft": [9.0, 11.0]}


@pytest.mark.unit
def test_a_loop_figure_is_the_operation_s_own_size_measured_or_interpolated_never_another_size():
    """An operation of 2 KiB once read its loop figure at 1 or 4 KiB (the nearest within a
    factor 2): now at its size, interpolated on a log-log line between the sizes around it."""
    from types import SimpleNamespace

    from scope.analysis.kernels import loop_at

    pts = [SimpleNamespace(size=n, median=t) for n, t in ((1024, 10.0), (4096, 40.0), (16384, 80.0))]
    assert loop_at(pts, 4096) == (40.0, 4096, None)
    t, n, between = loop_at(pts, 2048)
    assert t == pytest.approx(20.0) and n is None and between == (1024, 4096)  # 10 x (2048 / 1024)^1
    t, _, between = loop_at(pts, 8192)
    assert t == pytest.approx(40.0 * 2**0.5) and between == (4096, 16384)  # slope log 2 / log 4 = 1/2
    assert loop_at(pts, 512) is None and loop_at(pts, 32768) is None  # outside what was measured
