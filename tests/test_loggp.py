import pytest

from scope.analysis.loggp import fit_loggp, fit_loggp_values
from scope.store import Store
from tests.conftest import replay, run_scope


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
def test_the_three_patterns_pass_their_data_checks(engine, db):
    p = run_scope("run", "p2p.loggp", "--sizes", "0,16K", "-p", "pattern=rtt,burst,delayed", "--budget", "0.05",
                  "--quiet", db=db)  # fmt: skip
    assert p.returncode == 0, p.stderr
    pts = Store(db).load_run(1).points
    assert len(pts) == 6 and all(x.record["validated"] == 2 and x.median > 0 for x in pts)


@pytest.mark.unit
def test_the_fit_of_a_recorded_run_is_its_medians_fitted(db):
    # a real run (tests/fixtures/record.py: loggp), replayed: the fit is fit_loggp_values of its
    # medians, and its parts are each shorter than the round trip they are parts of
    replay("loggp", db)
    run = Store(db).load_run(1)
    (f,) = fit_loggp(run.points)
    by, d = {}, {}
    for x in run.points:
        if x.test == "p2p.loggp":
            by.setdefault(x.params["pattern"], {})[x.size] = x.median
            if x.params["pattern"] == "delayed":
                d[x.size] = x.extra["d_us"]
    again = fit_loggp_values(16, by["rtt"], by["burst"], by["delayed"], d)
    assert f.n == 16 and f.o_us > 0 and f.g_us > 0 and f.G_us_per_byte > 0
    assert (again.L_us, again.o_us, again.g_us, again.G_us_per_byte) == (f.L_us, f.o_us, f.g_us, f.G_us_per_byte)
    rtt0 = by["rtt"][0]
    assert f.o_us < rtt0 and f.L_us < rtt0
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
