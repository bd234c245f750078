"""The report as a person sees it: opened in headless Chromium, screenshotted and checked."""

import base64
import html
import os
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from scope.store import Store
from tests.conftest import run_scope

DATA = Path(__file__).parent / "data"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
]


def chromium(tmp_path, *args):
    if not CHROMIUM:
        if os.environ.get("CI"):
            pytest.fail("chromium is required in CI (.ci/run installs it)")
        pytest.skip("chromium not installed")
    p = subprocess.run(
        [CHROMIUM, *FLAGS, f"--user-data-dir={tmp_path / 'profile'}", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )
    return p.stdout


@pytest.fixture(scope="session")  # session: test_api_and_parquet, which uses it too, runs last
def report(tmp_path_factory, engine):
    d = tmp_path_factory.mktemp("report")
    db = d / "r.db"
    p = run_scope(
        "run",
        "p2p.pingpong",
        "p2p.stream",
        "p2p.loggp",
        "--sizes",
        "0,64,1K,16K,256K",
        "-p",
        "pattern=rtt,burst,delayed",
        "--budget",
        "0.2",
        "--quiet",
        "--label",
        "here",
        db=db,
    )
    assert p.returncode == 0, p.stderr
    assert run_scope("import", DATA / "osu_latency.txt", "--label", "old", db=db).returncode == 0
    out = d / "report.html"
    r = run_scope("report", "1", "2", "-o", out, db=db)
    assert r.returncode == 0, r.stderr
    return out, db


@pytest.mark.mpi
def test_sections_and_plots_are_in_the_file(report):
    out, _ = report
    html = out.read_text()
    for section in ("id='summary'", "id='models'", "id='mpi'", "id='provenance'"):
        assert section in html
    assert "run 1 (here)" in html and "run 2 (old) [OSU]" in html
    assert "LogGP (PRTT, n=16)" in html and "MPICH" in html
    assert "http://" not in html.replace("http://www.w3.org", "") and "https://" not in html  # no network
    imgs = re.findall(r'src="data:image/svg\+xml;base64,([^"]+)"', html)
    assert len(imgs) >= 6
    for b64 in imgs:
        svg = base64.b64decode(b64).decode()
        assert svg.count("<path") > 10  # axes, lines and markers: a non-empty plot


@pytest.mark.mpi
def test_report_in_a_browser(report, tmp_path):
    out, _ = report
    dom = chromium(tmp_path, "--virtual-time-budget=5000", "--dump-dom", out.as_uri())
    body = re.search(r"<body[^>]*>", dom).group(0)
    assert 'data-images-ok="yes"' in body, body
    assert int(re.search(r'data-image-count="(\d+)"', body).group(1)) >= 6
    png = tmp_path / "shot.png"
    chromium(tmp_path, "--window-size=1280,2000", f"--screenshot={png}", out.as_uri())
    import matplotlib.image as mpimg

    img = mpimg.imread(png)
    assert img.shape[0] >= 1000 and img.shape[1] >= 1200
    # a rendered page, not a blank one: many distinct colours and ink in both halves
    flat = (img[..., :3] * 255).astype(np.uint8).reshape(-1, 3)
    assert len(np.unique(flat[::7], axis=0)) > 50
    for half in (img[: img.shape[0] // 2], img[img.shape[0] // 2 :]):
        assert (half[..., :3].mean(axis=2) < 0.5).mean() > 0.005


@pytest.mark.mpi
def test_the_browser_check_catches_a_broken_image(report, tmp_path):
    out, _ = report
    broken = tmp_path / "broken.html"
    broken.write_text(out.read_text().replace("data:image/svg+xml;base64,", "data:image/svg+xml;base64,AAAA", 1))
    dom = chromium(tmp_path, "--virtual-time-budget=5000", "--dump-dom", broken.as_uri())
    assert 'data-images-ok="no"' in dom


@pytest.mark.mpi
def test_report_errors(report, tmp_path):
    _, db = report
    p = run_scope("report", "42", "-o", tmp_path / "x.html", db=db)
    assert p.returncode == 2 and "no run 42" in p.stderr
    p = run_scope("report", "1", "-o", tmp_path / "no" / "dir" / "x.html", db=db)
    assert p.returncode == 2 and "does not exist" in p.stderr
    bad = tmp_path / "bad.db"
    bad.write_bytes(b"x" * 5000)
    p = run_scope("report", "1", db=bad)
    assert p.returncode == 3 and "corrupt" in p.stderr


@pytest.mark.mpi
@pytest.mark.loads_pyarrow
def test_api_and_parquet(report, tmp_path):
    import pandas as pd

    import scope

    _, db = report
    res = scope.connect(db)
    runs = res.runs()
    assert list(runs["origin"]) == ["scope", "osu"]
    pts = res.points(run=1)
    assert {"test", "size", "median", "ci_lo", "mode", "pattern"} <= set(pts.columns)
    row = pts[(pts.test == "p2p.pingpong") & (pts["size"] == 64)].iloc[0]
    x = res.samples(1, "p2p.pingpong", 64)
    assert len(x) == row["count"] and np.median(x) == pytest.approx(row["median"])
    out = tmp_path / "run.parquet"
    assert run_scope("export", "1", "--format", "parquet", "-o", out, db=db).returncode == 0
    back = pd.read_parquet(out)
    assert len(back) == len(pts) and back["median"].tolist() == pytest.approx(pts["median"].tolist())
    p = run_scope("export", "1", "--format", "parquet", db=db)
    assert p.returncode == 2 and "-o" in p.stderr


@pytest.mark.unit
def test_switch_points_are_marked(tmp_path):
    """A synthetic curve with an eager/rendezvous switch between 4 and 8 KiB."""
    from scope.fetch.facts import derive_stored
    from scope.views.report import build

    db = Store(tmp_path / "s.db")
    rid = db.begin_run(["synthetic"], "test", 2)
    rng = np.random.default_rng(3)
    for i, n in enumerate([0] + [2**k for k in range(0, 21)]):
        med = (1.0 + n / 3000) if n <= 4096 else (6.0 + n / 9000)
        x = rng.lognormal(np.log(med), 0.01, 200)
        db.add_point(
            rid,
            {
                "type": "point",
                "test": "p2p.pingpong",
                "index": i,
                "params": {"size": n},
                "unit": "us",
                "count": 200,
                "bytes_per_op": n,
                "stats": {"median": float(np.median(x))},
                "samples": x.tolist(),
            },
        )
    html = build([derive_stored(db, rid)], tmp_path / "s.html").read_text()
    svg = "".join(base64.b64decode(b).decode() for b in re.findall(r'base64,([^"]+)"', html))
    assert "switch 4 KiB→8 KiB" in svg
    assert "segment 0 B .. 4 KiB" in html and "segment 8 KiB .. 1 MiB" in html


@pytest.mark.mpi
def test_collectives_in_the_report(engine, tmp_path):
    db = tmp_path / "c.db"
    p = run_scope(
        "run",
        "coll.allreduce",
        "-n",
        "4",
        "--procs",
        "2,4",
        "--sizes",
        "8,1K",
        "--budget",
        "0.05",
        "--min-count",
        "10",
        "--quiet",
        db=db,
    )
    assert p.returncode == 0, p.stderr
    out = tmp_path / "c.html"
    assert run_scope("report", "-o", out, db=db).returncode == 0
    html = out.read_text()
    svg = "".join(base64.b64decode(b).decode() for b in re.findall(r'base64,([^"]+)"', html))
    assert "id='collectives'" in html and "against process count" in svg and "each rank's own time" in svg
    # every window- or barrier-timed point says how many repetitions were left out
    run = Store(db).load_run(1)
    for x in run.points:
        assert f"{x.window.invalid} / {x.window.repetitions}" in html


def _point(test: str, **given):
    from dataclasses import fields

    from scope.model import Point

    rec = {"extra": given.pop("extra", {})}
    return Point(
        **{f.name: None for f in fields(Point)} | {"test": test, "params": {}} | given | {"load_record": lambda p: rec}
    )


@pytest.mark.unit
def test_a_rate_is_shown_only_where_one_is_defined_in_the_unit_that_fits():
    """A barrier moves no bytes and counts no work: no rate ("-", not "0 MB/s"); node.dgemm
    counts flops: GFLOP/s (2 n^3 = 2e9 flop in 1000 us is 2,000 GFLOP/s); a stream: MB/s at
    the size it peaks."""
    from scope.analysis.facts import SeriesFacts
    from scope.model import Series, TestInfo
    from scope.views.fmt import peak_text

    def facts(*pts):
        return SeriesFacts(Series(pts[0].test, {}, list(pts), TestInfo.unknown(pts[0].test)), None, None)

    barrier = facts(_point("coll.barrier", median=2.0, bw_median=None))
    assert barrier.peak_rate is None and peak_text(barrier) == "-"
    dgemm = facts(_point("node.dgemm", median=1000.0, bw_median=0.0, extra={"flop": 2e9}))
    assert dgemm.peak_rate.unit == "GFLOP/s" and dgemm.peak_rate.value == pytest.approx(2000.0)
    assert peak_text(dgemm) == "2,000 GFLOP/s"
    stream = facts(_point("p2p.stream", size=1024, median=1.0, bw_median=1024.0),
                   _point("p2p.stream", size=4096, median=2.0, bw_median=2048.0))  # fmt: skip
    assert peak_text(stream) == "2,048 MB/s @ 4 KiB"
    # the report's summary row renders the same fact (it once printed "0 MB/s" for both)
    from types import SimpleNamespace

    from scope.views.report import TestBlock, _summary_rows

    run = SimpleNamespace(title=lambda: "run 1")
    rows = _summary_rows([TestBlock("coll.barrier", "", [(run, barrier)]), TestBlock("node.dgemm", "", [(run, dgemm)])])
    assert [r["peak"] for r in rows] == ["-", "2,000 GFLOP/s"]


@pytest.mark.unit
def test_every_csv_row_says_what_its_interval_covers(db, tmp_path):
    """A run of one launch: its intervals cover that launch's samples only, and each row says
    so; an import: no interval at all."""
    import csv
    import io

    from tests.conftest import replay

    replay("stream", db)  # one launch (tests/fixtures/record.py)
    rows = list(csv.DictReader(io.StringIO(run_scope("export", "1", db=db).stdout)))
    assert rows and {r["ci_covers"] for r in rows} == {"this launch's samples only"}
    data = tmp_path / "t.csv"
    data.write_text("size,time_us\n8,1.5\n1024,2.5\n")
    assert run_scope("import", data, db=db).returncode == 0
    rows = list(csv.DictReader(io.StringIO(run_scope("export", "last", db=db).stdout)))
    assert {r["ci_covers"] for r in rows} == {"no interval: one average per size (imported)"}


@pytest.mark.unit
def test_plots_show_each_measured_size_plain_axes_whole_tails_and_only_a_fit_that_fits(tmp_path):
    """One size is a tick with room around it; a bandwidth axis has no offset text; a Hockney
    line that misses a point by 105 % is not drawn (the legend says why); a histogram keeps
    every sample, its tail too."""
    from types import SimpleNamespace

    from scope.analysis.hockney import HockneyFit
    from scope.views import plots

    plt = plots.pyplot()
    fig, ax = plt.subplots()
    ax.set_xscale("log", base=2)
    plots.measured_ticks(ax.xaxis, [1024.0])
    assert list(ax.get_xticks()) == [1024.0] and ax.get_xlim() == pytest.approx((512, 2048))
    plots.no_offset(ax.yaxis)
    assert ax.yaxis.get_major_formatter().get_useOffset() is False
    plt.close(fig)

    measured = ((8, 1.0), (1024, 1.2), (65536, 9.0))
    pts = [SimpleNamespace(size=s, median=m, ci_lo=m, ci_hi=m, bytes_per_op=s, bandwidth_at=lambda v, s=s: s / v,
                           bandwidth_interval=(s / m, s / m)) for s, m in measured]  # fmt: skip
    bad = HockneyFit(1.0, 1e4, 1e4, 3, residuals=[0.1, 1.05, 0.2], sizes=[8, 1024, 65536])
    facts = SimpleNamespace(series=SimpleNamespace(points=pts), hockney=bad, piecewise=None,
                            residuals=dict(zip(bad.sizes, bad.residuals)))  # fmt: skip
    fig, (ax_t, ax_b) = plt.subplots(1, 2)
    plots._time_curve(ax_t, ax_b, "C0", "run 1", facts)
    labels = [ln.get_label() for ln in ax_t.get_lines()]
    assert not any(lb.startswith("Hockney t0") for lb in labels)
    assert "Hockney fit not drawn: off by up to 105 % at a size" in labels
    plt.close(fig)

    x = np.concatenate([np.full(990, 1.0), np.full(10, 150.0)])  # a tail 150x the median
    point = SimpleNamespace(size=8, median=1.0, samples=list(x))
    html = plots.distribution_figure("p2p.pingpong", "run 1", [point])
    assert html.startswith('<img class="plot"')
    fig, ax = plt.subplots()
    counts, _, _ = ax.hist(x, bins=np.geomspace(x.min(), x.max() * 1.0001, 60))
    assert counts.sum() == len(x)  # no sample cut
    plt.close(fig)


@pytest.mark.mpi
def test_the_report_fits_a_phone_and_cites_published_work(report, tmp_path):
    out, _ = report
    html = out.read_text()
    assert "§" not in html and "ParaStation2" not in html
    assert "Hockney (1994). The communication challenge for MPP" in html and "id='references'" in html
    for width in (1280, 375):
        dom = chromium(tmp_path, f"--window-size={width},900", "--virtual-time-budget=5000", "--dump-dom", out.as_uri())
        body = re.search(r"<body[^>]*>", dom).group(0)
        assert 'data-overflow="no"' in body, (width, body)
        # no cell, heading or paragraph whose text runs past its box (issue 42)
        assert 'data-cut="0"' in body, (width, body)


@pytest.mark.unit
def test_what_ran_where_it_differs_from_what_was_asked_is_shown_and_reported(db, tmp_path):
    """A point's note (node.stream's arrays here; a reduced window in the MPI streams) is
    printed under its table by show and listed under its test in the report."""
    from tests.conftest import FIXTURES

    assert run_scope("import", FIXTURES / "stream", db=db).returncode == 0
    (pt,) = [p for p in Store(db).load_run(1).points if p.note and p.params.get("procs") == 2]
    assert "3 arrays of 64 MiB each per rank (STREAM's rule per node" in pt.note
    assert f"{pt.note}" in run_scope("show", "1", db=db).stdout
    out = tmp_path / "r.html"
    assert run_scope("report", "1", "-o", out, db=db).returncode == 0
    assert pt.note in html.unescape(out.read_text())


@pytest.mark.unit
def test_the_baseline_report_names_series_by_what_differs_and_nothing_is_cut(tmp_path, baseline_report):
    """Issue 42: a series is named by the parameters that differ between its test's series, the
    rest said once; no legend larger than its plot, and in Chromium at 1280 and 375 px no page
    overflow and no cell, heading or paragraph whose text runs past its box.  On the recorded
    baseline module (tests/fixtures/baseline)."""
    from scope.fetch.facts import derive_stored

    db, out, drawn = baseline_report
    facts = derive_stored(Store(db), 1)
    assert len(drawn) >= 10 and [d for d in drawn if d[1]] == []
    assert [(alt, clash) for alt, _, clash in drawn if clash] == []  # issue 70: "64 KiB512 KiB"
    page = out.read_text()
    rows = re.findall(r"<td class=l title='([^']*)'>([^<]*)</td>", page)
    assert len(rows) == len(facts.series)
    # each test has one series here: no name needs a parameter, and the settings say them once
    assert {name for _, name in rows} == {"-"}
    assert "Settings of each test" in page and "mode=standard" in page
    for width in (1280, 375):
        dom = chromium(tmp_path, f"--window-size={width},900", "--virtual-time-budget=5000", "--dump-dom", out.as_uri())
        body = re.search(r"<body[^>]*>", dom).group(0)
        assert 'data-overflow="no"' in body and 'data-cut="0"' in body, (width, body)


@pytest.mark.unit
def test_the_screening_report_in_a_browser(tmp_path):
    """Issue 43: the recorded screen of 4 testbed hosts, one throttled (tests/fixtures/
    screen-throttled): the flagged list first, the host matrix's heat map and the per-host bars
    drawn, every image loads, and nothing overflows or is cut at 1280 and 375 px."""
    from scope.fetch.facts import derive_stored
    from scope.views.report import build
    from tests.conftest import replay

    db = tmp_path / "s.db"
    facts = derive_stored(Store(db), replay("screen-throttled", db))
    out = build([facts], tmp_path / "s.html")
    page = html.unescape(out.read_text())
    first = page.index("Flagged, all screens together")
    assert "host scope-h2 (node.stream" in page[first : first + 600]
    assert first < page.index("host matrix and pair histogram") and "node.stream per host" in page
    for width in (1280, 375):
        dom = chromium(tmp_path, f"--window-size={width},900", "--virtual-time-budget=5000", "--dump-dom", out.as_uri())
        body = re.search(r"<body[^>]*>", dom).group(0)
        assert 'data-images-ok="yes"' in body and 'data-overflow="no"' in body and 'data-cut="0"' in body, (width, body)
