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


def test_the_wrappers_answers_are_kept_while_their_files_and_environment_are_unchanged(tmp_path, monkeypatch):
    """`mpicc -show` and `mpiexec --version` cost every run two processes (issue 52): asked
    once, then read back, and asked again when either file or a variable the wrappers read
    (MPICH_CC ...) changes; a wrapper that answered nothing is not kept."""
    from scope.run.kept import wrapper_answers

    mpicc, mpiexec = tmp_path / "mpicc", tmp_path / "mpiexec"
    mpicc.write_text("#!/bin/sh\n")
    mpiexec.write_text("#!/bin/sh\n")
    asked = []

    def ask(cc, ex):
        asked.append((cc, ex))
        return f"cc -lmpi #{len(asked)}", "HYDRA 5.0.2"

    monkeypatch.delenv("MPICH_CC", raising=False)
    first = wrapper_answers(tmp_path, mpicc, mpiexec, ask)
    assert wrapper_answers(tmp_path, mpicc, mpiexec, ask) == first == ("cc -lmpi #1", "HYDRA 5.0.2")
    assert len(asked) == 1
    monkeypatch.setenv("MPICH_CC", "clang")
    assert wrapper_answers(tmp_path, mpicc, mpiexec, ask)[0] == "cc -lmpi #2"
    monkeypatch.delenv("MPICH_CC")
    assert wrapper_answers(tmp_path, mpicc, mpiexec, ask) == first and len(asked) == 2  # both kept
    mpiexec.write_text("#!/bin/sh\n# another MPI\n")
    assert wrapper_answers(tmp_path, mpicc, mpiexec, ask)[0] == "cc -lmpi #3"
    (tmp_path / "wrappers.json").write_text("[1, 2]")  # not what was kept: asked again, no crash
    assert wrapper_answers(tmp_path, mpicc, mpiexec, ask)[0] == "cc -lmpi #4"
    silent = tmp_path / "silent"
    silent.write_text("")
    for _ in range(2):
        assert wrapper_answers(tmp_path, silent, None, lambda cc, ex: asked.append(cc) or ("", "")) == ("", "")
    assert asked.count(silent) == 2
