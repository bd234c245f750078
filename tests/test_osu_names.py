"""OMB names as a way into SCOPE (issue 31): every OMB 7.4 CPU program has its SCOPE setting or
the reason there is none, `scope list --osu --json` lists them and `scope run --osu` runs one."""

import json

import pytest

from scope.catalog.osu import OMB, osu_settings, peer_names
from scope.model import TestInfo as Descriptor
from scope.store import Store
from tests.conftest import FIXTURES, run_scope


def recorded_peers() -> dict[str, str]:
    infos = [Descriptor.of(json.loads(x)) for x in (FIXTURES / "describe.jsonl").read_text().splitlines() if x.strip()]
    return peer_names(infos)


@pytest.mark.unit
def test_every_omb_program_has_a_setting_or_a_reason():
    rows = {r.osu: r for r in osu_settings(recorded_peers())}
    assert set(rows) == {p for p, _ in OMB.values()}  # every program, once
    assert all(r.test or r.note for r in rows.values())
    assert rows["osu_bw"].test == "p2p.stream" and rows["osu_bw"].params == {"window": "64", "receive": "one"}
    assert rows["osu_mbw_mr"].test == "p2p.mbw_mr" and rows["osu_mbw_mr"].options == {"procs": "all"}
    assert rows["osu_put_latency"].options["loop"] == "osu" and rows["osu_put_latency"].test == "rma.put"
    assert rows["osu_allreduce"].test == "coll.allreduce" and rows["osu_allreduce"].sizes == "1-1M"
    assert rows["osu_latency"].sizes == "0-4M" and rows["osu_barrier"].sizes is None
    bcast = rows["osu_bcast_persistent"]
    assert bcast.test == "coll.bcast" and bcast.params == {"root": "0", "api": "persistent"}
    assert bcast.options["timing"] == "osu" and rows["osu_reduce"].params == {"root": "0", "dtype": "char"}
    for none in ("osu_latency_mt", "osu_gatherv_persistent", "osu_neighbor_allgather", "osu_ibcast", "osu_gatherv"):
        assert rows[none].test is None and rows[none].note, none


@pytest.mark.mpi
def test_list_osu_json_and_run_osu(engine, db):
    listed = json.loads(run_scope("list", "--osu", "--json", db=db).stdout)
    assert {"osu", "test", "params", "note"} <= set(listed[0]) and len(listed) == len({p for p, _ in OMB.values()})
    p = run_scope("run", "--osu", "osu_bw", "--sizes", "8,1K", "--budget", "0.05", "--launches", "1", "--quiet",
                  db=db)  # fmt: skip
    assert p.returncode == 0, p.stderr
    run = Store(db).load_run(1)
    assert run.label == "as osu_bw" and {pt.test for pt in run.points} == {"p2p.stream"}
    assert all(pt.params["window"] == 64 and pt.params["receive"] == "one" for pt in run.points)
    bad = run_scope("run", "--osu", "osu_latency_mt", db=db)
    assert bad.returncode == 2 and "MPI_THREAD_MULTIPLE" in bad.stderr and bad.stderr.count("\n") == 1
    both = run_scope("run", "--osu", "osu_bw", "p2p.pingpong", db=db)
    assert both.returncode == 2 and "not both" in both.stderr


@pytest.mark.mpi
@pytest.mark.parametrize("mpicc", ["mpich", "openmpi"])
def test_persistent_latency_runs_with_checked_data_under_each_mpi(engine, db, mpicc):
    """osu_latency_persistent's definition (-p api=persistent) under both MPIs, --offcache
    included (its requests are bound again when the buffers move), the data checked."""
    import sys
    from pathlib import Path

    wrapper = Path(sys.prefix) / ("bin" if mpicc == "mpich" else "openmpi/bin") / "mpicc"
    if not wrapper.exists():
        pytest.skip(f"{mpicc} is not installed here")
    p = run_scope("run", "--osu", "osu_latency_persistent", "--sizes", "8,64K", "--budget", "0.05", "--launches",
                  "1", "--offcache", "--quiet", "--mpicc", wrapper, db=db)  # fmt: skip
    assert p.returncode == 0, p.stderr
    pts = Store(db).load_run(1).points
    assert len(pts) == 2 and all(pt.params["api"] == "persistent" and pt.record["validated"] == 2 for pt in pts)


@pytest.mark.mpi
@pytest.mark.parametrize("mpicc", ["mpich", "openmpi"])
def test_omb_collectives_by_name_under_each_mpi(engine, db, mpicc):
    """OMB's collective timing (--timing osu) with persistent requests, OMB's MPI_CHAR sums and
    in-place reductions, under both MPIs, --offcache included, every point's data checked; each
    sample is the mean over ranks of their own times (an invariant within one record)."""
    import sys
    from pathlib import Path

    wrapper = Path(sys.prefix) / ("bin" if mpicc == "mpich" else "openmpi/bin") / "mpicc"
    if not wrapper.exists():
        pytest.skip(f"{mpicc} is not installed here")
    p = run_scope("run", "--osu", "osu_reduce_persistent", "--sizes", "8,64K", "--budget", "0.05", "--launches", "1",
                  "--offcache", "--quiet", "--mpicc", wrapper, "--min-count", "50", "--max-count", "50",
                  db=db)  # fmt: skip
    assert p.returncode == 0, p.stderr
    p = run_scope("run", "coll.allreduce", "coll.reduce_scatter_block", "coll.bcast", "-p", "dtype=float,double",
                  "-p", "api=standard,persistent", "--sizes", "1K", "--budget", "0.05", "--launches", "1", "--quiet",
                  "--mpicc", wrapper, db=db)  # fmt: skip
    assert p.returncode == 0, p.stderr
    store = Store(db)
    pts = store.load_run(1).points
    assert len(pts) == 2 and all(pt.params["api"] == "persistent" and pt.params["dtype"] == "char" for pt in pts)
    for pt in pts:
        assert pt.record["validated"] == 2 and pt.window.timing == "osu" and pt.record["count"] == 50
        w = pt.window
        for i, sample in enumerate(pt.samples[: len(w.end_us[0])]):
            own = [w.end_us[r][i] - w.start_us[r][i] for r in range(len(w.end_us))]
            assert sample == pytest.approx(sum(own) / len(own), rel=1e-9, abs=1e-6)
    more = store.load_run(2).points
    assert len(more) == 2 * 2 + 2 * 2 + 2  # allreduce, reduce_scatter_block by dtype and api; bcast by api
    assert all(pt.record["validated"] == 2 for pt in more)
