"""OMB names as a way into SCOPE (issue 31): every OMB 7.4 CPU program has its SCOPE setting or
the reason there is none, `scope list --osu --json` lists them and `scope run --osu` runs one."""

import json

import pytest

from scope.catalog.osu import OMB, OMB_UNTITLED, osu_settings, peer_names
from scope.model import TestInfo as Descriptor
from scope.store import Store
from tests.conftest import FIXTURES, SMALL_LLC, run_scope


def recorded_peers() -> dict[str, str]:
    infos = [Descriptor.of(json.loads(x)) for x in (FIXTURES / "describe.jsonl").read_text().splitlines() if x.strip()]
    return peer_names(infos)


@pytest.mark.unit
def test_every_omb_program_has_a_setting_or_a_reason():
    rows = {r.osu: r for r in osu_settings(recorded_peers())}
    assert set(rows) == {p for p, _ in OMB.values()} | set(OMB_UNTITLED)  # every program, once
    # issue 31's list: every one has a SCOPE setting
    wanted = [
        "osu_mbw_mr",
        "osu_multi_lat",
        "osu_latency_mt",
        "osu_latency_persistent",
        "osu_bw_persistent",
        "osu_bibw_persistent",
        "osu_alltoallw",
    ]
    wanted += [
        f"osu_{c}_persistent"
        for c in (
            "allgather",
            "allgatherv",
            "allreduce",
            "alltoall",
            "alltoallv",
            "alltoallw",
            "barrier",
            "bcast",
            "gather",
            "gatherv",
            "reduce",
            "reduce_scatter",
            "scatter",
            "scatterv",
        )
    ]
    wanted += [
        f"osu_{i}neighbor_{c}"
        for i in ("", "i")
        for c in ("allgather", "allgatherv", "alltoall", "alltoallv", "alltoallw")
    ]
    assert [w for w in wanted if rows[w].test is None] == []
    assert all(r.test or r.note for r in rows.values())
    assert rows["osu_bw"].test == "p2p.stream" and rows["osu_bw"].params == {"window": "64", "receive": "one"}
    assert rows["osu_mbw_mr"].test == "p2p.mbw_mr" and rows["osu_mbw_mr"].options == {"procs": "all"}
    assert rows["osu_put_latency"].options["loop"] == "osu" and rows["osu_put_latency"].test == "rma.put"
    assert rows["osu_allreduce"].test == "coll.allreduce" and rows["osu_allreduce"].sizes == "1-1M"
    assert rows["osu_latency"].sizes == "0-4M" and rows["osu_barrier"].sizes is None
    bcast = rows["osu_bcast_persistent"]
    assert bcast.test == "coll.bcast" and bcast.params == {"root": "0", "api": "persistent"}
    assert bcast.options["timing"] == "osu" and rows["osu_reduce"].params == {"root": "0", "dtype": "char"}
    assert rows["osu_latency_mt"].options["thread-level"] == "multiple" and rows["osu_multi_lat"].params == {
        "pairs": "halves",
        "reply": "own",
    }
    assert rows["osu_ibcast"].test == "coll.bcast" and rows["osu_ibcast"].params["nonblocking"] == "overlap"
    assert rows["osu_ineighbor_alltoallw"].test == "coll.neighbor_alltoall"
    assert rows["osu_ineighbor_alltoallw"].params == {"call": "alltoallw", "nonblocking": "overlap"}
    assert rows["osu_gatherv_persistent"].params == {"root": "0", "blocks": "even", "api": "persistent"}
    for none in ("osu_latency_mp", "osu_put_bibw", "osu_get_mbw", "osu_hello"):
        assert rows[none].test is None and rows[none].note, none


@pytest.mark.mpi
def test_list_osu_json_and_run_osu(engine, db):
    listed = json.loads(run_scope("list", "--osu", "--json", db=db).stdout)
    assert {"osu", "test", "params", "note"} <= set(listed[0]) and len(listed) == len(
        {p for p, _ in OMB.values()} | set(OMB_UNTITLED)
    )
    p = run_scope("run", "--osu", "osu_bw", "--sizes", "8,1K", "--budget", "0.05", "--launches", "1", "--quiet",
                  db=db)  # fmt: skip
    assert p.returncode == 0, p.stderr
    run = Store(db).load_run(1)
    assert run.label == "as osu_bw" and {pt.test for pt in run.points} == {"p2p.stream"}
    assert all(pt.params["window"] == 64 and pt.params["receive"] == "one" for pt in run.points)
    bad = run_scope("run", "--osu", "osu_latency_mp", db=db)
    assert bad.returncode == 2 and "several processes" in bad.stderr and bad.stderr.count("\n") == 1
    both = run_scope("run", "--osu", "osu_bw", "p2p.pingpong", db=db)
    assert both.returncode == 2 and "not both" in both.stderr


@pytest.mark.mpi
@pytest.mark.parametrize("mpicc", ["mpich", "openmpi"])
def test_persistent_latency_runs_with_checked_data_under_each_mpi(engine, db, wrapper):
    """osu_latency_persistent's definition (-p api=persistent) under both MPIs, --offcache
    included (its requests are bound again when the buffers move), the data checked."""
    p = run_scope("run", "--osu", "osu_latency_persistent", "--sizes", "8,64K", "--budget", "0.05", "--launches",
                  "1", "--offcache", "--quiet", "--mpicc", wrapper, db=db, env=SMALL_LLC)  # fmt: skip
    assert p.returncode == 0, p.stderr
    pts = Store(db).load_run(1).points
    assert len(pts) == 2 and all(pt.params["api"] == "persistent" and pt.record["validated"] == 2 for pt in pts)


@pytest.mark.mpi
@pytest.mark.parametrize("mpicc", ["mpich", "openmpi"])
def test_omb_collectives_by_name_under_each_mpi(engine, db, wrapper):
    """OMB's collective timing (--timing osu) with persistent requests, OMB's MPI_CHAR sums and
    in-place reductions, under both MPIs, --offcache included, every point's data checked; each
    sample is the mean over ranks of their own times (an invariant within one record).  The budget
    is far more than 50 samples take, so the count is the asked one on a loaded machine too."""
    p = run_scope("run", "--osu", "osu_reduce_persistent", "--sizes", "8,64K", "--budget", "5", "--launches", "1",
                  "--offcache", "--quiet", "--mpicc", wrapper, "--min-count", "50", "--max-count", "50",
                  db=db, env=SMALL_LLC)  # fmt: skip
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


@pytest.mark.mpi
@pytest.mark.parametrize("mpicc", ["mpich", "openmpi"])
def test_threads_and_multi_pair_latency_under_each_mpi(engine, db, wrapper):
    """osu_latency_mt's setting (2 serving threads) and 2 sending threads under
    MPI_THREAD_MULTIPLE, rank 0's echoes checked; the thread level provided is recorded; without
    --thread-level multiple the point is skipped with the fix; osu_multi_lat's pairs with OMB's
    timing count only the senders (each sample is rank 0's own time with 2 ranks)."""
    common = ("--budget", "0.05", "--launches", "1", "--quiet", "--mpicc", wrapper, "--min-count", "200",
              "--max-count", "200")  # fmt: skip
    p = run_scope("run", "--osu", "osu_latency_mt", "--sizes", "8,64K", *common, db=db)
    assert p.returncode == 0, p.stderr
    p = run_scope("run", "p2p.pingpong", "-p", "sender_threads=2", "-p", "threads=2", "--thread-level", "multiple",
                  "--sizes", "1K", *common, db=db)  # fmt: skip
    assert p.returncode == 0, p.stderr
    p = run_scope("run", "p2p.pingpong", "-p", "threads=2", "--sizes", "8", *common, db=db)
    p = run_scope("run", "--osu", "osu_multi_lat", "--sizes", "8,4K", *common, db=db)
    assert p.returncode == 0, p.stderr
    store = Store(db)
    mt = store.load_run(1)
    assert mt.context.thread_level == "multiple"
    assert len(mt.points) == 2 and all(pt.record["validated"] == 2 and pt.params["threads"] == 2 for pt in mt.points)
    two = store.load_run(2).points
    assert len(two) == 1 and two[0].params["sender_threads"] == 2 and two[0].record["validated"] == 2
    skipped = store.load_run(3)
    assert not skipped.points and any("--thread-level multiple" in (e.message or "") for e in skipped.events)
    pairs = store.load_run(4).points
    assert len(pairs) == 2 and all(pt.record["validated"] == 2 for pt in pairs)
    for pt in pairs:
        w = pt.window
        assert w.timing == "osu" and pt.params["pairs"] == "halves"
        assert all(e == 0 for e in w.end_us[1])  # the echoing rank is untimed
        for i, sample in enumerate(pt.samples[: len(w.end_us[0])]):
            assert sample == pytest.approx(w.end_us[0][i] / 2, rel=1e-9, abs=1e-6)  # RTT/2 of the sender


@pytest.mark.mpi
@pytest.mark.parametrize("mpicc", ["mpich", "openmpi"])
def test_persistent_streams_even_blocks_and_alltoallw_under_each_mpi(engine, db, wrapper):
    """osu_bw_persistent's and osu_bibw_persistent's settings with --offcache (the requests are
    bound again as the buffers move), OMB's even v-collectives, reduce_scatter over bytes and
    MPI_Alltoallw, 3 ranks (uneven roles), every point's data checked."""
    common = ("--budget", "0.02", "--launches", "1", "--quiet", "--mpicc", wrapper, "--max-count", "50")
    p = run_scope(
        "run", "--osu", "osu_bibw_persistent", "--sizes", "8,64K", "--offcache", *common, db=db, env=SMALL_LLC
    )
    assert p.returncode == 0, p.stderr
    p = run_scope("run", "p2p.stream", "-p", "api=persistent", "-p", "receive=slots", "--sizes", "1K", *common, db=db)
    assert p.returncode == 0, p.stderr
    p = run_scope("run", "coll.allgatherv", "coll.alltoallv", "coll.gatherv", "coll.scatterv", "coll.reduce_scatter",
                  "coll.alltoall", "-p", "blocks=even", "-p", "dtype=char", "-p", "call=alltoallw", "-p",
                  "api=standard,persistent", "-n", "3", "--procs", "3", "--sizes", "8,1K", *common,
                  db=db)  # fmt: skip
    assert p.returncode == 0, p.stderr
    store = Store(db)
    bibw = store.load_run(1).points
    assert len(bibw) == 2 and all(pt.params["api"] == "persistent" and pt.record["validated"] == 2 for pt in bibw)
    assert store.load_run(2).points[0].record["validated"] == 2
    colls = store.load_run(3).points
    assert {pt.test for pt in colls} == {"coll.allgatherv", "coll.alltoallv", "coll.gatherv", "coll.scatterv",
                                         "coll.reduce_scatter", "coll.alltoall"}  # fmt: skip
    assert len(colls) == 6 * 2 * 2 and all(pt.record["validated"] == 2 for pt in colls)
    w = [pt for pt in colls if pt.test == "coll.alltoall"]
    assert all(pt.params["call"] == "alltoallw" for pt in w)


@pytest.mark.mpi
@pytest.mark.parametrize("mpicc", ["mpich", "openmpi"])
def test_neighbourhood_collectives_under_each_mpi(engine, db, wrapper):
    """The neighbourhood collectives on OMB's stencil, every call, blocking, non-blocking and
    persistent, on 2 ranks (the other rank is both neighbours: MPI pairs repeated edges in list
    order, which the check follows), 3 and 4 (2 dimensions), data checked."""
    p = run_scope("run", "coll.neighbor_allgather", "coll.neighbor_alltoall", "-p",
                  "call=allgather,allgatherv,alltoall,alltoallv,alltoallw", "-p", "api=standard,persistent",
                  "-p", "dims=1,2", "-n", "4", "--procs", "2,3,4", "--sizes", "8", "--budget", "0.02", "--launches",
                  "1", "--quiet", "--mpicc", wrapper, "--max-count", "20", "--timing", "osu", db=db)  # fmt: skip
    assert p.returncode == 0, p.stderr
    pts = Store(db).load_run(1).points
    assert len(pts) == 5 * 2 * 2 * 3 and all(pt.record["validated"] == 2 for pt in pts)
    two = next(pt for pt in pts if pt.params["procs"] == 2 and pt.params["dims"] == 1)
    assert "2 neighbours" in two.record["note"]
    assert any("8 neighbours" in pt.record["note"] for pt in pts if pt.params["procs"] == 4 and pt.params["dims"] == 2)


@pytest.mark.mpi
@pytest.mark.parametrize("mpicc", ["mpich", "openmpi"])
def test_partitioned_pingpong_under_each_mpi(engine, db, wrapper):
    """MPI-4 partitioned ping-pong by part count, with a computation spread over the parts and
    --offcache (requests bound again as buffers move), data checked both ways; a size smaller
    than the part count is skipped with the reason, not measured."""
    p = run_scope("run", "p2p.pingpong", "-p", "api=partitioned", "-p", "partitions=1,8", "-p", "compute=0,5",
                  "--sizes", "4,64K", "--offcache", "--budget", "0.02", "--launches", "1", "--quiet", "--mpicc",
                  wrapper, "--max-count", "50", db=db, env=SMALL_LLC)  # fmt: skip
    assert p.returncode == 0, p.stderr
    run = Store(db).load_run(1)
    assert len(run.points) == 2 * 2 + 2  # 4 B in 8 parts is skipped
    assert all(pt.params["api"] == "partitioned" and pt.record["validated"] == 2 for pt in run.points)
    assert any("fewer bytes than partitions" in (e.message or "") for e in run.events)
