"""What the MPI chose (issue 31): the transport libraries, MPI_T selections and thresholds in
the context, performance variables around each point, and the thresholds read beside the
protocol switches a piecewise fit finds.  Replays a recorded MPICH run (its 4 KiB -> 8 KiB
switch and the 8 KiB thresholds that explain it); a real run under each MPI checks what is
recorded, never a time."""

import json
import shutil

import pytest

from scope.analysis.facts import derive
from scope.store import Store
from scope.views.terminal import show_run
from tests.conftest import FIXTURES, replay, run_scope


@pytest.mark.unit
def test_thresholds_are_read_beside_the_switch_they_explain(db):
    run = Store(db).load_run(replay("transport", db))
    facts = derive(run)
    t = facts.transport
    assert t.device == "ch4:ucx ofi" and t.layers[0].startswith("UCX") and t.pvars == 0
    names = {th.name: th.bytes for th in t.thresholds}
    assert names["MPIR_CVAR_CH4_IPC_CMA_P2P_THRESHOLD"] == 8192
    assert names["MPIR_CVAR_CH4_SHM_POSIX_IQUEUE_CELL_SIZE"] == 8192
    (series,) = facts.series
    assert series.piecewise.switches == [(4096, 8192)]  # the recorded curve bends there
    (note,) = t.notes(series.piecewise)
    assert {th.name for th in note.thresholds} == {"MPIR_CVAR_CH4_IPC_CMA_P2P_THRESHOLD",
                                                   "MPIR_CVAR_CH4_SHM_POSIX_IQUEUE_CELL_SIZE"}  # fmt: skip
    text = show_run(facts)
    assert "what the MPI chose: device ch4:ucx ofi" in text
    assert "4 KiB -> 8 KiB: MPIR_CVAR_CH4_SHM_POSIX_IQUEUE_CELL_SIZE = 8 KiB" in text
    assert "this MPI offers none through MPI_T" in text


@pytest.mark.unit
def test_performance_variables_that_moved_are_shown_with_their_point(db, tmp_path):
    """A point's `mpi_t` (here written into the recording: neither MPI here moves one on these
    tests) is read and shown under its series, before and after, summed over ranks."""
    copy = tmp_path / "moved"
    shutil.copytree(FIXTURES / "transport", copy)
    lines = (copy / "launch-1.jsonl").read_text().splitlines()
    recs = [json.loads(x) for x in lines]
    ctx = next(r for r in recs if r["type"] == "context")
    ctx["mpi"]["transport"]["pvars"] = 2
    pt = next(r for r in recs if r["type"] == "point" and r["params"]["size"] == 65536)
    pt["mpi_t"] = [{"name": "pml_ob1_unexpected_msgq_length", "class": "level", "before": 0, "after": 3}]
    (copy / "launch-1.jsonl").write_text("\n".join(json.dumps(r) for r in recs) + "\n")
    from scope.run.recorder import replay as store_stream

    store = Store(db)
    run = store.load_run(store_stream(store, copy)[0])
    facts = derive(run)
    (m,) = facts.transport.moves
    assert (m.name, m.klass, m.before, m.after, m.size) == ("pml_ob1_unexpected_msgq_length", "level", 0, 3,
                                                                      65536)  # fmt: skip
    text = show_run(facts)
    assert "moved: pml_ob1_unexpected_msgq_length" in text
    assert "MPI_T pml_ob1_unexpected_msgq_length (level) 0 -> 3, size 64 KiB" in text


@pytest.mark.mpi
@pytest.mark.parametrize("mpicc", ["mpich", "openmpi"])
def test_each_mpi_records_what_it_chose(engine, db, mpicc, wrapper):
    p = run_scope("run", "p2p.pingpong", "--sizes", "8", "--budget", "0.02", "--launches", "1", "--quiet", "--mpicc",
                  wrapper, db=db)  # fmt: skip
    assert p.returncode == 0, p.stderr
    run = Store(db).load_run(1)
    t = run.context.transport
    if mpicc == "mpich":
        assert t["cvars"]["MPIR_CVAR_CH4_SHM_POSIX_IQUEUE_CELL_SIZE"] > 0 and t["pvars"] == 0
    else:  # Open MPI declares its components' variables once MPI_Init opened them
        assert t["cvars"]["btl_sm_eager_limit"] > 0 and "pml" in t["cvars"] and t["pvars"] > 0
    shown = run_scope("show", "1", db=db).stdout
    assert "what the MPI chose" in shown and "thresholds (MPI_T)" in shown
