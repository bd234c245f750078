"""Which MPI SCOPE measures (issue 30): --mpicc, then $MPICC, then an mpicc on PATH outside this
environment (a loaded module: on a cluster the MPI to measure), then the environment's own."""

import os
import sys
from pathlib import Path

import pytest

from scope.errors import ScopeError
from scope.run.toolchain import find_toolchain, mpi_candidates

pytestmark = pytest.mark.unit


def fake_mpi(root: Path, name: str) -> Path:
    """A directory with an mpicc that answers -show as an MPICH wrapper would."""
    d = root / name / "bin"
    d.mkdir(parents=True)
    w = d / "mpicc"
    w.write_text("#!/bin/sh\necho gcc -I/opt/mpich/include -lmpi\n")
    w.chmod(0o755)
    return w


def test_a_loaded_mpi_on_path_is_chosen_over_the_environment_s_own(tmp_path, monkeypatch):
    module = fake_mpi(tmp_path, "module")
    own = Path(sys.prefix) / "bin"
    monkeypatch.delenv("MPICC", raising=False)
    monkeypatch.setenv("PATH", os.pathsep.join([str(own), str(module.parent), "/usr/bin", "/bin"]))
    tc = find_toolchain()
    assert tc.mpicc == module and "outside this environment" in tc.why
    if (own / "mpicc").exists():
        assert str(own / "mpicc") in tc.others  # the fallback is named as found, not chosen
    assert tc.choice() == {"mpicc": str(module), "why": tc.why, "others": list(tc.others)}


def test_mpicc_given_or_in_the_environment_variable_wins(tmp_path, monkeypatch):
    module, given = fake_mpi(tmp_path, "module"), fake_mpi(tmp_path, "given")
    monkeypatch.setenv("PATH", os.pathsep.join([str(module.parent), "/usr/bin", "/bin"]))
    monkeypatch.setenv("MPICC", str(given))
    assert find_toolchain().why == "$MPICC" and find_toolchain().mpicc == given
    assert find_toolchain(str(module)).why == "--mpicc"
    order = [why.split(" ")[0] for _, why, _ in mpi_candidates(str(module))]
    assert order[:3] == ["--mpicc", "$MPICC", "the"] and order[-1] == "this"
    with pytest.raises(ScopeError, match="not found or not executable"):
        find_toolchain(str(tmp_path / "nosuch" / "mpicc"))
