"""The cluster description: every node described by its own ranks, nodes grouped into kinds."""

import os
from dataclasses import fields

import pytest

from scope.analysis.cluster import by_pair_kind, cluster_text, node_kinds, pair_kinds, per_kind
from scope.model import Context, Placement, Point
from scope.store import Store
from tests.conftest import run_scope


def _node(host, model="EPYC", cores=64, mem=256 << 30, l3=32 << 20, speed=100000):
    nics = [{"name": "ib0", "speed_mbps": speed, "mtu": 4092}, {"name": "eth9", "speed_mbps": None}]
    caches = {"l1d": 48 << 10, "l2": 1 << 20, "l3": l3}
    return {"host": host, "cpu_model": model, "cores": cores, "memory_bytes": mem, "cache_bytes": caches, "nics": nics}


@pytest.mark.unit
def test_nodes_of_one_kind_group_and_others_stand_apart():
    nodes = [_node("c1"), _node("c2", mem=(256 << 30) - (100 << 20)), _node("g1", model="Xeon", cores=32)]
    kinds = node_kinds(nodes)
    assert [k.hosts for k in kinds] == [["c1", "c2"], ["g1"]]  # 100 MiB less reserved: the same kind
    assert kinds[0].label == "EPYC, 64 cores, 256 GiB, L3 32 MiB, links 100 Gbit/s"
    assert cluster_text(nodes).startswith("2 kinds of node: 2 x EPYC") and "1 x Xeon, 32 cores" in cluster_text(nodes)
    assert node_kinds([_node("a"), _node("b", speed=25000)])[1].label.endswith("links 25 Gbit/s")


@pytest.mark.mpi
def test_the_engine_describes_the_node_it_runs_on(engine, db):
    p = run_scope("run", "p2p.pingpong", "--sizes", "8", "--budget", "0.1", "--quiet", db=db)
    assert p.returncode == 0, p.stderr
    (node,) = Store(db).load_run(1).context.nodes
    assert node["cores"] == os.cpu_count()
    assert node["memory_bytes"] == os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    assert {n["name"] for n in node["nics"]} == set(os.listdir("/sys/class/net")) - {"lo"} or len(node["nics"]) == 6
    assert "nodes: 1 x" in run_scope("show", "1", db=db).stdout


@pytest.mark.unit
def test_a_node_figure_across_kinds_is_given_per_kind():
    """6 ranks, 2 per node, each moving a sixth of 6,000 bytes: on the two nodes of one kind in
    10 us (100 MB/s a rank), on the node of the other in 20 us (50 MB/s a rank)."""
    nodes = [dict(_node("a1"), node=0), dict(_node("a2"), node=2), dict(_node("b1", model="Xeon"), node=4)]
    ctx = Context(**{f.name: None for f in fields(Context)} | {"nodes": nodes, "placement": [
        Placement(r, ("a1", "a1", "a2", "a2", "b1", "b1")[r], (0, 0, 2, 2, 4, 4)[r]) for r in range(6)]})  # fmt: skip
    rec = {"per_rank": {"own_us_median": [10.0, 10.0, 10.0, 10.0, 20.0, 20.0]}}
    given = {"seq": 0, "test": "node.stream", "params": {"procs": 6}, "unit": "us", "median": 20.0}
    p = Point(**{f.name: None for f in fields(Point)} | given | {"bytes_per_op": 6000.0, "load_record": lambda p: rec})
    by = {k.kind.split(",")[0]: k for k in per_kind(p, ctx)}
    assert by["EPYC"].nodes == 2 and by["EPYC"].per_node == pytest.approx(200.0)  # 2 ranks x 100 MB/s
    assert by["Xeon"].nodes == 1 and by["Xeon"].per_node == pytest.approx(100.0) and by["Xeon"].unit == "MB/s"
    assert pair_kinds(ctx).startswith("EPYC")  # ranks 0 and 1 share node a1
    assert per_kind(p, Context(**{f.name: None for f in fields(Context)} | {"nodes": nodes[:2], "placement": []})) == []


@pytest.mark.unit
def test_layer_runs_are_grouped_by_the_kind_of_node_their_pair_ran_on():
    from types import SimpleNamespace

    def ctx(model):
        nodes = [dict(_node("h", model=model), node=0)]
        return Context(**{f.name: None for f in fields(Context)} | {"nodes": nodes, "placement": [
            Placement(0, "h", 0), Placement(1, "h", 0)]})  # fmt: skip

    runs = [SimpleNamespace(id=i, context=ctx(m)) for i, m in enumerate(("EPYC", "Xeon", "EPYC"))]
    groups = by_pair_kind(runs)
    assert [[r.id for r in rs] for rs in groups.values()] == [[0, 2], [1]]
    assert list(groups)[1].startswith("Xeon, 64 cores")
