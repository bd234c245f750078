"""Issue 59: the suite passes wherever the checkout lives.  A clone under /root (mode 0700) or
a `mktemp -d` folder failed the not-root test, which ran SCOPE as nobody from the checkout
itself.  Here the tree and its environment are copied into a private folder and that test runs
from there, as a user who cloned into their home would run it."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from tests import copies

CASE = "tests/test_hostile_files.py::test_an_unreadable_folder_on_path_is_skipped_as_which_skips_it"


@pytest.mark.system
def test_the_not_root_case_passes_in_a_checkout_under_a_private_folder():
    if os.geteuid() != 0 or not shutil.which("setpriv"):
        pytest.skip("needs root and setpriv (the case it runs does)")
    private = Path(tempfile.mkdtemp(prefix="scope-private-"))  # 0700, as /root and mktemp -d are
    try:
        assert private.stat().st_mode & 0o777 == 0o700
        checkout = copies.tree(private / "scope")
        venv = copies.environment(checkout / ".venv", checkout / "src")
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "SCOPE_BUILD_DIR"))}
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        # the copy's python imports the copy's scope, not this checkout's
        where = subprocess.run([str(venv / "bin" / "python"), "-c", "import scope; print(scope.__file__)"],
                               capture_output=True, text=True, env=env, cwd=checkout)  # fmt: skip
        assert where.stdout.strip() == str(checkout / "src" / "scope" / "__init__.py"), where
        p = subprocess.run([str(venv / "bin" / "python"), "-m", "pytest", "-q", "-p", "no:cacheprovider", CASE],
                           capture_output=True, text=True, env=env, timeout=900, cwd=checkout)  # fmt: skip
        out = p.stdout + p.stderr
        # it passed rather than skipped
        assert p.returncode == 0 and "1 passed" in out and "skipped" not in out, out[-3000:]
    finally:
        shutil.rmtree(private, ignore_errors=True)
