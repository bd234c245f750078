"""Cluster screening (issue 43): the pairing of a recorded all-pairs run (every pair exactly once a
sweep, no rank twice in a step, for 4 and 5 ranks), the flags on a recorded testbed run whose
link 0-1 ran at a quarter of the others' rate (tests/fixtures/allpairs), and the rule on
hand-built matrices whose answer is known.  No live timing."""

from __future__ import annotations

import json
import re
from array import array
from collections import defaultdict
from itertools import combinations
from types import SimpleNamespace

import pytest

from scope.analysis.node_screen import node_screens
from scope.analysis.screen import MIN_EXCESS, screen_point
from scope.fetch.facts import derive_stored
from scope.model import PairStep
from scope.store import Store
from tests.conftest import FIXTURES, ROOT, replay, run_scope


def records(name: str) -> list[dict]:
    out = []
    for f in sorted((FIXTURES / name).glob("launch-*.jsonl")):
        k = int(f.stem.split("-")[1])
        out += [dict(json.loads(line), launch=k) for line in f.read_text().splitlines() if line.strip()]
    return out


@pytest.mark.unit
@pytest.mark.parametrize("name,n", [("allpairs", 4), ("allpairs-odd", 5)])
def test_every_pair_once_a_sweep_and_no_rank_twice_in_a_step(name, n):
    sweeps = defaultdict(list)
    for r in records(name):
        if r["type"] == "pairs":
            sweeps[(r["launch"], r["index"])].append(r)
    assert sweeps
    for steps in sweeps.values():
        assert sorted(s["step"] for s in steps) == list(range(n if n % 2 else n - 1))
        seen = []
        for s in steps:
            ranks = s["a"] + s["b"]
            assert len(ranks) == len(set(ranks)) == 2 * (n // 2)  # disjoint pairs; one rank out when odd
            assert all(a < b for a, b in zip(s["a"], s["b"]))
            seen += list(zip(s["a"], s["b"]))
        assert sorted(seen) == list(combinations(range(n), 2))  # every pair exactly once


@pytest.mark.unit
def test_pairings_differ_between_launches():
    first = defaultdict(set)
    for r in records("allpairs"):
        if r["type"] == "pairs" and r["step"] == 0:
            first[r["launch"]].add((r["index"], tuple(zip(r["a"], r["b"]))))
    assert len(first) == 2  # both launches recorded; their schedules come from their own seeds
    assert first[1] != first[2] or len(first[1]) == 1


@pytest.fixture(scope="module")
def slow_link(tmp_path_factory):
    db = tmp_path_factory.mktemp("screen") / "s.db"
    return db, replay("allpairs", db)


@pytest.mark.unit
def test_the_slow_link_and_nothing_else_is_flagged(slow_link):
    db, rid = slow_link
    facts = derive_stored(Store(db), rid)
    by_size = {sc.size: sc for sc in facts.screens}
    assert set(by_size) == {8, 256 << 10}
    big = by_size[256 << 10]
    assert [(f.kind, f.hosts) for f in big.flags] == [("link", ("scope-h0", "scope-h1"))]
    f = big.flags[0]
    assert f.figure_us == big.matrix_us[0, 1] == big.matrix_us[1, 0]
    assert f.lo_us > f.threshold_us >= f.typical_us * (1 + MIN_EXCESS)
    assert 3 < f.ratio < 5  # a quarter of the rate: about 4x the time of a 256 KiB message
    assert by_size[8].flags == []  # 8 bytes: the rate barely shows
    assert big.hosts == ["scope-h0", "scope-h1", "scope-h2", "scope-h3"] and big.pairs_measured == 6


@pytest.mark.unit
def test_show_and_json_carry_the_flags(slow_link):
    db, rid = slow_link
    text = run_scope("--db", str(db), "show", str(rid)).stdout
    assert "FLAGGED link scope-h0 <-> scope-h1" in text and "nothing flagged" in text
    doc = json.loads(run_scope("--db", str(db), "show", str(rid), "--json").stdout)
    flags = [f for sc in doc["screens"] for f in sc["flags"]]
    assert [(f["kind"], f["hosts"]) for f in flags] == [("link", ["scope-h0", "scope-h1"])]
    big = next(sc for sc in doc["screens"] if sc["size"] == 256 << 10)
    assert big["host_matrix_us"][0][1] == pytest.approx(flags[0]["figure_us"])
    assert big["rank_matrix_us"][1][0] == big["rank_matrix_us"][0][1]


def steps_of(values: dict[tuple[int, int], float], launch: int = 1, spread: float = 0.02) -> list[PairStep]:
    """One step holding every pair (the analysis does not care how pairs were grouped), each
    pair's interval +/- spread around its figure."""
    a, b = zip(*sorted(values))
    v = [values[k] for k in sorted(values)]
    return [
        PairStep(
            "p2p.allpairs",
            {"size": 1 << 20, "mode": "parallel"},
            launch,
            0,
            1,
            "parallel",
            array("q", a),
            array("q", b),
            array("q", [100] * len(v)),
            array("d", v),
            array("d", [x * (1 - spread) for x in v]),
            array("d", [x * (1 + spread) for x in v]),
            array("d", [x * 0.9 for x in v]),
        )
    ]


def run_of(n: int):
    return SimpleNamespace(context=None, ranks=n, context_record=None)


def matrix(n: int, base: float = 10.0, **over) -> dict[tuple[int, int], float]:
    m = {(i, j): base * (1 + 0.01 * ((i * 7 + j * 3) % 5)) for i, j in combinations(range(n), 2)}
    m.update({tuple(int(x) for x in k[1:].split("_")): v for k, v in over.items()})
    return m


@pytest.mark.unit
def test_one_slow_link_by_hand():
    sc = screen_point(steps_of(matrix(5, _1_3=40.0)), run_of(5), None)
    assert [(f.kind, f.hosts) for f in sc.flags] == [("link", ("rank 1", "rank 3"))]
    links = next(j for j in sc.judged if j.what == "links")
    # 10 links: 10.1 10.1 10.2 10.3 10.3 10.3 10.3 10.4 10.4 40: median 10.3, MAD 0.1,
    # threshold max(1.25 x 10.3, 10.3 + 4 x 1.4826 x 0.1) = max(12.875, 10.893) = 12.875
    assert links.typical_us == pytest.approx(10.3) and links.mad_us == pytest.approx(0.1)
    assert links.threshold_us == pytest.approx(12.875)


@pytest.mark.unit
def test_a_host_slow_to_every_other_is_one_host_not_four_links():
    slow = {f"_{min(2, j)}_{max(2, j)}": 30.0 for j in (0, 1, 3, 4)}
    sc = screen_point(steps_of(matrix(5, **slow)), run_of(5), None)
    assert [(f.kind, f.hosts) for f in sc.flags] == [("host", ("rank 2",))]
    assert sc.flags[0].links == 4 and sc.flags[0].figure_us == 30.0


@pytest.mark.unit
def test_noise_and_a_straddling_interval_are_not_flagged():
    assert screen_point(steps_of(matrix(6)), run_of(6), None).flags == []
    # 13.5 is above the threshold (typical 10.3, MAD 0.1: 12.875), but its interval (+/- 10 %)
    # reaches below it: not beyond doubt
    sc = screen_point(steps_of(matrix(6, base=10.0, _0_5=13.5), spread=0.1), run_of(6), None)
    assert sc.flags == []
    # the same figure measured tightly (13.365 at its lowest) is flagged
    sc = screen_point(steps_of(matrix(6, base=10.0, _0_5=13.5), spread=0.01), run_of(6), None)
    assert [(f.kind, f.hosts) for f in sc.flags] == [("link", ("rank 0", "rank 5"))]


@pytest.mark.unit
def test_launches_widen_the_interval():
    """Over launches a pair's figure is their median and its interval spans theirs: a link slow in
    one launch of three is not flagged."""
    steps = steps_of(matrix(5), 1) + steps_of(matrix(5, _0_1=30.0), 2) + steps_of(matrix(5), 3)
    sc = screen_point(steps, run_of(5), None)
    assert sc.launches == 3 and sc.flags == []
    assert sc.matrix_lo_us[0, 1] < sc.matrix_us[0, 1] < 12 < sc.matrix_hi_us[0, 1]


@pytest.mark.unit
def test_screens_json_has_the_keys_json_md_gives(slow_link):
    """docs/json.md's `screens` object and its `flags` entries, key for key."""
    doc_text = (ROOT / "docs" / "json.md").read_text().replace("\n", " ")
    part = doc_text[doc_text.index("`screens` one object") :]
    spans = re.findall(r"`\{([^}]*)\}`", part)
    screen_keys, flag_keys = ({k.strip() for k in s.split(",")} for s in spans[:2])
    db, rid = slow_link
    doc = json.loads(run_scope("--db", str(db), "show", str(rid), "--json").stdout)
    sc = doc["screens"][0]
    assert set(sc) == screen_keys
    big = next(s for s in doc["screens"] if s["flags"])
    assert set(big["flags"][0]) == flag_keys


@pytest.mark.unit
def test_hosts_of_several_ranks_take_the_median_of_their_rank_pairs():
    """8 ranks, 2 a host (nodes 0, 2, 4, 6): a host pair's figure is the median of its 4 rank
    pairs, the diagonal the one pair inside the host."""
    place = [SimpleNamespace(rank=r, node=r // 2 * 2, host=f"n{r // 2}") for r in range(8)]
    run = SimpleNamespace(context=SimpleNamespace(placement=place), ranks=8, context_record=None)
    values = {(i, j): 10.0 + i + j / 10 for i, j in combinations(range(8), 2)}
    sc = screen_point(steps_of(values), run, None)
    assert sc.hosts == ["n0", "n1", "n2", "n3"] and sc.host_of_rank == [0, 0, 1, 1, 2, 2, 3, 3]
    # hosts n0 (ranks 0, 1) and n1 (ranks 2, 3): pairs 0-2, 0-3, 1-2, 1-3 = 10.2, 10.3, 11.2, 11.3
    assert sc.matrix_us[0, 1] == sc.matrix_us[1, 0] == pytest.approx((10.3 + 11.2) / 2)
    assert sc.matrix_us[2, 2] == pytest.approx(14.5)  # the pair 4-5 inside n2
    assert sc.matrix_lo_us[0, 1] == pytest.approx((10.3 + 11.2) / 2 * 0.98)


def node_run(ends: list[list[float]], test: str = "node.stream"):
    place = [SimpleNamespace(rank=r, node=r, host=f"n{r}") for r in range(len(ends))]
    p = SimpleNamespace(
        test=test,
        params={"kernel": "triad"},
        whole_record={"per_rank": {"start_us": [[0.0] * len(e) for e in ends], "end_us": ends}},
    )
    return SimpleNamespace(context=SimpleNamespace(placement=place), ranks=len(ends), context_record=None, points=[p])


@pytest.mark.unit
def test_a_slow_host_in_a_node_test_by_hand():
    """4 hosts, 10 repetitions each: 100..109 us, host n2 300..309.  Medians 104.5 (x3) and
    304.5: typical 104.5, MAD 0, threshold 1.25 x 104.5 = 130.625; n2's interval from the order
    statistics 2 and 9 of 10 (301-308) lies above it."""
    ends = [[100.0 + k for k in range(10)] for _ in range(4)]
    ends[2] = [300.0 + k for k in range(10)]
    (ns,) = node_screens(node_run(ends), lambda t: "node")
    assert [(f.kind, f.hosts) for f in ns.flags] == [("host", ("n2",))]
    assert ns.judged.threshold_us == pytest.approx(130.625) and ns.flags[0].figure_us == pytest.approx(304.5)
    assert (ns.flags[0].lo_us, ns.flags[0].hi_us) == (301.0, 308.0)
    # one repetition a rank: a figure, no interval, nothing flagged on it
    (one,) = node_screens(node_run([[100.0], [100.0], [300.0], [100.0]]), lambda t: "node")
    assert one.flags == [] and one.figure_us[2] == 300.0
    assert node_screens(node_run(ends), lambda t: "p2p") == []  # node tests only


@pytest.mark.unit
def test_the_throttled_host_is_one_place_with_its_links_as_evidence(tmp_path):
    """A recorded screen of 4 testbed hosts, host 2 at a tenth of a core (tests/fixtures/
    screen-throttled): STREAM flags it, and a slow link of it in the pairs is its evidence,
    not a place of its own."""
    db = tmp_path / "t.db"
    facts = derive_stored(Store(db), replay("screen-throttled", db))
    first = facts.flagged[0]
    assert (first.kind, first.where) == ("host", ("scope-h2",))
    assert any(e.test == "node.stream" and e.kind == "host" for e in first.evidence)
    assert not any(p.kind == "link" and "scope-h2" in p.where for p in facts.flagged)
    doc = json.loads(run_scope("--db", str(db), "show", "last", "--json").stdout)
    assert doc["flagged"][0]["where"] == ["scope-h2"] and doc["node_screens"][0]["hosts"][2] == "scope-h2"


@pytest.mark.unit
def test_the_canary_per_host_is_the_median_of_its_readings(tmp_path):
    """Across nodes every rank's canary readings are kept (start and end of each launch): a
    host's figure is the median of its ranks' readings, their span its interval."""
    db = tmp_path / "t.db"
    facts = derive_stored(Store(db), replay("screen-throttled", db))
    readings = [r["per_rank"] for r in records("screen-throttled") if r["type"] == "canary"]
    assert len(readings) == 2 and all(len(r["compute_us"]) == 4 for r in readings)
    (compute,) = [ns for ns in facts.node_screens if ns.test == "canary compute"]
    for h in range(len(compute.hosts)):
        mine = [r["compute_us"][h] for r in readings]  # one rank a host here
        assert compute.figure_us[h] == pytest.approx(sum(mine) / 2)
        assert (compute.lo_us[h], compute.hi_us[h]) == (min(mine), max(mine))


@pytest.mark.unit
@pytest.mark.loads_pyarrow
def test_the_api_has_every_pair(slow_link):
    from scope.api import Results

    db, rid = slow_link
    df = Results(db).pairs(rid)
    # 2 launches x 2 sizes x 6 pairs, each pair once a launch and size
    assert len(df) == 24 and not df.duplicated(["launch", "size", "a", "b"]).any()
    assert (df["a"] < df["b"]).all() and set(df["size"]) == {8, 256 << 10}
    recs = [r for r in records("allpairs") if r["type"] == "pairs" and r["launch"] == 1 and r["step"] == 0]
    first = df[(df.launch == 1) & (df.step == 0) & (df["size"] == recs[0]["params"]["size"])]
    assert list(first["median_us"]) == pytest.approx(recs[0]["median_us"])


@pytest.mark.unit
def test_a_sampled_sweep_of_16384_ranks_is_screened_in_little_memory():
    """16,384 ranks on 1,024 hosts (16 a host), two steps of 8,192 pairs measured, the link
    between hosts 0 and 1 four times slower: the screen holds the measured pairs sparse and the
    1,024 x 1,024 host matrix, never a ranks x ranks array (three of them a launch took 6 GB at
    this size: issue 55), and still gives that host pair its figure."""
    import tracemalloc

    n, per = 16384, 16
    place = [SimpleNamespace(rank=r, node=r // per * per, host=f"n{r // per}", netns=None) for r in range(n)]
    run = SimpleNamespace(context=SimpleNamespace(placement=place), ranks=n, context_record=None)
    steps = []
    for k in range(2):
        a = array("q", [(2 * i + k * per) % n for i in range(n // 2)])
        b = array("q", [(2 * i + 1 + k * per + per - 1) % n for i in range(n // 2)])
        a, b = array("q", map(min, a, b)), array("q", map(max, a, b))
        t = array("d", [4.0 if (x // per, y // per) == (0, 1) else 1.0 for x, y in zip(a, b)])
        steps.append(PairStep("p2p.allpairs", {"size": 8}, 1, k, n - 1, "parallel", a, b, array("q", [1] * len(a)),
                              t, t, t, t))  # fmt: skip
    tracemalloc.start()
    try:
        sc = screen_point(steps, run, None)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    measured = {(x, y) for s in steps for x, y in zip(s.a, s.b)}
    assert sc.ranks == n and len(sc.hosts) == n // per and sc.pairs_measured == len(measured)
    assert sc.rank_us is None and sc.matrix_us.shape == (1024, 1024)
    assert sc.matrix_us[0, 1] == sc.matrix_us[1, 0] == 4.0 and sc.matrix_us[1, 2] == 1.0
    assert peak < 200 * 2**20, peak  # 3 host matrices of 8 MiB and the pairs; dense ranks x ranks: 6 GiB


@pytest.mark.mpi
def test_a_sampled_sweep_measures_the_steps_asked_each_pairing_every_rank(engine, tmp_path):
    """`-p steps=K` measures K of the sweep's steps (issue 55: a full sweep at 1,024 hosts is
    1,023 steps): each step measured still pairs every rank, and the screen says it is a sample."""
    db = tmp_path / "r.db"
    p = run_scope("run", "p2p.allpairs", "-n", "4", "--sizes", "8", "-p", "steps=2", "--budget", "0.02", db=db)
    assert p.returncode == 0, p.stderr
    steps = Store(db).load_run(1).pairs
    assert sorted({s.step for s in steps}) == [0, 1] and all(s.steps == 3 for s in steps)
    for s in steps:
        assert sorted([*s.a, *s.b]) == [0, 1, 2, 3]  # a perfect matching: every rank once
    doc = json.loads(run_scope("show", "1", "--json", db=db).stdout)
    sc = doc["screens"][0]
    assert (sc["steps"], sc["steps_measured"], sc["pairs_measured"], sc["pairs_expected"]) == (3, 2, 4, 6)
    assert "4 of 6 rank pairs in 2 of 3 steps (a sample)" in run_scope("show", "1", db=db).stdout
