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
