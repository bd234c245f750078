import pytest

from scope.analysis.loggp import fit_loggp_values
from scope.store import Store
from tests.conftest import run_scope


def synthetic(L, o, g, G, n, sizes):
    rtt = {s: 4 * o + 2 * L + max(s - 1, 0) * G for s in sizes}
    burst = {s: rtt[s] + (n - 1) * (g + max(s - 1, 0) * G) for s in sizes}
    d = dict(rtt)
    delayed = {s: rtt[s] + (n - 1) * (o + d[s]) for s in sizes}
    return rtt, burst, delayed, d


@pytest.mark.unit
def test_recovers_known_parameters():
    L, o, g, G = 1.2, 0.35, 0.6, 0.0001  # us, us, us, us/byte (10,000 MB/s)
    sizes = [0, 1, 64, 1024, 16384, 65536]
    f = fit_loggp_values(16, *synthetic(L, o, g, G, 16, sizes))
    assert f.L_us == pytest.approx(L) and f.o_us == pytest.approx(o)
    assert f.g_us == pytest.approx(g) and f.G_us_per_byte == pytest.approx(G)
    assert f.bandwidth_MBps == pytest.approx(10000)
    assert f.gap_residual_max < 1e-9


@pytest.mark.unit
def test_needs_two_sizes_and_the_delayed_pattern():
    rtt, burst, delayed, d = synthetic(1, 0.3, 0.5, 1e-4, 8, [0, 1024])
    assert fit_loggp_values(8, {0: rtt[0]}, {0: burst[0]}, delayed, d) is None
    assert fit_loggp_values(8, rtt, burst, {}, {}) is None


@pytest.mark.mpi
def test_measured_parameters_are_plausible(engine, db):
    p = run_scope(
        "run",
        "p2p.pingpong",
        "p2p.loggp",
        "--sizes",
        "0,1K,16K,64K",
        "-p",
        "pattern=rtt,burst,delayed",
        "--budget",
        "0.2",
        "--quiet",
        db=db,
    )
    assert p.returncode == 0, p.stderr
    pts = Store(db).points(1, "p2p.loggp")
    assert len(pts) == 12
    from scope.analysis.loggp import fit_loggp

    (f,) = fit_loggp(Store(db).load_run(1).points)
    assert f.n == 16 and f.o_us > 0 and f.g_us > 0 and f.G_us_per_byte > 0
    rtt0 = next(x["median"] for x in pts if x["size"] == 0 and '"rtt"' in x["params"])
    assert f.o_us < rtt0 and f.L_us < rtt0  # parts of a round trip are shorter than it
    show = run_scope("show", db=db).stdout
    assert "LogGP (PRTT method, n = 16)" in show and "Hockney (p2p.pingpong" in show


@pytest.mark.unit
def test_models_that_do_not_fit_are_warned():
    from scope.analysis.collectives import CollectiveModel
    from scope.analysis.facts import model_warnings
    from scope.analysis.loggp import LogGP

    good = LogGP(1.0, 0.5, 0.2, 1e-4, 16, gap_residual_max=0.05)
    across_switch = LogGP(1.0, 0.5, 0.2, 1e-4, 16, gap_residual_max=0.61)  # the audit's case
    assert model_warnings([good], []) == []
    (w,) = model_warnings([across_switch], [])
    assert w.kind == "model" and "61 %" in w.message
    fine = CollectiveModel("bcast", {}, {"t_oc": 1.0, "t_init": 0.1, "t_s": 0.5, "t_w": 1e-4}, points=8)
    fine.max_abs_residual = 0.05
    negative = CollectiveModel("barrier", {}, {"t_oc": -111.0, "t_init": 0.1, "t_s": 0.5}, points=6)
    negative.max_abs_residual = 0.1
    off = CollectiveModel("reduce", {"root": "0"}, {"t_oc": 1.0, "t_init": 0.1, "t_s": 0.5, "t_w+t_op": 1e-4}, points=8)
    off.max_abs_residual = 2.12
    msgs = [w.message for w in model_warnings([], [fine, negative, off])]
    assert len(msgs) == 2 and "negative t_oc" in msgs[0] and "212 %" in msgs[1]
