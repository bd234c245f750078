"""The docs' example of adding a benchmark, done for real: one C file and one registry line in a
copy of the engine's sources, and the whole front end picks it up (list, run, show, export)."""

import csv
import io
import re
import shutil
from pathlib import Path

import pytest

from tests.conftest import ROOT, run_scope

pytestmark = pytest.mark.build  # compiles an engine from a copy of the sources


def test_the_documented_example_needs_one_file_and_one_line(tmp_path, db):
    doc = (ROOT / "docs" / "architecture.md").read_text()
    code = re.search(r"`engine/benchmarks/p2p_hello.c`:\n\n```c\n(.*?)```", doc, re.S).group(1)
    line = re.search(r"the line `(X\(p2p_hello\)) \\`", doc).group(1)
    src = tmp_path / "engine"
    shutil.copytree(ROOT / "engine", src, ignore=shutil.ignore_patterns("build"))
    (src / "benchmarks" / "p2p_hello.c").write_text(code)
    reg = (src / "registry.c").read_text()
    (src / "registry.c").write_text(reg.replace("  X(p2p_pingpong) \\\n", f"  X(p2p_pingpong) \\\n  {line} \\\n", 1))
    env = {"SCOPE_ENGINE_SRC": str(src), "SCOPE_BUILD_DIR": str(tmp_path / "build")}

    listed = run_scope("list", env=env)
    assert listed.returncode == 0, listed.stderr
    assert "p2p.hello" in listed.stdout and "one message from rank 0 to rank 1" in listed.stdout
    p = run_scope("run", "p2p.hello", "--sizes", "8,1K,64K", "--budget", "0.1", "--quiet", db=db, env=env)
    assert p.returncode == 0, p.stderr
    show = run_scope("show", db=db, env=env).stdout
    assert "p2p.hello" in show and "one-way time" in show
    rows = list(csv.DictReader(io.StringIO(run_scope("export", "1", db=db, env=env).stdout)))
    assert [r["size"] for r in rows] == ["8", "1024", "65536"]
    assert all(float(r["median"]) > 0 for r in rows)
    # the level comes from the descriptor: the report files it under point-to-point
    out = tmp_path / "r.html"
    assert run_scope("report", "-o", out, db=db, env=env).returncode == 0
    assert re.search(r"id='mpi'.*id='p2p.hello'", Path(out).read_text(), re.S)
