"""scope history (issue 54): the change-point detector on generated series whose truth is known,
and the command over a store of recorded runs whose later runs were edited to a planted step."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from scope.analysis.history import Obs, Series, _bh, check, detect, newest, raised_by
from scope.hub.runs import cluster_changes
from scope.store import Store
from scope.views.history import sparkline
from tests.conftest import ROOT, replay, run_scope

pytestmark = pytest.mark.unit


def made(levels, spread=0.01, seed=0, name="gen") -> Series:
    """A series with these true levels (one a run), three launches a run at `spread` (log SD)
    and run-to-run noise of the same size."""
    rng = np.random.default_rng(seed)
    obs = []
    for r, level in enumerate(levels):
        run = math.log(level) + rng.normal(0, spread)
        launches = np.exp(run + rng.normal(0, spread, 3))
        m = float(np.exp(np.log(launches).mean()))
        obs.append(Obs(r + 1, f"2026-01-{1 + r // 24:02d}T{r % 24:02d}:00:00Z", m, m * 0.98, m * 1.02, tuple(launches)))
    return Series(name, {"seed": str(seed)}, 8, "us", obs)


def steps(changes):
    return [c for c in changes if c.kind == "step"]


def test_a_planted_step_is_found_where_it_was_with_its_size():
    s = made([10.0] * 25 + [11.0] * 15, spread=0.01, seed=3)
    (c,) = steps(detect([s]))
    assert abs(c.index - 25) <= 1 and c.run == s.obs[c.index].run
    assert c.step_lo < 0.10 < c.step_hi and 0.07 < c.step < 0.13
    assert c.q_value <= 0.05


def test_noise_alone_reports_no_step():
    series = [made([5.0] * 40, spread=0.02, seed=k, name=f"null{k}") for k in range(30)]
    assert steps(detect(series)) == []


def test_one_odd_run_is_an_outlier_not_a_change():
    levels = [10.0] * 40
    levels[17] = 14.0
    s = made(levels, spread=0.01, seed=5)
    found = detect([s])
    assert [c.kind for c in found] == ["outlier"] and found[0].index == 17
    assert found[0].step == pytest.approx(0.4, abs=0.06)


def test_slow_drift_is_named_drift_not_a_step():
    s = made(list(np.linspace(10, 11.5, 60)), spread=0.004, seed=2)
    found = [c for c in detect([s]) if c.kind != "faster"]  # its newest run, 3.2 SD under the line, is news
    assert steps(found) == [] and [c.kind for c in found] == ["drift"]
    assert found[0].step_lo < 0.15 < found[0].step_hi


def test_a_step_within_the_launches_own_spread_is_not_a_change():
    """A 1 % step where launches of one run differ by 3 %: what a user sees in every run."""
    s = made([10.0] * 30 + [10.1] * 30, spread=0.03, seed=1)
    assert steps(detect([s])) == []


def launched(levels, spread=0.01, between=0.0, seed=0, name="gen", wild: dict | None = None) -> Series:
    """A series whose runs' launches are its replicates: each run at its level with its own
    offset (SD `between`), three launches at `spread` (log SD); `wild`: run index -> a factor
    one of its launches is off by."""
    rng = np.random.default_rng(seed)
    obs = []
    for r, level in enumerate(levels):
        logs = math.log(level) + rng.normal(0, between) + rng.normal(0, spread, 3)
        if wild and r in wild:
            logs[0] += math.log(wild[r])
        launches = tuple(np.exp(logs))
        m = float(np.exp(np.median(logs)))
        obs.append(Obs(r + 1, f"2026-02-{1 + r:02d}T03:00:00Z", m, None, None, launches))
    return Series(name, {}, 8, "us", obs)


def test_three_runs_before_and_three_after_show_a_step():
    """Six nights, three launches each, launches 1 % apart: a 5 % step at the fourth is found,
    where one number a run and 999 permutations could not (70 distinct splits of 8)."""
    for seed in range(10):
        (c,) = steps(detect([launched([10.0] * 3 + [10.5] * 3, seed=seed)]))
        assert c.index == 3 and c.step_lo < 0.05 < c.step_hi


def test_a_change_that_comes_back_is_found_with_its_start_and_end():
    """Runs 9-16 of 24 twice as slow: one temporary change from run 9, back at run 17."""
    levels = [10.0] * 8 + [20.0] * 8 + [10.0] * 8
    (c,) = [c for c in detect([launched(levels, seed=2)]) if c.kind != "alarm"]
    assert c.kind == "temporary" and (c.run, c.end_run) == (9, 17)
    assert c.step_lo < 1.0 < c.step_hi


def test_a_wild_newest_run_hides_no_step_and_is_judged_alone():
    levels = [10.0] * 4 + [11.0] * 4 + [30.0]
    found = detect([launched(levels, seed=4)])
    (step,) = steps(found)
    assert step.index == 4 and 0.07 < step.step < 0.13
    (alarm,) = [c for c in found if c.kind == "alarm"]
    assert alarm.index == 8 and alarm.step > 1.5


def test_the_newest_run_is_judged_on_the_first_night():
    """A 20 % slower eighth run: an alarm at once, which --check reports; a quiet one is none."""
    s = launched([10.0] * 7 + [12.0], seed=7)
    found = detect([s])
    assert [c.kind for c in found] == ["alarm"] and found[0].index == 7
    assert check(found, 0.05) == found and check(found, 0.5) == []
    assert detect([launched([10.0] * 8, seed=7)]) == []
    faster = launched([10.0] * 7 + [8.0], seed=7)
    assert newest(faster) is None and [c.kind for c in detect([faster])] == ["faster"]  # news, no alarm
    assert check(detect([faster]), 0.0) == []


def test_the_night_after_an_alarm_confirms_its_step_and_raises_no_second_alarm():
    """26 quiet nights, then two 25 % slower (bench/hub_alerts.py's history): the second night
    agrees with the first, so it is no alarm of its own, and the step is confirmed at the first.
    A search that gives a level two runs at least paired last night's run with the last quiet
    one and called tonight a second alarm of half the size (an alert sent twice).  A spike that
    comes back is an outlier and raises nothing past 5 %; a night worse again is an alarm
    against the new level (the old code said +34 %, against the old level and the spike)."""
    for seed in range(5):
        s = launched([10.0] * 26 + [12.5] * 2, seed=seed)
        (c,) = [c for c in detect([s]) if c.kind != "outlier"]
        assert (c.kind, c.index) == ("step", 26) and 0.2 < c.step < 0.3
        assert [(r.kind, r.index) for r in raised_by([s], s.obs[-1].run, 0.05)] == [("step", 26)]
        back = launched([10.0] * 26 + [12.5, 10.0], seed=seed)
        assert [c.kind for c in detect([back]) if c.index == 26] == ["outlier"]
        assert raised_by([back], back.obs[-1].run, 0.05) == []
        worse = launched([10.0] * 26 + [12.5, 15.0], seed=seed)
        (alarm,) = raised_by([worse], worse.obs[-1].run, 0.05)
        assert alarm.kind == "alarm" and 0.15 < alarm.step < 0.25  # 15 against 12.5, not against 10


def test_one_wild_launch_neither_makes_a_change_nor_hides_one():
    quiet = launched([10.0] * 10, seed=9, wild={4: 3.0})
    assert [c for c in detect([quiet]) if c.kind != "outlier"] == []
    stepped = launched([10.0] * 5 + [11.0] * 5, seed=9, wild={2: 3.0})
    assert [c.index for c in steps(detect([stepped]))] == [5]


def test_a_drift_past_the_limit_fails_the_check():
    s = made(list(np.linspace(10, 15.8, 40)), spread=0.004, seed=2)
    failed = check(detect([s]), 0.05)
    assert [c.kind for c in failed] == ["drift"] and failed[0].step > 0.4


def test_a_clear_step_in_one_series_survives_many_quiet_ones():
    """One decision per series: a +30 % step from the fifth of ten nights in one series is kept
    however many quiet series the cluster has (40 here)."""
    quiet = [launched([10.0] * 10, seed=k, name=f"quiet{k}", between=0.005) for k in range(40)]
    stepped = launched([10.0] * 4 + [13.0] * 6, seed=99, name="stepped", between=0.005)
    found = steps(detect([*quiet, stepped]))
    assert [(c.series.test, c.index) for c in found] == [("stepped", 4)] and found[0].q_value < 0.05


def test_benjamini_hochberg_by_hand():
    # p sorted: 0.01, 0.02, 0.03, 0.5 (n = 4): 0.04, 0.04, 0.04, 0.5 (monotone from the top)
    assert _bh([0.03, 0.5, 0.01, 0.02]) == pytest.approx([0.04, 0.5, 0.04, 0.04])


def test_check_takes_each_series_latest_step():
    up = made([10.0] * 20 + [12.0] * 20, seed=4, name="up")
    back = made([10.0] * 14 + [12.0] * 13 + [10.0] * 13, seed=6, name="back")
    found = detect([up, back])
    slower = check(found, 0.05)
    assert [c.series.test for c in slower] == ["up"]
    assert check(found, 0.25) == []


def test_sparkline_heights():
    assert sparkline([1, 1, 1]) == "▁▁▁"
    assert sparkline([1, 10, 100]) == "▁▅█"


@pytest.fixture(scope="module")
def history(tmp_path_factory):
    """12 runs of the recorded launches fixture; from the 7th on, every median 25 % higher and
    the MPI another version: a planted step with its cause."""
    db = tmp_path_factory.mktemp("h") / "h.db"
    for _ in range(12):
        replay("launches", db)
    store = Store(db)
    with store.db:
        for rid in range(1, 13):
            wobble = 1 + 0.004 * math.sin(rid * 1.7)  # runs differ a little, as real ones do
            factor = wobble * (1.25 if rid >= 7 else 1.0)
            # every launch moves with the run, as a real step moves them
            store.db.execute("UPDATE points SET median = median * ? WHERE run_id = ?", (factor, rid))
            rows = store.db.execute("SELECT id, record FROM points WHERE run_id = ? AND launch IS NULL", (rid,))
            for pid, text in rows.fetchall():
                rec = json.loads(text)
                rep = rec.get("launches") or {}
                if rep.get("medians"):
                    rep["medians"] = [m * factor for m in rep["medians"]]
                    store.db.execute("UPDATE points SET record = ? WHERE id = ?", (json.dumps(rec), pid))
            store.db.execute("UPDATE runs SET started_utc = ? WHERE id = ?", (f"2026-11-{rid:02d}T10:00:00Z", rid))
            if rid >= 7:
                ctx = json.loads(store.db.execute("SELECT context FROM runs WHERE id = ?", (rid,)).fetchone()[0])
                ctx["mpi"]["library"] = "MPICH Version: 5.1.0"
                store.db.execute("UPDATE runs SET context = ? WHERE id = ?", (json.dumps(ctx), rid))
    store.close()
    return db


def test_history_finds_the_planted_step_and_its_cause(history):
    p = run_scope("history", "--json", db=history)
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert doc["format"] == "scope-history" and all(len(s["runs"]) == 12 for s in doc["series"])
    found = [c for c in doc["changes"] if c["kind"] == "step"]
    assert found and len(found) == len(doc["series"])  # every series stepped at the same run
    for c in found:
        assert c["run"] == 7 and c["started_utc"].startswith("2026-11-07")
        assert c["step_ci"][0] < 0.25 < c["step_ci"][1] and c["q_value"] <= 0.05
        assert c["changed"]["MPI"][1] == "MPICH Version: 5.1.0"
    text = run_scope("history", db=history).stdout
    assert "MPI: " in text and "-> MPICH Version: 5.1.0" in text and "Series (oldest to newest run)" in text


def test_history_check_is_an_alarm(history):
    assert run_scope("history", "--check", "--max-slowdown", "5%", db=history).returncode == 1
    assert run_scope("history", "--check", "--max-slowdown", "40%", db=history).returncode == 0
    assert run_scope("history", "--check", "--since", "2026-11-08", db=history).returncode == 0  # after the step


@pytest.mark.parametrize(
    "args,word",
    [
        (["--since", "yesterday"], "not a date"),
        (["--sizes", "8,x"], "not a size"),
        (["--max-slowdown=-5%"], "not a slowdown"),
        (["--test", "nothing.*"], "no series"),
        (["--min-runs", "2"], "at least 3 runs"),
        (["--min-runs", "13"], "--min-runs 12"),  # the hint names a value the option takes
    ],
)
def test_history_refusals(history, args, word):
    p = run_scope("history", *args, db=history)
    assert p.returncode == 2 and word in p.stderr and p.stderr.count("\n") == 1, p.stderr


def test_history_report_draws_every_series_and_marks_its_change(history, tmp_path):
    out = tmp_path / "h.html"
    p = run_scope("history", "--report", out, db=history)
    assert p.returncode == 0, p.stderr
    page = out.read_text()
    assert page.count("<svg") == len(json.loads(run_scope("history", "--json", db=history).stdout)["series"])
    assert page.count('stroke-dasharray="4 3"') >= 1 and "MPI: " in page and "-&gt; MPICH Version: 5.1.0" in page
    p = run_scope("history", "--report", tmp_path / "no" / "h.html", db=history)
    assert p.returncode == 2 and "--report" in p.stderr


def test_imported_runs_have_histories_of_their_own(tmp_path):
    """Four measured runs and four OSU imports of the same test: two kinds of series, never one."""
    db = tmp_path / "mixed.db"
    for _ in range(4):
        replay("launches", db)
        assert run_scope("import", ROOT / "tests" / "data" / "osu_latency.txt", db=db).returncode == 0
    p = run_scope("history", "--json", "--test", "p2p.pingpong", db=db)
    assert p.returncode == 0, p.stderr
    kinds = {s["kind"] for s in json.loads(p.stdout)["series"]}
    assert kinds == {"measured", "imported osu"}
    assert all(len(s["runs"]) == 4 for s in json.loads(p.stdout)["series"])


def long_csv(path, nights=10, step_from=5, started=True, launches=3, seed=3) -> None:
    """A site's history written by hand: p2p.pingpong at 8 B and 1 KiB, each night 3 launches,
    30 % slower from night `step_from`."""
    rng = np.random.default_rng(seed)
    head = "run,started_utc,launch,test,size,time_us" if started else "run,launch,test,size,time_us"
    rows = [head]
    for n in range(1, nights + 1):
        level = 1.5 * (1.3 if n >= step_from else 1.0)
        for k in range(1, launches + 1):
            for size in (8, 1024):
                t = level * (1 + size / 4096) * rng.normal(1, 0.01)
                when = f"2026-01-{n:02d}T03:00:00Z," if started else ""
                rows.append(f"night{n},{when}{k},p2p.pingpong,{size},{t:.5f}")
    path.write_text("\n".join(rows) + "\n")


def test_a_sites_history_in_one_csv_is_runs_with_their_launches(tmp_path):
    db, csv = tmp_path / "site.db", tmp_path / "history.csv"
    long_csv(csv)
    p = run_scope("import", csv, db=db)
    assert p.returncode == 0 and "imported 10 runs (20 points)" in p.stdout, p.stderr
    store = Store(db)
    runs = [store.load_run(r["id"], samples=False) for r in store.runs()]
    assert [r.label for r in runs] == [f"night{n}" for n in range(1, 11)]
    assert runs[4].started_utc == "2026-01-05T03:00:00Z" and runs[0].origin == "csv"
    (pt,) = [q for q in runs[0].points if q.size == 8]
    assert len(pt.replication.medians) == 3 and pt.median == sorted(pt.replication.medians)[1]  # launches kept
    doc = json.loads(run_scope("history", "--json", db=db).stdout)
    steps_found = [c for c in doc["changes"] if c["kind"] == "step"]
    assert {(c["size"], c["run"]) for c in steps_found} == {(8, 5), (1024, 5)}
    assert all(c["series_kind"] == "imported csv" and 0.25 < c["step"] < 0.35 for c in steps_found)
    assert run_scope("history", "--check", db=db).returncode == 1


def test_a_history_csv_without_dates_keeps_the_files_order(tmp_path):
    db, csv = tmp_path / "site.db", tmp_path / "h.csv"
    long_csv(csv, nights=6, step_from=4, started=False)
    assert run_scope("import", csv, db=db).returncode == 0
    labels = [r["label"] for r in Store(db).runs()]
    assert labels == [f"night{n}" for n in range(1, 7)]


@pytest.mark.parametrize(
    "text,word",
    [
        ("run,size,time_us,colour\nn1,8,1.5,red\n", "unknown column 'colour'"),
        ("run,launch,size\nn1,1,8\n", "no column 'time_us'"),
        ("run,launch,size,time_us\nn1,0,8,1.5\n", "launch '0'"),
        ("run,started_utc,size,time_us\nn1,yesterday,8,1.5\n", "not YYYY-MM-DDTHH:MM:SSZ"),
        ("run,launch,size,time_us\nn1,1,8,1.5\nn1,1,8,1.6\n", "given twice"),
        ("run,size,time_us\nn1,8,-1\n", "not a positive"),
        ("run,test,size,time_us\nn1,Bad Name,8,1.5\n", "not LEVEL.NAME"),
        ("run,size,time_us\nn1,8\n", "2 fields"),
    ],
)
def test_a_hostile_history_csv_is_refused_whole(tmp_path, text, word):
    db, csv = tmp_path / "h.db", tmp_path / "h.csv"
    csv.write_text(text)
    p = run_scope("import", csv, db=db)
    assert p.returncode == 2 and word in p.stderr and len(p.stderr.strip().splitlines()) == 1, p.stderr
    assert not db.exists() or Store(db).runs() == []


PERFLOG_HEAD = (
    "result|job_completion_time|descr|environ|jobid|name|partition|lat_value|lat_unit|lat_ref|lat_lower_thres|"
    "lat_upper_thres|bw_value|bw_unit|bw_ref|bw_lower_thres|bw_upper_thres|system"
)


def perflog(path, values, result="pass") -> None:
    """A ReFrame 4 perflog written by hand, in its default format: a job a line."""
    rows = [PERFLOG_HEAD]
    for n, v in enumerate(values, 1):
        rows.append(f"{result}|2026-03-{n:02d}T02:00:00||gnu|{1000 + n}|OsuLatency|cpu|{v}|us|0|None|None|"
                    f"9000|MB/s|0|None|None|daint")  # fmt: skip
    path.write_text("\n".join(rows) + "\n")


def test_a_reframe_perflog_is_a_history(tmp_path):
    """Eight jobs, the latency 40 % up from the fifth: eight runs of origin reframe, one test in
    µs, the bandwidth (a rate) named and left out, and the step found at the fifth."""
    log, db = tmp_path / "OsuLatency.log", tmp_path / "rf.db"
    perflog(log, [2.00, 2.02, 1.99, 2.01, 2.81, 2.79, 2.80, 2.82])
    p = run_scope("import", log, db=db)
    assert p.returncode == 0 and "imported 8 ReFrame jobs (reframe.osulatency.lat)" in p.stdout, p.stderr
    assert "left out osulatency.bw in MB/s (not a time)" in p.stderr
    runs = Store(db).runs()
    assert [r["label"] for r in runs][:1] == ["daint:cpu gnu job 1001"] and runs[4][
        "started_utc"
    ] == "2026-03-05T02:00:00Z"
    doc = json.loads(run_scope("history", "--json", db=db).stdout)
    (c,) = [c for c in doc["changes"] if c["kind"] == "step"]
    assert c["run"] == 5 and c["series_kind"] == "imported reframe" and 0.35 < c["step"] < 0.45
    perflog(log, [2.0], result="fail")
    p = run_scope("import", log, db=tmp_path / "none.db")
    assert p.returncode == 2 and "no job that passed" in p.stderr


def test_the_hubs_ten_nightly_imports_show_their_step():
    """The hub's cluster history (its figures only: no launches, no interval for an import):
    ten nightly OSU imports, the latency 30 % up from night 5, beside a quiet bandwidth and
    allreduce: the step is found at night 5 in its series, not lost among the cluster's."""
    rng = np.random.default_rng(11)
    history = []
    for n in range(1, 11):
        lat = 1.6 * (1.3 if n >= 5 else 1.0) * rng.normal(1, 0.01)
        row = {"id": n, "started_utc": f"2026-04-{n:02d}T02:00:00Z", "provenance": {"MPI": "x"}}
        row.update(latency=lat, bandwidth=9000 * rng.normal(1, 0.01), allreduce=3.0 * rng.normal(1, 0.01))
        row.update({f"{f}_{b}": None for f in ("latency", "bandwidth", "allreduce") for b in ("lo", "hi")})
        history.append(row)
    found = [c for c in cluster_changes({"history": history}) if c["kind"] == "step"]
    assert [(c["figure"], c["run"]) for c in found] == [("latency", 5)] and 0.25 < found[0]["step"] < 0.35


def test_an_alarm_after_a_step_does_not_hide_the_step_from_the_check():
    """A +20 % step at the fifth of ten nights, then a newest run 10 % above that: --check at 15 %
    fails on the step, which the alarm after it (10 %) does not undo."""
    s = launched([10.0] * 4 + [12.0] * 5 + [13.2], seed=12)
    found = detect([s])
    assert {c.kind for c in found} >= {"step", "alarm"}
    assert [c.kind for c in check(found, 0.15)] == ["step"]
