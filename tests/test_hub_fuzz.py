"""The hub under Schemathesis (issue 67): its own OpenAPI document (hub/openapi.py) drives a
property-based run of every route, with Schemathesis's default checks (no 5xx, statuses,
content types and bodies as documented, schema-invalid requests refused, valid ones accepted)
and its stateful phase following the push's links, against a live hub on SQLite and on
PostgreSQL holding real runs.  tests/schemathesis.toml says the one expectation it is given."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from tests.conftest import ROOT
from tests.hub_server import Hub
from tests.test_hub import database, token

pytestmark = pytest.mark.service


@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
def test_schemathesis_finds_nothing(kind, local, request, tmp_path):
    st = shutil.which("st", path=os.path.dirname(sys.executable)) or shutil.which("st")
    if st is None:
        if os.environ.get("CI"):
            pytest.fail("Schemathesis is required in CI (the dev extra installs it)")
        pytest.skip("Schemathesis is not installed")
    url = database(kind, tmp_path, request)
    push, admin = token(url, "fuzzed"), token(url, "--admin")
    with Hub(url) as hub:
        for data in local[2].values():
            assert hub.push(data, push)[0] == 201
        config = str(ROOT / "tests" / "schemathesis.toml")
        argv = [st, "--config-file", config, "run", f"{hub.base}/openapi.json", "-H", f"Authorization: Bearer {push}",
                "--max-examples", "40", "--seed", "67", "--no-color"]  # fmt: skip
        p = subprocess.run(argv, capture_output=True, text=True, timeout=900, cwd=tmp_path)
        # the routes an admin token opens (alert rules), fuzzed with one
        argv = [st, "--config-file", config, "run", f"{hub.base}/openapi.json", "-H", f"Authorization: Bearer {admin}",
                "--include-path-regex", "rules", "--max-examples", "40", "--seed", "67", "--no-color"]  # fmt: skip
        q = subprocess.run(argv, capture_output=True, text=True, timeout=900, cwd=tmp_path)
        hub.log.seek(0)
        log = hub.log.read()
    assert p.returncode == 0, p.stdout[-6000:]
    assert q.returncode == 0, q.stdout[-6000:]
    assert "Traceback" not in log and "ERROR" not in log, log[-3000:]  # no client's mistake is the hub's error
