"""What HPC sites install and run SCOPE with (issue 30): the Spack recipe agrees with
pyproject.toml, and the ReFrame test runs SCOPE and reports its figures as performance variables."""

import ast
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from scope.version import __version__
from tests.conftest import ROOT

tomllib = pytest.importorskip("tomllib")  # Python 3.11's; the recipe check needs no more

SPACK = ROOT / "contrib" / "spack" / "package.py"
REFRAME = ROOT / "contrib" / "reframe" / "scope_baseline.py"


def spack_calls(name: str) -> list[ast.Call]:
    tree = ast.parse(SPACK.read_text())
    return [n for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "id", None) == name]


@pytest.mark.unit
def test_the_spack_recipe_has_pyproject_s_version_and_dependencies():
    versions = [c.args[0].value for c in spack_calls("version")]
    assert versions == [__version__]
    deps = {c.args[0].value: c for c in spack_calls("depends_on")}
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert f"python@{project['requires-python'].removeprefix('>=')}:" in deps
    wanted = list(project["dependencies"]) + [
        d + " [when +parquet]" for d in project["optional-dependencies"]["parquet"]
    ]
    for req in wanted:
        name, low = re.fullmatch(r"([A-Za-z0-9_.-]+)>=([0-9.]+)( \[when \+parquet\])?", req).group(1, 2)
        spec = f"py-{name.lower().replace('_', '-')}@{low}:"
        assert spec in deps, (req, sorted(deps))
        when = next((k.value.value for k in deps[spec].keywords if k.arg == "when"), None)
        assert when == ("+parquet" if "parquet" in req else None), req
    assert "mpi" in deps  # the engine is built against the MPI Spack gives it


@pytest.mark.mpi
@pytest.mark.skipif(not shutil.which("reframe", path=str(Path(sys.prefix) / "bin")), reason="reframe-hpc not installed")
def test_the_reframe_check_runs_scope_and_reports_its_figures(tmp_path):
    rf = Path(sys.prefix) / "bin" / "reframe"
    short = "p2p.pingpong p2p.stream --sizes 8,1K,64K,1M --budget 0.05 --launches 1"
    p = subprocess.run(
        [str(rf), "-c", str(REFRAME), "-r", "--prefix", str(tmp_path / "rf"),
         "-S", f"scope={Path(sys.prefix) / 'bin' / 'scope'}", "-S", f"scope_args={short}"],
        capture_output=True, text=True, cwd=tmp_path, timeout=900,
    )  # fmt: skip
    assert p.returncode == 0 and "PASSED" in p.stdout, p.stdout[-3000:] + p.stderr[-2000:]
    figures = dict(re.findall(r"P: (\w+): ([0-9.e+]+) ", p.stdout))
    assert set(figures) == {"latency", "hockney_t0", "hockney_rinf", "stream_bandwidth"}
    assert all(float(v) > 0 for v in figures.values())
