"""The cluster description: every node described by its own ranks, nodes grouped into kinds."""

import os

from scope.analysis.cluster import cluster_text, node_kinds
from scope.store import Store
from tests.conftest import run_scope


def _node(host, model="EPYC", cores=64, mem=256 << 30, l3=32 << 20, speed=100000):
    nics = [{"name": "ib0", "speed_mbps": speed, "mtu": 4092}, {"name": "eth9", "speed_mbps": None}]
    caches = {"l1d": 48 << 10, "l2": 1 << 20, "l3": l3}
    return {"host": host, "cpu_model": model, "cores": cores, "memory_bytes": mem, "cache_bytes": caches, "nics": nics}


def test_nodes_of_one_kind_group_and_others_stand_apart():
    nodes = [_node("c1"), _node("c2", mem=(256 << 30) - (100 << 20)), _node("g1", model="Xeon", cores=32)]
    kinds = node_kinds(nodes)
    assert [k.hosts for k in kinds] == [["c1", "c2"], ["g1"]]  # 100 MiB less reserved: the same kind
    assert kinds[0].label == "EPYC, 64 cores, 256 GiB, L3 32 MiB, links 100 Gbit/s"
    assert cluster_text(nodes).startswith("2 kinds of node: 2 x EPYC") and "1 x Xeon, 32 cores" in cluster_text(nodes)
    assert node_kinds([_node("a"), _node("b", speed=25000)])[1].label.endswith("links 25 Gbit/s")


def test_the_engine_describes_the_node_it_runs_on(engine, db):
    p = run_scope("run", "p2p.pingpong", "--sizes", "8", "--budget", "0.1", "--quiet", db=db)
    assert p.returncode == 0, p.stderr
    (node,) = Store(db).load_run(1).context.nodes
    assert node["cores"] == os.cpu_count()
    assert node["memory_bytes"] == os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    assert {n["name"] for n in node["nics"]} == set(os.listdir("/sys/class/net")) - {"lo"} or len(node["nics"]) == 6
    assert "nodes: 1 x" in run_scope("show", "1", db=db).stdout
