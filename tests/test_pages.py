"""The pages a site reads (issue 70): what the report and compare say at a glance."""

from __future__ import annotations

import json

import pytest

from tests.conftest import replay, run_scope


@pytest.mark.unit
def test_a_report_without_o_names_a_new_file_and_overwrites_no_other(tmp_path, monkeypatch):
    db = tmp_path / "r.db"
    replay("launches", db)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "scope-report.html").write_text("the baseline's report")
    p = run_scope("report", "last", db=db)
    assert p.returncode == 0 and "wrote scope-report-run-1.html" in p.stdout, p.stderr
    assert (tmp_path / "scope-report.html").read_text() == "the baseline's report"
    assert "<html" in (tmp_path / "scope-report-run-1.html").read_text()[:500].lower()


@pytest.mark.unit
def test_compare_leads_with_the_answer_naming_the_slower_side_and_the_ratio(db):
    """Two runs 1.97x apart (three launches each): the answer names B slower by 1.97x with its
    interval, and each row's interval (at its Holm step's level) agrees with its verdict."""
    from scope.store import Store
    from tests.test_compare import _synthetic_run

    s = Store(db)
    a, b = _synthetic_run(s, 2.0, 100), _synthetic_run(s, 2.0 * 1.97, 200)
    p = run_scope("compare", a, b, db=db)
    answer = [ln for ln in p.stdout.splitlines() if ln.startswith("answer: ")]
    assert p.returncode == 1 and len(answer) == 1, p.stdout
    said = answer[0]
    assert "p2p.pingpong: run 2 is 1.9" in said and "x slower than run 1 from 8 B to 1 KiB (2 of 2 points" in said
    mean = float(said.split("over 2 points ")[1].split(",")[0])
    lo, hi = (float(x) for x in said.split("95 % CI ")[1].rstrip(")").split("-"))
    assert lo <= mean <= hi and 1.85 < lo and hi < 2.1  # planted 1.97, each launch moved by ~1 %
    rows = json.loads(run_scope("compare", a, b, "--json", db=db).stdout)
    for r in rows:  # an interval clear of 1 is a p below alpha, both adjusted
        assert (r["ci_lo"] > 1) == (r["p_value"] < 0.05) and r["ci_level"] >= 0.95
        assert r["ci_lo"] <= r["ci_lo_raw"] and r["ci_hi"] >= r["ci_hi_raw"]


@pytest.mark.unit
def test_the_answer_for_imports_says_values_only():
    from scope.analysis.verdict import verdicts

    rows = [{"test": "osu.latency", "size": s, "ratio": 2.0, "verdict": "values only (no distribution)"}
            for s in (8, 64)]  # fmt: skip
    (v,) = verdicts(rows, "A (alpha)", "B (beta)")
    assert v.sentence.startswith("osu.latency: B (beta) takes 2.00x A (alpha)'s time") and "values only" in v.sentence


@pytest.mark.unit
def test_a_report_leads_with_its_warnings_and_cites_only_what_it_shows(tmp_path):
    db, page = tmp_path / "r.db", tmp_path / "r.html"
    replay("launches", db)  # p2p.pingpong in three launches: a warning or more, the MPI level only
    assert run_scope("report", "1", "-o", page, db=db).returncode == 0
    html = page.read_text()
    top = html[: html.index("<section")]
    assert "warning" in top and "each with its hint, under Provenance" in top
    refs = html[html.index("<section id='references'>") :]
    assert "Hockney (1994)" in refs and "Bailey et al. (1991)" not in refs and "McCalpin" not in refs


@pytest.mark.unit
def test_a_report_drawn_by_the_hub_says_one_run_id_and_its_cluster(tmp_path):
    from scope.hub.kept import draw_report
    from scope.store import Store
    from scope.store.bundle import dump, encode

    db = tmp_path / "r.db"
    replay("launches", db)
    html = draw_report(encode(dump(Store(db), 1)), 43, "alpha").decode()
    assert "<title>SCOPE hub: run 43 of cluster alpha</title>" in html
    assert "run 43" in html[html.index("<section id='provenance'>") :] and ">run 1<" not in html


@pytest.mark.system  # a live hub on SQLite, as test_hub.py's quick checks
def test_the_cluster_list_takes_each_figure_from_the_latest_run_that_measured_it(tmp_path, local):
    from tests.hub_server import Hub
    from tests.test_hub import token

    url = str(tmp_path / "hub.db")
    alpha = token(url, "alpha")
    _, _, bundles = local
    with Hub(url) as hub:
        for name in ("baseline", "windows"):  # the collectives' run after the baseline: it has no latency
            assert hub.push(bundles[name], alpha)[0] == 201
        (row,) = hub.get_json("/api/clusters")["clusters"]
        assert row["latest_run_id"] == 2 and row["allreduce_run"] == 2
        assert row["latency"] is not None and row["latency_run"] == 1 and row["latency_at"] == "8 B, 2 procs"
        assert b'<a href="/runs/1">run 1</a>' in hub.get("/")[1]
        # where the figures were measured: the baseline's 2 ranks on this one machine, its ping-pong within it
        assert row["nodes"] == 1 and row["latency_crossed"] is False and row["interconnect"], row
        assert b"within a node" in hub.get("/")[1]


@pytest.mark.system
def test_a_comparison_within_a_cluster_names_the_changed_control_variable(tmp_path, local):
    import gzip

    from tests.hub_server import Hub
    from tests.test_hub import token

    url = str(tmp_path / "hub.db")
    alpha = token(url, "alpha")
    _, _, bundles = local
    doc = json.loads(gzip.decompress(bundles["launches"]))
    doc["context"].setdefault("env", {})["MPIR_CVAR_CH4_CMA_ENABLE"] = "0"  # the second run: one CVAR set
    doc["run"]["started_utc"] = doc["run"]["started_utc"][:-3] + "59Z"
    changed = gzip.compress(json.dumps(doc).encode())
    with Hub(url) as hub:
        assert hub.push(bundles["launches"], alpha)[0] == 201 and hub.push(changed, alpha)[0] == 201
        answer = hub.get_json("/api/compare?a=run/1&b=run/2")
        assert answer["changed"] == {"env MPIR_CVAR_CH4_CMA_ENABLE": ["-", "0"]}, answer["changed"]
        assert answer["verdicts"] and answer["verdicts"][0]["sentence"].startswith("p2p.pingpong: ")
        page = hub.get("/compare?a=run/1&b=run/2")[1]
        assert b"What differs" in page and b"env MPIR_CVAR_CH4_CMA_ENABLE" in page


@pytest.mark.unit
def test_scope_compare_names_what_differs_in_provenance(tmp_path):
    import sqlite3

    db = tmp_path / "r.db"
    replay("launches", db)
    replay("launches", db)
    with sqlite3.connect(db) as c:
        c.execute("UPDATE runs SET context = json_set(context, '$.env.MPIR_CVAR_CH4_CMA_ENABLE', '0') WHERE id = 2")
    p = run_scope("compare", "1", "2", db=db)
    assert "differs: env MPIR_CVAR_CH4_CMA_ENABLE: - -> 0" in p.stdout, p.stdout
    assert p.stdout.index("answer: p2p.pingpong") < p.stdout.index("differs: ")


@pytest.mark.system
def test_two_clusters_are_compared_on_their_newest_runs_with_points_in_common(tmp_path, local):
    from tests.hub_server import Hub
    from tests.test_hub import token

    url = str(tmp_path / "hub.db")
    alpha, beta = token(url, "alpha"), token(url, "beta")
    _, _, bundles = local
    with Hub(url) as hub:
        for tok, name in ((alpha, "baseline"), (alpha, "windows"), (beta, "baseline")):
            assert hub.push(bundles[name], tok)[0] == 201
        answer = hub.get_json("/api/compare?a=alpha&b=beta")
        assert answer["a"]["id"] == 1 and answer["b"]["id"] == 3 and answer["rows"], answer.get("matched")
        assert answer["matched"].startswith("matched on run 1 and run 3")


@pytest.mark.unit
def test_a_heat_maps_text_reads_on_its_cell_and_an_import_names_no_process_count():
    from scope.hub.pages import heat_maps
    from scope.views.svg import colour, ink

    assert ink(1.0, 1.0, 100.0) == "#1d2330" and colour(1.0, 1.0, 100.0) == "#eff3ff"  # light cell, dark text
    assert ink(100.0, 1.0, 100.0) == "#ffffff" and colour(100.0, 1.0, 100.0) == "#08306b"  # dark cell, white text
    (h,) = heat_maps([{"collectives": [["coll.allreduce", 0, 8, 3.0], ["coll.allreduce", 0, 1024, 30.0]]}])
    assert h["rows"][0]["procs"] == "not given" and [c["ink"] for c in h["rows"][0]["cells"]] == ["#1d2330", "#ffffff"]


@pytest.mark.unit
@pytest.mark.parametrize("lo,hi,log", [(0.9, 1.1, False), (0.5, 3.5, False), (0.0, 1e6, False), (1.0, 10.0, True),
                                       (0.8, 150.0, True), (3.0, 4.0, True), (1e-3, 1e4, True)])  # fmt: skip
def test_every_axis_has_four_tick_labels_inside_it(lo, hi, log):
    from scope.views.svg import _ticks

    inside = [t for t in _ticks(lo, hi, log) if lo <= t <= hi]
    assert len(inside) >= 4, inside


@pytest.mark.unit
def test_a_clusters_badge_is_its_newest_change_for_the_worse_that_holds():
    from scope.hub.runs import regression

    step = {"kind": "step", "figure": "latency", "step": 0.277, "run": 5}
    better_bw = {"kind": "step", "figure": "bandwidth", "step": 0.30, "run": 7}
    worse_bw = {"kind": "alarm", "figure": "bandwidth", "step": -0.20, "run": 9}
    gone = {"kind": "temporary", "figure": "allreduce", "step": 1.0, "run": 8}
    assert regression([]) is None and regression([better_bw, gone]) is None
    assert regression([step, better_bw]) == "latency +28 % since run 5 (a step)"
    assert regression([step, worse_bw]) == "bandwidth -20 % since run 9 (slower than the history allows)"


@pytest.mark.unit
def test_an_events_report_has_no_empty_summary(tmp_path):
    from tests.test_clock_library import known

    prefix, db, page = tmp_path / "ev", tmp_path / "e.db", tmp_path / "e.html"
    known(prefix)
    assert run_scope("import", prefix, "--format", "events", db=db).returncode == 0
    assert run_scope("report", "last", "-o", page, db=db).returncode == 0
    html = page.read_text()
    assert "<section id='summary'>" not in html and "[EVENTS]" in html


@pytest.mark.unit
def test_an_outlier_is_marked_on_the_edge_not_stretching_the_axis():
    """One run 9.5x the others: the axis is read on the other seven (ticks within 0.9-1.1), the
    outlier drawn as a marked triangle with its value; a step between two levels has none."""
    import re

    from scope.analysis.headline import outlying
    from scope.views import svg

    values = [1.0, 1.02, 0.99, 1.01, 9.5, 1.0, 1.03, 0.98]
    assert outlying(values) == {4} and outlying([6.8] * 6 + [8.5] * 6) == set()
    assert outlying([1.0, 1.0, 1.0, 1.0]) == set()  # four runs: too few to call one out
    drawn = svg.series([(f"run {i}", v, v * 0.98, v * 1.02) for i, v in enumerate(values)], "t", "µs", (), {4})
    ticks = [float(t) for t in re.findall(r'class="tick-y"[^>]*>([0-9.]+)<', drawn)]
    assert len(ticks) >= 4 and max(ticks) < 1.2, ticks
    assert drawn.count('class="outlier"') == 1 and "<title>outlier: 9.5</title>" in drawn


@pytest.mark.unit
def test_a_list_figure_carries_its_trend_against_its_own_runs():
    from scope.analysis.headline import trend
    from scope.views import svg

    assert trend([10.0, 10.0, 12.0]) is None  # two earlier runs: no trend said
    assert trend([10.0, 11.0, 9.0, 10.0, 12.5]) == pytest.approx(0.25)  # against the median of the four before
    line = svg.spark([1.0, 2.0, 1.5], "latency in its last 3 runs (µs)")
    assert 'class="spark"' in line and 'points="2.0,18.0 42.0,2.0 82.0,10.0"' in line


@pytest.mark.unit
def test_report_figures_over_one_process_count_and_phase_legends(monkeypatch):
    """Issue 70: a collective measured at one process count is drawn against message size (an
    axis from 1.9 to 2.1 said nothing), and the phases' legend sits below its bars."""
    from scope.model import Point
    from scope.views import plots

    rec = {"timing": "window", "window": {"window_us": 50.0, "repetitions": 2},
           "per_rank": {"start_us": [[0.1, 0.1]] * 2, "end_us": [[5.0, 6.0]] * 2}}  # fmt: skip
    fields = dict.fromkeys(["batch", "ops_per_iter", "bytes_per_op", "min", "mean", "sd", "max", "p5", "p25", "p75",
                            "p95", "p99", "ci_lo", "ci_hi", "ci_rel", "bw_median", "warmup_iterations",
                            "warmup_converged", "stop", "seconds", "note"])  # fmt: skip
    pts = [Point(seq=k, test="coll.bcast", params={"procs": 2}, size=s, unit="us", count=2, median=2.0 + s / 1e3,
                 load_record=lambda _p: rec, **fields) for k, s in enumerate((8, 1024, 65536))]  # fmt: skip
    drawn = []
    monkeypatch.setattr(plots, "svg_img", lambda fig, alt: drawn.append(fig) or "<img>")
    assert plots.collective_figure("coll.bcast", "run 1: x", pts) == "<img>"
    ax = drawn[0].axes[0]
    assert ax.get_xscale() == "log" and ax.get_xlabel() == "message size" and "2 processes" in ax.get_title()
