"""A slow link between two hosts, measured by a screen, planted in the calibrated platform
(issue 73): the recorded screen `screen-slowlink` is 4 testbed hosts at 400 Mbit/s with the
route between scope-h1 and scope-h2 shaped to 100 Mbit/s both ways (tc on both hosts)."""

from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ET

import pytest

from scope.analysis.simcal import calibrate
from scope.errors import ScopeError
from scope.run.simcal import WhatIf, calibrated_xml
from scope.run.simplatform import read_platform
from scope.run.simxml import ROUTED_HOSTS, Cluster, cluster_xml
from scope.store import Store
from tests.conftest import replay, require_simgrid, run_scope


@pytest.fixture(scope="module")
def linked(tmp_path_factory):
    """The screen with its slow link and the ping-pong run, in one store."""
    db = tmp_path_factory.mktemp("link") / "s.db"
    return db, replay("screen-slowlink", db), replay("simcal", db)


def _route(root: ET.Element, a: int, b: int) -> list[tuple[str, str]]:
    r = next(x for x in root.iter("route") if (x.get("src"), x.get("dst")) == (f"node-{a}", f"node-{b}"))
    return [(c.get("id"), c.get("direction")) for c in r.iter("link_ctn")]


@pytest.mark.unit
def test_a_screens_slow_link_is_planted_on_its_route_alone(linked, tmp_path):
    """The screen flags the link scope-h1 <-> scope-h2 (a quarter of the rate, by tc) and no host;
    the calibration keeps it as the share of the rate the screen's times give, and the platform
    writes every route, that pair's crossing a link of its own at that share each way."""
    db, screen, p2p = linked
    store = Store(db)
    runs = [store.load_run(p2p, samples=False), store.load_run(screen, samples=False)]
    store.close()
    cal = calibrate(runs)
    assert cal.host_shares == {} and [(a, b) for a, b, _ in cal.link_shares] == [(1, 2)]
    share = cal.link_shares[0][2]
    assert 0.2 < share < 0.3  # tc: 100 of 400 Mbit/s, less the pairs' time besides their bytes
    src = next(s for s in cal.sources if s["test"] == "p2p.allpairs")
    assert src["slow_links"] == {"scope-h1<->scope-h2": round(share, 4)} and src["slow_hosts"] == {}
    path = tmp_path / "p.xml"
    path.write_text(calibrated_xml(cal, WhatIf()))
    root = ET.parse(path).getroot()
    assert root.find("zone").get("routing") == "Full" and root.find("cluster") is None
    rates = {ln.get("id"): float(ln.get("bandwidth")[:-3]) for ln in root.iter("link")}
    assert rates["pair-1-2"] == pytest.approx(share * cal.rate_MBps * 1e6, rel=1e-5)
    assert all(rates[f"link-{h}"] == pytest.approx(cal.rate_MBps * 1e6, rel=1e-5) for h in range(4))
    assert len(list(root.iter("route"))) == 16  # every ordered pair, a host's own route too
    assert _route(root, 1, 2) == [("link-1", "UP"), ("pair-1-2", "UP"), ("link-2", "DOWN")]
    assert _route(root, 2, 1) == [("link-2", "UP"), ("pair-1-2", "DOWN"), ("link-1", "DOWN")]
    assert _route(root, 0, 3) == [("link-0", "UP"), ("link-3", "DOWN")]
    assert _route(root, 2, 2) == [("link-2", "UP"), ("link-2", "DOWN")]
    plat = read_platform(str(path))  # SCOPE's own checks: hosts, routes between every pair
    assert plat.hosts == [f"node-{h}" for h in range(4)] and plat.calibration["link_shares"] == [[1, 2, share]]


@pytest.mark.unit
def test_past_routed_hosts_the_slow_link_is_said_not_planted(linked):
    """Each route is written, so a platform of more than ROUTED_HOSTS hosts keeps the star (the
    link is named when the platform is written); described by hand, such a cluster is refused."""
    db, screen, p2p = linked
    store = Store(db)
    cal = calibrate([store.load_run(p2p, samples=False), store.load_run(screen, samples=False)])
    store.close()
    root = ET.fromstring(calibrated_xml(cal, WhatIf(hosts=ROUTED_HOSTS + 1)))
    assert root.find("cluster") is not None and not list(root.iter("route"))
    assert ET.fromstring(calibrated_xml(cal, WhatIf(topology="fattree", hosts=16))).find("zone") is None
    with pytest.raises(ScopeError, match="at most 256 hosts"):
        cluster_xml(Cluster(ROUTED_HOSTS + 1, 1, 1e9, 1e-6, pairs={(0, 1): 0.5}))
    p = run_scope("sim", "platform", "--from", screen, "--from", p2p, "--hosts", ROUTED_HOSTS + 1, "-o",
                  db.parent / "big.xml", db=db)  # fmt: skip
    assert p.returncode == 0 and "1 slow link(s) between two hosts not planted" in p.stderr, p.stderr


@pytest.mark.build
def test_the_planted_slow_link_reappears_in_a_simulated_screen(linked, tmp_path):
    """The calibrated platform's own screen (p2p.allpairs under SMPI) flags the link
    node-1 <-> node-2 and nothing else, at the measured screen's ratio within 10 %."""
    require_simgrid()
    src, screen, p2p = linked
    db, plat = tmp_path / "s.db", tmp_path / "p.xml"
    shutil.copy(src, db)
    p = run_scope("sim", "platform", "--from", screen, "--from", p2p, "-o", plat, db=db)
    assert p.returncode == 0 and "slower, as the screen measured: the route node-1 <-> node-2" in p.stderr, p.stderr
    p = run_scope("run", "--sim", plat, "-n", 4, "--sim-clocks", "none", "p2p.allpairs", "--sizes", "256K",
                  "--launches", 1, db=db)  # fmt: skip
    assert p.returncode == 0, p.stderr
    measured = json.loads(run_scope("show", screen, "--json", db=db).stdout)
    simulated = json.loads(run_scope("show", "last", "--json", db=db).stdout)
    want = next(f for sc in measured["screens"] if sc["size"] == 262144 for f in sc["flags"])
    flags = [f for sc in simulated["screens"] for f in sc["flags"]]
    assert [(f["kind"], f["hosts"]) for f in flags] == [("link", ["node-1", "node-2"])], flags
    assert flags[0]["ratio"] == pytest.approx(want["ratio"], rel=0.10)


@pytest.mark.unit
def test_a_described_platform_plants_a_slow_link_by_hand(tmp_path):
    """`scope sim platform --slow-link I-J:SHARE`: the described cluster written route by route,
    the pair's route at its share each way (beside a --slow host); refused in one line, nothing
    written, for a pair that is no two hosts, a share out of range, a pair named twice, a fat
    tree, more than ROUTED_HOSTS hosts, or a calibrated platform."""
    plat = tmp_path / "p.xml"
    p = run_scope("sim", "platform", "--hosts", 4, "--rate", "8Gbps", "--slow-link", "2-1:0.25", "--slow", "3:0.5",
                  "-o", plat)  # fmt: skip
    assert p.returncode == 0 and "the route 2 <-> 1 at 0.25 of the rate" in p.stderr, p.stderr
    root = ET.parse(plat).getroot()
    rates = {ln.get("id"): float(ln.get("bandwidth")[:-3]) for ln in root.iter("link")}
    assert rates["pair-1-2"] == pytest.approx(0.25e9) and rates["link-3"] == pytest.approx(0.5e9)
    assert rates["link-0"] == pytest.approx(1e9) and len(list(root.iter("route"))) == 16
    assert _route(root, 2, 1) == [("link-2", "UP"), ("pair-1-2", "DOWN"), ("link-1", "DOWN")]
    assert read_platform(str(plat)).hosts == [f"node-{h}" for h in range(4)]
    for argv, said in ((["--slow-link", "1-1:0.5"], "names no two hosts of 0..3"),
                       (["--slow-link", "1-4:0.5"], "names no two hosts of 0..3"),
                       (["--slow-link", "1-2:0"], "a share out of (0, 1000]"),
                       (["--slow-link", "1:0.5"], "is not I-J:SHARE"),
                       (["--slow-link", "1-2:0.5", "--slow-link", "2-1:0.3"], "more than once"),
                       (["--slow-link", "1-2:0.5", "--topology", "fattree", "--hosts", 16], "flat platform"),
                       (["--slow-link", "1-2:0.5", "--hosts", ROUTED_HOSTS + 1], "at most 256 hosts"),
                       (["--slow-link", "1-2:0.5", "--from", "last"], "in a described platform")):  # fmt: skip
        out = tmp_path / "no.xml"
        p = run_scope("sim", "platform", "--hosts", 4, *argv, "-o", out, db=tmp_path / "none.db")
        assert p.returncode == 2 and said in p.stderr and len(p.stderr.strip().splitlines()) == 1, (argv, p.stderr)
        assert not out.exists()
