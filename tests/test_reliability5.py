"""The fifth hostile pass (issue 69), simulated platforms: what SimGrid would abort on is refused
before anything is stored, in one line naming the fix; what only SimGrid can judge is asked of
it first; a simulated run leaves no folder and is marked wherever it is listed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scope.errors import ScopeError
from scope.run.sim import check_cores, simgrid_reason
from scope.run.simplatform import read_platform
from scope.store import Store
from tests.conftest import replay, require_simgrid, run_scope
from tests.hub_server import Hub

HEAD = '<?xml version="1.0"?>\n<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">\n<platform version="4.1">\n'
TWO = '<host id="a" speed="1Gf"/><host id="b" speed="1Gf"/>'
ROUTE = '<route src="a" dst="b"><link_ctn id="l"/></route>'


def zone(body: str, routing: str = "Full") -> str:
    return f'{HEAD}<zone id="z" routing="{routing}">{body}</zone>\n</platform>\n'


def link(bw: str = "1GBps", lat: str = "1us") -> str:
    return f'{TWO}<link id="l" bandwidth="{bw}" latency="{lat}"/>{ROUTE}'


def cluster(radical: str, core: str = "1") -> str:
    attrs = f'prefix="n" suffix="" radical="{radical}" core="{core}" speed="1Gf" bw="1GBps" lat="1us"'
    return f'{HEAD}<cluster id="c" {attrs}/>\n</platform>\n'


# (case, platform text, words the refusal holds): each launched, before, into an abort (exit 134)
DTD = '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">\n'
REFUSED = [
    ("doctype naming a file", zone(link()).replace('"https://simgrid.org/simgrid.dtd"', '"/etc/passwd"'), "DOCTYPE"),
    ("no doctype", zone(link()).replace(DTD, ""), "DOCTYPE"),
    ("an inline DTD subset", zone(link()).replace('simgrid.dtd">', 'simgrid.dtd" [<!ENTITY x "y">]>'), "DOCTYPE"),
    ("a negative bandwidth", zone(link(bw="-1GBps")), "rate must be finite and above zero"),
    ("a zero bandwidth", zone(link(bw="0Bps")), "rate must be finite and above zero"),
    ("an infinite bandwidth", zone(link(bw="infBps")), "rate must be finite and above zero"),
    ("a 400-digit bandwidth", zone(link(bw="9" * 400 + "Bps")), "rate must be finite and above zero"),
    ("a bandwidth without a number", zone(link(bw="fastBps")), "is not a rate"),
    ("a bandwidth in seconds", zone(link(bw="1s")), "is not a rate"),
    ("a negative latency", zone(link(lat="-1us")), "time must be finite and not negative"),
    ("an infinite latency", zone(link(lat="infs")), "time must be finite and not negative"),
    ("a NaN latency", zone(link(lat="nans")), "time must be finite and not negative"),
    ("a zero host speed", zone(link()).replace('id="a" speed="1Gf"', 'id="a" speed="0f"'), "speed must be"),
    ("no route between two hosts", zone(f'{TWO}<link id="l" bandwidth="1GBps" latency="1us"/>'), "no route from host"),
    ("a one-way route (Floyd)", zone(link().replace("<route ", '<route symmetrical="NO" '), "Floyd"), "no route"),
    ("a duplicate host id", zone('<host id="a" speed="1Gf"/><host id="a" speed="1Gf"/>'), "two hosts are named 'a'"),
    ("a host id with a newline", zone('<host id="a&#10;b" speed="1Gf"/>'), "control character"),
    ("a host id with a space", zone('<host id="a b" speed="1Gf"/>'), "space"),
    ("a cluster host named as a host", cluster("0-1").replace("<cluster", '<zone id="y" routing="Full"><host id="n1" speed="1Gf"/></zone><cluster'), "two hosts are named 'n1'"),  # noqa: E501
    ("a radical of letters", cluster("a-b"), "is no range"),
    ("a negative radical", cluster("-5"), "is no range"),
    ("a backward radical", cluster("9-2"), "is no range"),
    ("a radical of 10^11 hosts", cluster("0-99999999999"), "more than SCOPE simulates"),
    ("zero cores", cluster("0-1", core="0"), "not a count of cores"),
    ("cores that are no number", cluster("0-1", core="many"), "not a count of cores"),
]  # fmt: skip


@pytest.mark.unit
@pytest.mark.parametrize("case,text,words", REFUSED, ids=[c[0] for c in REFUSED])
def test_a_platform_simgrid_would_abort_on_is_refused_with_the_line_to_fix(tmp_path, case, text, words):
    f = tmp_path / "p.xml"
    f.write_text(text)
    with pytest.raises(ScopeError) as e:
        read_platform(str(f))
    assert words in e.value.message + (e.value.hint or ""), e.value.message
    assert "\n" not in e.value.message.replace("'a\\nb'", "")  # one line


@pytest.mark.unit
def test_a_radical_is_counted_before_a_host_is_named(tmp_path):
    import tracemalloc

    f = tmp_path / "p.xml"
    f.write_text(cluster("0-99999999999"))
    tracemalloc.start()
    with pytest.raises(ScopeError):
        read_platform(str(f))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 8 << 20  # nothing expanded: a 10^11-host list would never end


@pytest.mark.unit
def test_platforms_simgrid_runs_are_read_with_their_hosts_and_cores(tmp_path):
    f = tmp_path / "p.xml"
    for text, hosts, cores in (
        (zone(link()), ["a", "b"], [1, 1]),
        (zone(link(lat="0s")), ["a", "b"], [1, 1]),  # a zero latency ran here (SimGrid 3.32)
        (zone(link(bw="1.25e9Bps")), ["a", "b"], [1, 1]),
        (cluster("0-1,4", core="4"), ["n0", "n1", "n4"], [4, 4, 4]),
        (zone(link().replace("<route ", '<route symmetrical="NO" ') + ROUTE.replace('"a" dst="b"', '"b" dst="a"'),
              "Floyd"), ["a", "b"], [1, 1]),
    ):  # fmt: skip
        f.write_text(text)
        p = read_platform(str(f))
        assert (p.hosts, p.cores) == (hosts, cores)


@pytest.mark.unit
def test_more_ranks_than_cores_are_refused_and_the_hosts_used_are_counted(tmp_path):
    f = tmp_path / "p.xml"
    f.write_text(cluster("0-1", core="4"))
    p = read_platform(str(f))
    with pytest.raises(ScopeError) as e:
        check_cores(p, 16, 1)  # -n 16 on 2 hosts of 4 cores
    assert "put 8 on host 'n0', which has 4 core(s)" in e.value.message and "at most 8 ranks" in e.value.hint
    assert check_cores(p, 8, 1) == 4 and check_cores(p, 4, 4) == 4 and check_cores(p, 2, 1) == 1
    f.write_text(cluster("0-3"))
    with pytest.raises(ScopeError):
        check_cores(read_platform(str(f)), 8, 4)  # --sim-ppn 4 on 1-core hosts


# SimGrid's own words on why it stopped, as it wrote them (SimGrid 3.32, Debian)
STOPPED = [
    ("[0.000002] ./src/kernel/lmm/System.cpp:628: [root/CRITICAL] Variable penalty should not be negative!\n"
     "Backtrace (displayed in actor maestro):\n", "Variable penalty should not be negative!"),
    ("[0.000000] ./src/surf/network_cm02.cpp:322: [root/CRITICAL] You're trying to send data from b to a but "
     "there is no connecting path between these two hosts.\n",
     "You're trying to send data from b to a but there is no connecting path between these two hosts."),
    ("[0.000000] ./src/xbt/exception.cpp:40: [xbt_exception/CRITICAL] Uncaught exception simgrid::AssertionError "
     "by maestro/0: Refusing to create a second host named 'a'.\n[0.000000] ./src/xbt/exception.cpp:45: "
     "[xbt_exception/CRITICAL] Backtrace:\n", "Refusing to create a second host named 'a'."),
]  # fmt: skip


@pytest.mark.unit
@pytest.mark.parametrize("stderr,reason", STOPPED)
def test_simgrids_first_line_is_the_reason_a_simulation_stopped(stderr, reason):
    assert simgrid_reason("[smpi/INFO] starting\n" + stderr) == reason
    assert simgrid_reason("Aborted\n") is None


WRITER = [
    (["--rate", "0Gbps"], "no rate a link can have"),
    (["--rate", "9" * 400 + "Gbps"], "no rate a link can have"),
    (["--latency", "9" * 400 + "s"], "no latency a link can have"),
    (["--slow", "1:0.5", "--slow", "1:0.25"], "names host 1 more than once"),
]


@pytest.mark.unit
@pytest.mark.parametrize("argv,words", WRITER, ids=["zero rate", "400-digit rate", "400-digit latency", "--slow twice"])
def test_scope_sim_platform_writes_nothing_that_cannot_run(tmp_path, argv, words):
    out = tmp_path / "p.xml"
    p = run_scope("sim", "platform", "--hosts", "4", *argv, "-o", out)
    assert p.returncode == 2 and words in p.stderr and not out.exists(), p.stderr
    assert len(p.stderr.strip().splitlines()) == 1


def simgrid() -> None:
    require_simgrid()


@pytest.fixture
def platform(tmp_path) -> Path:
    simgrid()
    plat = tmp_path / "two.xml"
    assert run_scope("sim", "platform", "--hosts", "2", "--cores", "2", "-o", plat).returncode == 0
    return plat


def scratch_env(tmp_path: Path) -> dict:
    tmp = tmp_path / "tmp"
    tmp.mkdir(exist_ok=True)
    return {"TMPDIR": str(tmp)}


SETTINGS = [
    ("foo/bar:1", "Bad config key: foo/bar"),
    ("network/model:Nonexistent", "Model 'Nonexistent' is invalid"),
    ("smpi/host-speed:-1", "it must be positive"),
    ("network/latency-factor:abc", "invalid double"),
    ("k" * 100_000 + ":1", "is not a SimGrid setting"),
]


@pytest.mark.build  # builds the simulation engine once (~20 s), then SimGrid reads each setting
@pytest.mark.parametrize("setting,words", SETTINGS, ids=[s[0][:30] for s in SETTINGS])
def test_a_setting_simgrid_refuses_is_refused_in_its_words_before_a_run_is_stored(tmp_path, platform, setting, words):
    db, env = tmp_path / "r.db", scratch_env(tmp_path)
    p = run_scope("run", "p2p.pingpong", "--sim", platform, "--sim-cfg", setting, "-n", "2", db=db, env=env)
    assert p.returncode == 2 and words in p.stderr, p.stderr[-400:]
    said = [ln for ln in p.stderr.splitlines() if not ln.startswith("scope: building ")]  # a first build says so
    assert len(said) == 1 and said[0].startswith("scope: error: ") and len(said[0]) < 400, said
    assert not db.exists() or Store(db).runs() == []
    assert list((tmp_path / "tmp").iterdir()) == []  # the refused run's folder went with it


@pytest.mark.build
def test_a_simulated_run_skips_node_tests_leaves_no_folder_and_is_marked_where_listed(tmp_path, platform):
    db, env = tmp_path / "r.db", scratch_env(tmp_path)
    argv = ["p2p.pingpong", "node.stream", "--sim", platform, "-n", "2", "--sizes", "8,64K"]
    p = run_scope("run", *argv, db=db, env=env)
    assert p.returncode == 0, p.stderr
    assert "node.stream" in p.stderr and "which SimGrid does not simulate" in p.stderr
    run = Store(db).load_run(1, samples=False)
    assert {q.test for q in run.points} == {"p2p.pingpong"}  # no host figure shown as the platform's
    assert [e.message for e in run.events if e.type == "skip" and e.test == "node.stream"]
    assert list((tmp_path / "tmp").iterdir()) == []  # no scope-sim-* left
    assert "[simulated] SMPI" in run_scope("runs", db=db).stdout
    page = tmp_path / "sim.html"  # issue 70: the report is headed SIMULATED, not told at 98 % of the page
    assert run_scope("report", "1", "-o", page, db=db).returncode == 0
    html = page.read_text()
    assert 0 < html.index("Run 1: SIMULATED: SimGrid") < html.index("<section")
    csv_text = run_scope("export", "1", "--format", "csv", db=db).stdout
    assert csv_text.splitlines()[1].split(",")[2] == f"simulated {run.context.sim['platform_sha256'][:12]}"
    measured = run_scope("run", "p2p.pingpong", "-n", "2", "--sizes", "8,64K", db=db)  # this machine's: run 2
    assert measured.returncode == 0, measured.stderr
    p = run_scope("compare", "2", "1", db=db)  # the model is no regression of the machine, nor the reverse
    assert p.returncode == 0 and "[simulated]" in p.stderr and "no difference fails it" in p.stderr
    tok = run_scope("hub", "token", "add", "simcluster", "--db", tmp_path / "hub.db").stdout.strip()
    with Hub(str(tmp_path / "hub.db")) as hub:
        pushed = run_scope("push", "1", "--hub", hub.base, db=db, env={"SCOPE_HUB_TOKEN": tok})
        assert pushed.returncode == 0 and "simulated (SimGrid): marked so on the hub" in pushed.stdout, pushed.stderr
        (row,) = hub.get_json("/api/clusters")["clusters"]
        assert row["origin"] == f"simulated {run.context.sim['platform_sha256'][:12]}"
        assert b"<b>simulated</b> (SimGrid, platform" in hub.get("/")[1]


@pytest.mark.build
def test_more_ranks_than_the_platforms_cores_are_refused_before_a_run(tmp_path, platform):
    db = tmp_path / "r.db"
    p = run_scope("run", "p2p.pingpong", "--sim", platform, "-n", "16", db=db)
    assert p.returncode == 2 and "a simulated rank has a core of its own" in p.stderr, p.stderr
    assert not db.exists() or Store(db).runs() == []


# The screen's verdict (issue 69): a flag is a claim; where the machine cannot support it, said so.


@pytest.mark.unit
def test_a_screen_on_more_ranks_than_cores_says_its_flags_are_weak(tmp_path):
    """The recorded testbed run (4 ranks in 4 namespaces of this 2-core machine, link 0-1 slow):
    the flag stands, marked weak with the reason, in the screen and in the run's flagged list."""
    db = tmp_path / "r.db"
    rid = replay("allpairs", db)
    doc = json.loads(run_scope("show", str(rid), "--json", db=db).stdout)
    big = next(s for s in doc["screens"] if s["flags"])
    assert big["weak"] == "4 ranks on vm's 2 cores: a pair's time holds other ranks' turns on a core"
    assert [(p["kind"], p["weak"]) for p in doc["flagged"]] == [("link", big["weak"])]
    shown = run_scope("show", str(rid), db=db).stdout
    assert "WEAK evidence: 4 ranks on vm's 2 cores" in shown and "these flags are no proof" in shown


@pytest.mark.unit
def test_weak_reasons_from_cores_and_round_trips():
    from types import SimpleNamespace

    from scope.analysis.evidence import weak_reason
    from scope.model.context import Placement

    def run(ranks: int, cores: int):
        places = [Placement(r, "h", r, None, None) for r in range(ranks)]
        return SimpleNamespace(context=SimpleNamespace(sim=None, nodes=[{"host": "h", "cores": cores}],
                                                       placement=places, oversubscribed=False))  # fmt: skip

    def steps(n: int):
        from array import array

        return [SimpleNamespace(n=array("q", [n, n]))]

    assert (
        weak_reason(run(4, 2), steps(20)) == "4 ranks on h's 2 cores: a pair's time holds other ranks' turns on a core"
    )
    assert weak_reason(run(4, 4), steps(20)) is None
    assert "a median of 5 round trips (fewer than 8)" in weak_reason(run(4, 4), steps(5))
