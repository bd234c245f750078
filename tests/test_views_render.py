"""Views render facts (issue 42): no module under views/ computes a statistic.  import-linter
keeps scipy and the statistics module out of views/ (pyproject.toml); numpy stays for drawing
(arrays of points, a log grid, histogram bins), so this test reads each view's source and
refuses numpy's statistics and a call of an analysis function that derives a figure."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

VIEWS = Path(__file__).resolve().parents[1] / "src" / "scope" / "views"
# numpy's reductions that make a figure of samples: a view reads the figure from the facts
STATISTICS = {"median", "mean", "average", "std", "var", "percentile", "quantile", "nanmedian", "nanmean", "histogram"}
# the analysis functions a view may call: formatting and verdict text, no figure derived
ALLOWED_ANALYSIS = {"cluster_text", "pair_kinds", "unphysical", "datasheet", "module_text"}


def calls(tree: ast.AST):
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name):
                yield f.value.id, f.attr, node.lineno
            elif isinstance(f, ast.Name):
                yield None, f.id, node.lineno


def offences(source: str) -> list[str]:
    tree = ast.parse(source)
    analysis = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("scope.analysis"):
            analysis |= {a.asname or a.name for a in node.names if a.name[:1].islower()}
    bad = []
    for owner, name, line in calls(tree):
        if owner in ("np", "numpy") and name in STATISTICS:
            bad.append(f"line {line}: np.{name}")
        elif owner is None and name in analysis and name not in ALLOWED_ANALYSIS:
            bad.append(f"line {line}: {name}() from scope.analysis")
    return bad


@pytest.mark.unit
def test_no_view_computes_a_statistic():
    found = {p.name: offences(p.read_text()) for p in sorted(VIEWS.glob("*.py"))}
    assert {k: v for k, v in found.items() if v} == {}


@pytest.mark.unit
def test_the_rule_finds_what_it_forbids():
    planted = (
        "import numpy as np\nfrom scope.analysis.noise import next_interval\n"
        "def row(p):\n    return np.median(p.samples), next_interval(p, None)\n"
    )
    assert offences(planted) == ["line 4: np.median", "line 4: next_interval() from scope.analysis"]


@pytest.mark.unit
def test_a_table_wider_than_the_terminal_wraps_its_headers_not_its_data():
    from scope.views.fmt import COLUMNS, table

    heads = ["a long header that says much", "another header with many words in it", "third"]
    rows = [["x" * 34, "y" * 34, "z" * 34]]  # 106 columns with the separators: past COLUMNS
    lines = table(heads, rows).splitlines()
    assert lines[-1] == f"{'x' * 34}  {'y' * 34}  {'z' * 34}"  # the data whole, on one line
    assert len(lines) == 4 and all(len(x) <= 106 for x in lines)  # a header on two lines, none wider
    assert lines[0].strip() == "another header with many words in" and lines[1].split()[-2:] == ["it", "third"]
    assert COLUMNS == 100
    narrow = table(["n", "v"], [["1", "2"]])
    assert narrow.splitlines()[0] == "n  v"  # within the width: as before
    # a column with no header and nothing in it (sim check's reason where every point is within
    # its tolerance) stays: it was wrapped at width 0, an internal error
    empty = table([*heads, ""], [[*rows[0], ""]]).splitlines()
    assert empty[-1] == lines[-1] and len(empty) == len(lines)


@pytest.mark.unit
def test_the_baseline_summary_fits_100_columns_and_names_no_shared_parameter(tmp_path):
    from scope.fetch.facts import derive_stored
    from scope.store import Store
    from scope.views.summary import summary
    from tests.conftest import replay

    db = tmp_path / "b.db"
    text = summary(derive_stored(Store(db), replay("baseline", db)))
    body = [x for x in text.splitlines() if x and not x.startswith(" ")]
    assert len(body) >= 17 and max(map(len, body)) <= 100
    assert "series" not in body[0]  # one series a test: no column of names
    assert "  settings:" in text and "    p2p.pingpong: blocking=yes mode=standard" in text


# A page of five figures, made as a report makes its page (plots.svg_img), drawn at once, then
# together on 4 workers, then together on 1 core: in a fresh interpreter, as `scope report`
# draws (the suite's process may hold a thread or pyarrow, and would then draw alone).
SIDE_BY_SIDE = """
import base64, json, multiprocessing, re
from scope.views import drawing, plots

def page():
    plt = plots.pyplot()
    imgs = []
    for k in range(5):
        fig, ax = plt.subplots(figsize=(2, 2))
        ax.plot([0, 1], [0, k])
        ax.set_title(f"figure {k}")
        imgs.append(plots.svg_img(fig, f"figure {k}"))
    return "<p>" + "</p><p>".join(imgs) + "</p>"

at_once = page()
forked = []
real = multiprocessing.get_context
drawing.multiprocessing.get_context = lambda m: forked.append(m) or real(m)
drawing.usable_cores = lambda: 4
side = drawing.together(page)
svgs = [base64.b64decode(s).decode() for s in re.findall(r'base64,([^"]+)', side)]
titles = [re.search(r">figure (\\d)<", s).group(1) for s in svgs]
drawing.usable_cores = lambda: 1
alone = drawing.together(page)
print(json.dumps({"forked": forked, "same": side == at_once, "placeholder": "scope-figure" in side,
                  "titles": titles, "alone_same": alone == at_once, "open": plots.pyplot().get_fignums()}))
"""


@pytest.mark.unit
def test_figures_drawn_side_by_side_make_the_page_drawn_one_at_a_time():
    """views/drawing.py: a report's figures, drawn in forked workers once its page is made, give
    the very page that drawing each at once gives, every figure in its place; with one core
    they are drawn in this process; none is left open."""
    import json
    import subprocess
    import sys

    p = subprocess.run([sys.executable, "-c", SIDE_BY_SIDE], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    got = json.loads(p.stdout)
    assert got["forked"] == ["fork"] and got["same"] and not got["placeholder"]
    assert got["titles"] == ["0", "1", "2", "3", "4"] and got["alone_same"] and got["open"] == []


@pytest.mark.unit
def test_a_process_with_another_thread_draws_its_figures_itself():
    """A fork copies the calling thread alone: a lock another thread holds stays held in the
    copy, so with another Python thread alive the figures are drawn in this process."""
    import threading

    from scope.views import drawing

    release = threading.Event()
    other = threading.Thread(target=release.wait)
    other.start()
    try:
        assert drawing._forkable() is False
    finally:
        release.set()
        other.join()


@pytest.mark.unit
def test_a_collective_figure_of_thousands_of_ranks_draws_an_even_spread_of_them(monkeypatch):
    """4,096 ranks' own times: the figure draws 64 boxes, evenly spread over the ranks and
    labelled with their ranks, and says so (16,384 boxes took a report 110 s and 2 GB: issue 55)."""
    from scope.model import Point
    from scope.views import plots

    n, reps = 4096, 20
    ends = [[40.0 + r % 7] * reps for r in range(n)]
    rec = {"timing": "window", "window": {"window_us": 50.0, "repetitions": reps},
           "per_rank": {"start_us": [[0.1] * reps] * n, "end_us": ends}}  # fmt: skip
    fields = dict.fromkeys(["batch", "ops_per_iter", "bytes_per_op", "min", "mean", "sd", "max", "p5", "p25", "p75",
                            "p95", "p99", "ci_lo", "ci_hi", "ci_rel", "bw_median", "warmup_iterations",
                            "warmup_converged", "stop", "seconds", "note"])  # fmt: skip
    p = Point(seq=0, test="coll.allreduce", params={"procs": n}, size=8, unit="us", count=reps, median=42.0,
              load_record=lambda _p: rec, **fields)  # fmt: skip
    drawn = []
    monkeypatch.setattr(plots, "svg_img", lambda fig, alt: drawn.append(fig) or "<img>")
    assert plots.collective_figure("coll.allreduce", "run 1: x", [p]) == "<img>"
    ax = drawn[0].axes[1]
    labels = [t.get_text() for t in ax.get_xticklabels()]
    assert len(labels) == 64 and labels[0] == "0" and labels[-1] == "4095"
    assert ax.get_xlabel() == "rank (64 of 4,096, evenly spread)"
