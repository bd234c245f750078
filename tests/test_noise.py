"""The machine's drift: the canary's verdict in compare, the between-run noise model of show,
and measuring two stored configurations again in alternating launches (analysis/noise.py)."""

import json
import math

import numpy as np
import pytest

from scope.analysis.noise import MACHINE_CHANGED, canary_shifts, drift_between_runs, next_interval
from scope.errors import MACHINE_MOVED, ScopeError
from scope.run.combine import combine_launches
from scope.run.request import RunOptions, options_of, request_of
from scope.store import Store
from tests.conftest import run_scope


def stored_run(store, centre, launch_sd, seed, launches=3, compute_us=None, sizes=(8, 1024)):
    """A run stored as the runner stores one: each launch's points, its canaries, then their
    combination.  Launch k's medians are centre * (1 + size/1024) * exp(launch_sd * z_k)."""
    rid = store.begin_run(["synthetic"], "test", 2, launches=launches)
    rng = np.random.default_rng(seed)
    for k in range(1, launches + 1):
        shift = math.exp(launch_sd * rng.standard_normal())
        for i, size in enumerate(sizes):
            x = centre * (1 + size / 1024) * shift * rng.lognormal(0, 0.01, 400)
            m = float(np.median(x))
            rec = {"type": "point", "test": "p2p.pingpong", "index": i, "params": {"size": size}, "unit": "us"}
            rec |= {"count": len(x), "stats": {"median": m, "ci_lo": m * 0.999, "ci_hi": m * 1.001}}
            store.add_point(rid, rec | {"samples": x.tolist()}, launch=k)
        if compute_us is not None:
            for at in ("start", "end"):
                c = compute_us * (1 + 0.002 * rng.standard_normal())
                store.add_event(rid, {"type": "canary", "at": at, "repetitions": 11, "compute_us": c,
                                      "copy_bytes": 1 << 24, "copy_us": 1000.0 * c / 140.0, "launch": k})  # fmt: skip
    combine_launches(store, rid, launches)
    store.finish_run(rid, "complete")
    return rid


@pytest.mark.unit
def test_a_difference_between_runs_whose_canaries_moved_is_machine_changed_not_slower(db):
    """The 64 KiB case of issue 28: run B 30 % slower.  With B's canaries 30 % slower too the
    machine changed (exit 5); with the same canaries it is a regression (exit 1)."""
    s = Store(db)
    a = stored_run(s, 11.2, 0.005, 1, compute_us=140.0)
    b_moved = stored_run(s, 14.6, 0.005, 2, compute_us=182.0)
    b_same = stored_run(s, 14.6, 0.005, 3, compute_us=140.0)
    shifts = canary_shifts(s.load_run(a), s.load_run(b_moved))
    assert {x.probe: x.verdict for x in shifts} == {"compute": "slower", "memory copy": "slower"}
    assert shifts[0].ratio == pytest.approx(1.3, rel=0.01)
    moved = run_scope("compare", a, b_moved, db=db)
    assert moved.returncode == MACHINE_MOVED == 5, moved.stdout + moved.stderr
    rows = [ln for ln in moved.stdout.splitlines() if ln.startswith("p2p.pingpong")]
    assert len(rows) == 2 and all(f"{MACHINE_CHANGED} (measured slower)" in r for r in rows), moved.stdout
    assert (
        "compare --rerun" in moved.stderr and "machine (canary): compute" in moved.stdout and "(x1.30" in moved.stdout
    )
    same = run_scope("compare", a, b_same, db=db)
    assert same.returncode == 1 and same.stdout.count(" slower") >= 2, same.stdout
    json_rows = run_scope("compare", a, b_moved, "--json", db=db)
    assert json_rows.returncode == 5 and '"verdict_measured": "slower"' in json_rows.stdout


@pytest.mark.unit
def test_runs_measured_by_different_engine_code_are_said_to_be(db):
    """Two runs whose engines were built from different sources: compare names both sources and
    the rerun that measures both with one engine; the same source, or a run from before the
    source was recorded, says nothing."""
    s = Store(db)
    runs = [stored_run(s, 2.0, 0.005, seed) for seed in (6, 7, 8, 9)]
    for rid, source in zip(runs, ["0123456789ab", "ba9876543210", "0123456789ab", None]):
        engine = {"version": "0.1.0", "compiler": "12.2.0", "mpicc": "/x/mpicc", "source": source}
        s.set_context(rid, {"type": "context", "schema": 1, "engine": engine})
    a, b, same, old = runs
    p = run_scope("compare", a, b, db=db)
    assert "warning [engine]" in p.stderr and "0123456789ab and ba9876543210" in p.stderr, p.stderr
    assert f"scope compare --rerun {a} {b}" in p.stderr and p.stderr.count("\n") == 1
    assert "warning [engine]" not in run_scope("compare", a, same, db=db).stderr
    assert "warning [engine]" not in run_scope("compare", a, old, db=db).stderr


@pytest.mark.unit
def test_runs_without_canaries_are_judged_on_their_points_alone(db):
    s = Store(db)
    a, b = stored_run(s, 2.0, 0.005, 4), stored_run(s, 2.6, 0.005, 5)
    assert canary_shifts(s.load_run(a), s.load_run(b)) == []
    assert run_scope("compare", a, b, db=db).returncode == 1


@pytest.mark.unit
def test_the_drift_between_runs_is_the_variance_of_run_centres_beyond_the_launches(db):
    """Four runs of one configuration whose centres sit at 1.0, 1.1, 0.95 and 1.05 with launches
    that agree within 0.5 %: sigma_b is the sd of the log centres less what the launches
    explain, by hand; the next-launch interval of one run widens to cover the other runs."""
    s = Store(db)
    centres = [1.0, 1.1, 0.95, 1.05]
    ids = [stored_run(s, c, 0.005, 10 + i) for i, c in enumerate(centres)]
    runs = [s.load_run(i, samples=False) for i in ids]
    d = drift_between_runs(runs[0], runs[1:])
    assert d is not None and d.runs == tuple(ids) and d.points == 2 and d.df == 2 * 3
    by_hand = []
    for j in range(2):
        logs = [np.log(r.points[j].replication.medians) for r in runs]
        centre_var = np.var([x.mean() for x in logs], ddof=1)
        within = np.mean([x.var(ddof=1) / len(x) for x in logs])
        by_hand.append(max(centre_var - within, 0))
    assert d.between_sd == pytest.approx(math.sqrt(np.mean(by_hand)), rel=1e-9)
    assert 0.04 < d.between_sd < 0.08
    p = runs[0].points[0]
    own = (p.replication.next_lo, p.replication.next_hi)
    lo, hi = next_interval(p, d)
    assert lo < own[0] and hi > own[1]
    others = [r.points[0].median for r in runs[1:]]
    assert not all(own[0] <= m <= own[1] for m in others)  # the run's own interval misses them
    assert all(lo <= m <= hi for m in others)
    assert drift_between_runs(runs[0], runs[1:2]) is None  # two runs: no estimate


@pytest.mark.unit
def test_show_says_the_intervals_took_the_drift_in_and_what_the_canaries_read(db):
    s = Store(db)
    ids = [stored_run(s, c, 0.005, 20 + i, compute_us=140.0) for i, c in enumerate([1.0, 1.1, 0.95])]
    out = run_scope("show", ids[-1], db=db)
    assert out.returncode == 0, out.stderr
    assert (
        f"drift between 3 runs of this configuration on this machine (runs {ids[0]}, {ids[1]}, {ids[2]})" in out.stdout
    )
    assert "machine (canary, start and end of each launch): compute 140" in out.stdout


@pytest.mark.unit
def test_a_request_is_stored_whole_and_a_run_without_one_cannot_be_rerun():
    o = RunOptions(tests=["p2p.pingpong"], ranks=3, engine={"sizes": "8,1K", "budget": 0.2}, env={"X": "1"}, launches=3)
    again = options_of(request_of(o), 7, launches=1, label="rerun of 7")
    assert (again.tests, again.ranks, again.engine, again.env) == (o.tests, 3, o.engine, {"X": "1"})
    assert again.launches == 1 and again.label == "rerun of 7"
    with pytest.raises(ScopeError, match="run 7 does not record what was asked of it"):
        options_of(None, 7)


@pytest.mark.mpi
def test_compare_rerun_measures_both_configurations_again_in_alternating_launches(db):
    for nb in ("no", "yes"):
        p = run_scope("run", "p2p.pingpong", "-p", f"blocking={nb}", "--sizes", "8", "--budget", "0.05",
                      "--launches", "2", "--quiet", db=db)  # fmt: skip
        assert p.returncode == 0, p.stderr
    r = run_scope("compare", "--rerun", "1", "2", "--launches", "2", "--vary", "blocking=no,yes", db=db)
    assert r.returncode in (0, 1), r.stderr
    order = [ln.split(": run ")[1][0] for ln in r.stderr.splitlines() if "configuration" in ln]
    assert order == ["1", "2", "2", "1"], r.stderr  # A B, then B A
    s = Store(db)
    labels = {row["id"]: row["label"] for row in s.runs()}
    assert [labels[i] for i in range(3, 7)] == ["rerun of 1", "rerun of 2", "rerun of 2", "rerun of 1"]
    assert "run 2 rerun as 4,5 against run 1 rerun as 3,6" in r.stdout
    assert s.load_run(3).context_record["request"]["engine"]["budget"] == "0.05"
    with pytest.raises(ScopeError):  # an import records no request
        options_of(None, 1)


@pytest.mark.mpi
def test_each_launch_probes_the_machine_at_its_start_and_end_unless_told_not_to(engine, db):
    """The canary records of a live launch (engine/canary.c), and --no-canary (or
    $SCOPE_NO_CANARY) leaving them out, said in the run's settings and its request.  A run of
    one point in one launch probes only when asked (--canary; issue 52)."""
    quick = ["run", "p2p.pingpong", "--sizes", "8", "--budget", "0.05", "--quiet"]
    assert run_scope(*quick, "--canary", db=db, env={"SCOPE_NO_CANARY": ""}).returncode == 0
    s = Store(db)
    probes = [e.record for e in s.load_run(1).events if e.type == "canary"]
    assert [e["at"] for e in probes] == ["start", "end"]
    assert all(e["repetitions"] == 11 and e["compute_us"] > 0 and e["copy_us"] > 0 for e in probes)
    assert all(e["copy_bytes"] >= 4 << 20 for e in probes)  # at least 4 MiB, past the caches it fills
    assert json.loads(s.run(1)["context"])["settings"]["canary"] is True
    assert run_scope(*quick, "--no-canary", db=db, env={"SCOPE_NO_CANARY": ""}).returncode == 0
    assert run_scope(*quick, db=db, env={"SCOPE_NO_CANARY": "1"}).returncode == 0
    for rid in (2, 3):
        ctx = json.loads(s.run(rid)["context"])
        assert [e for e in s.load_run(rid).events if e.type == "canary"] == [] and ctx["settings"]["canary"] is False
        assert ctx["request"]["engine"]["no-canary"] is True
    # one point, one launch, not asked: no probe; two points: probed, as every larger run is
    assert run_scope(*quick, db=db, env={"SCOPE_NO_CANARY": ""}).returncode == 0
    assert json.loads(s.run(4)["context"])["settings"]["canary"] is False
    assert run_scope(*quick[:3], "8,64", *quick[4:], db=db, env={"SCOPE_NO_CANARY": ""}).returncode == 0
    assert [e.record["at"] for e in s.load_run(5).events if e.type == "canary"] == ["start", "end"]
