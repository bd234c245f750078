"""ReFrame itself (issue 68): its perflogs, written by ReFrame from PyPI running a small
performance test on its local scheduler, imported as SCOPE runs."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from scope.store import Store
from tests.conftest import run_scope

pytestmark = pytest.mark.system  # runs ReFrame's own front end and its local scheduler, ~5 s


def test_reframe_itself_writes_what_scope_imports(tmp_path):
    """ReFrame (from PyPI) runs a small performance test twice on its local scheduler, printing
    a latency it is given; its perflog is imported as two runs holding those values."""
    reframe = Path(sys.executable).parent / "reframe"
    if not reframe.exists():
        pytest.skip("ReFrame is not installed (the dev extra installs it)")
    check = tmp_path / "check.py"
    check.write_text(
        "import os\nimport reframe as rfm\nimport reframe.utility.sanity as sn\n\n\n"
        "@rfm.simple_test\nclass TinyLatency(rfm.RunOnlyRegressionTest):\n"
        "    valid_systems = ['*']\n    valid_prog_environs = ['*']\n    executable = 'echo'\n"
        "    executable_opts = [f\"latency: {os.environ['TINY_LATENCY']} us\"]\n\n"
        "    @sanity_function\n    def ran(self):\n        return sn.assert_found(r'latency', self.stdout)\n\n"
        "    @performance_function('us')\n    def lat(self):\n"
        "        return sn.extractsingle(r'latency: (\\S+) us', self.stdout, 1, float)\n"
    )
    for value in ("1.25", "1.75"):
        env = dict(os.environ, TINY_LATENCY=value, HOME=str(tmp_path))
        argv = [str(reframe), "-c", str(check), "-r", "--perflogdir", str(tmp_path / "perf"), "--prefix", str(tmp_path)]
        p = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
        assert p.returncode == 0, p.stdout[-2000:]
    (log,) = (tmp_path / "perf").rglob("TinyLatency.log")
    db = tmp_path / "rf.db"
    p = run_scope("import", log, db=db)
    assert p.returncode == 0 and "imported 2 ReFrame jobs (reframe.tinylatency.lat)" in p.stdout, p.stderr
    store = Store(db)
    values = [store.load_run(r["id"], samples=False).points[0].median for r in store.runs()]
    assert values == [1.25, 1.75]
