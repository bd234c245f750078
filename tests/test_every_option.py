"""Issue 58: no option of `scope run` is silently ignored, in any module.  Every run option,
with and without each module, through `scope run --dry-run` (every check made, the run as it
would launch printed, nothing launched or stored): the option is honoured (its value is where
the run uses it: the engine's options as the plan parsed them, the command line, the front
end's own fields) or refused (exit 2, or 3 for what this machine lacks, in one line naming it).
A new option without a case here fails the completeness test below."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import pytest

from tests.conftest import run_scope

MODULES = [None, "baseline", "standard", "advanced", "screen"]
WORKLOAD = ("sizes", "test-sizes", "param", "procs", "budget")  # what a fixed module refuses
MPICC = str(Path(sys.prefix) / "bin" / "mpicc")


def engine_case(name: str, value: str | None, parsed=None):
    """An engine option: honoured when the plan parsed it to `parsed` (a list: contains it)."""

    def honoured(doc: dict) -> bool:
        got = doc["options"].get(name)
        want = True if value is None else parsed if parsed is not None else value
        return want in got if isinstance(got, list) else str(got) == str(want)

    return ([f"--{name}"] if value is None else [f"--{name}", value]), honoured, f"--{name}"


def frontend_case(argv: list[str], honoured, word: str):
    return argv, honoured, word


def cases(tmp: Path) -> dict[str, tuple]:
    if tmp.is_dir():
        (tmp / "pattern.txt").write_text("0 1 64K\n")
        (tmp / "token").write_text("scope_walk\n")
        (tmp / "p.xml").write_text('<?xml version="1.0"?>\n'
                                   '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">\n'
                                   '<platform version="4.1"><zone id="z" routing="Full">'
                                   '<host id="a" speed="1Gf" core="2"/>'
                                   '<host id="b" speed="1Gf" core="2"/><link id="l" bandwidth="1GBps" latency="1us"/>'
                                   '<route src="a" dst="b"><link_ctn id="l"/></route></zone></platform>')  # fmt: skip
    hub = ["--push", "http://127.0.0.1:9", "--token-file", str(tmp / "token")]
    return {
        "sizes": engine_case("sizes", "8,64"),
        "test-sizes": engine_case("test-sizes", "p2p.*=8"),
        "param": engine_case("param", "mode=sync"),
        "precision": engine_case("precision", "0.05"),
        "budget": engine_case("budget", "0.5"),
        "min-count": engine_case("min-count", "5"),
        "max-count": engine_case("max-count", "1000"),
        "warmup-max": engine_case("warmup-max", "100"),
        "min-time": engine_case("min-time", "0.02"),
        "order": engine_case("order", "listed"),
        "offcache": engine_case("offcache", None),
        "timer": engine_case("timer", "mpi_wtime"),
        "seed": engine_case("seed", "5"),
        "no-samples": engine_case("no-samples", None),
        "no-canary": engine_case("no-canary", None),
        "timing": engine_case("timing", "barrier"),
        "loop": engine_case("loop", "osu"),
        "thread-level": engine_case("thread-level", "multiple"),
        "procs": engine_case("procs", "1,all"),
        "sync-span": engine_case("sync-span", "0.1"),
        "sync-bound": engine_case("sync-bound", "2000"),
        "clock": engine_case("clock", "linear"),
        "clock-domain": engine_case("clock-domain", "rank"),
        "warm": engine_case("warm", "0.5"),
        "pattern": engine_case("pattern", str(tmp / "pattern.txt")),
        "io-dir": engine_case("io-dir", str(tmp)),
        "tests": frontend_case(["p2p.pingpong"], lambda d: d["tests"] == ["p2p.pingpong"], "test names"),
        "osu": frontend_case(["--osu", "osu_latency"], lambda d: d["tests"] == ["p2p.pingpong"], "--osu"),
        "ranks": frontend_case(["-n", "3"], lambda d: d["ranks"] == 3 and d["argv"][1:3] == ["-n", "3"], "-n 3"),
        "launches": frontend_case(["--launches", "2"], lambda d: d["launches"] == 2, "--launches"),
        "fixed-launches": frontend_case(["--fixed-launches"], lambda d: d["fixed_launches"] is True, "--fixed"),
        "launcher": frontend_case(["--launcher", "srun"], lambda d: d["argv"][0] == "srun", "--launcher"),
        "hosts": frontend_case(["--hosts", "localhost"], lambda d: "localhost" in d["argv"], "--hosts"),
        "launcher-args": frontend_case(["--launcher-args=-print-all-exitcodes"],
                                       lambda d: "-print-all-exitcodes" in d["argv"], "--launcher-args"),
        "env": frontend_case(["--env", "WALK_VAR=7"], lambda d: d["env"].get("WALK_VAR") == "7", "--env"),
        "mpicc": frontend_case(["--mpicc", MPICC], lambda d: d["toolchain"]["mpicc"] == MPICC, "--mpicc"),
        "label": frontend_case(["--label", "walk"], lambda d: d["label"] == "walk", "--label"),
        "timeout": frontend_case(["--timeout", "500"], lambda d: d["timeout_s"] == 500, "--timeout"),
        "quiet": frontend_case(["--quiet"], lambda d: d["progress"] is False, "--quiet"),
        "save-stream": frontend_case(["--save-stream", str(tmp / "s")], lambda d: d["save_stream"] == str(tmp / "s"),
                                     "--save-stream"),
        "force": frontend_case(["--force"], lambda d: d["force"] is True, "--force"),
        "canary": frontend_case(["--canary"], lambda d: d["options"]["no-canary"] is False, "--canary"),
        "time-limit": frontend_case(["--time-limit", "60"],
                                    lambda d: (d["module"] or {}).get("time_limit_s") == 60, "--time-limit"),
        "testbed": frontend_case(["--testbed", "walk-none"], lambda d: d["testbed"] == "walk-none", "walk-none"),
        "ppn": frontend_case(["--ppn", "2"], lambda d: d["ppn"] == 2, "--ppn"),
        "push": frontend_case(hub, lambda d: d["push"]["hub"] == "http://127.0.0.1:9", "--push"),
        "token-file": frontend_case(hub, lambda d: d["push"]["token"] == "--token-file", "--token-file"),
        "cluster": frontend_case([*hub, "--cluster", "walk"], lambda d: d["push"]["cluster"] == "walk", "--cluster"),
        "sim": frontend_case(["--sim", str(tmp / "p.xml")], lambda d: d["argv"][0].endswith("smpirun"), "--sim"),
        "sim-ppn": frontend_case(["--sim", str(tmp / "p.xml"), "--sim-ppn", "2"],
                                 lambda d: d["sim"]["ranks_per_host"] == 2, "--sim"),
        "sim-clocks": frontend_case(["--sim", str(tmp / "p.xml"), "--sim-clocks", "5:10:2"],
                                    lambda d: d["sim"]["host_clocks"]["seed"] == 5, "--sim-clocks"),
        "sim-cfg": frontend_case(["--sim", str(tmp / "p.xml"), "--sim-cfg", "exact"],
                                 lambda d: "network/model:CM02" in d["sim"]["config"], "--sim-cfg"),
    }  # fmt: skip


# options that are not settings of a run: the module is the walk's other axis, --dry-run its
# means, --help prints and exits
NOT_SETTINGS = {"module", "dry-run", "help"}
NAMES = sorted(cases(Path("/nonexistent")).keys())


@pytest.mark.mpi
def test_every_run_option_has_a_case_here(engine):
    """The walk covers every option `scope run` offers (the engine's table and the front end's)."""
    from scope.cli.parser import build_parser
    from scope.cli.runcmd import run_options

    parser = build_parser(run_options(argparse.Namespace(mpicc=None)))
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    offered = set()
    for action in sub.choices["run"]._actions:
        longs = [s for s in action.option_strings if s.startswith("--")]
        offered.add(longs[0][2:] if longs else action.dest)
    assert offered - NOT_SETTINGS == set(NAMES), "a run option has no case in tests/test_every_option.py"


def _refused(p, word: str) -> bool:
    one_line = p.stderr.strip().count("\n") == 0
    return p.returncode in (2, 3) and one_line and word in p.stderr and "Traceback" not in p.stderr


@pytest.mark.mpi
@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("module", MODULES, ids=lambda m: m or "no-module")
def test_an_option_is_honoured_or_refused_never_ignored(engine, tmp_path, module, name):
    argv, honoured, word = cases(tmp_path)[name]
    mod = ["--module", module] if module else []
    if module == "baseline" and name != "force":
        mod.append("--force")  # past the minimum configuration, which this 2-core machine may miss
    env = {"SCOPE_NO_CANARY": ""} if name in ("no-canary", "canary") else {}  # the suite sets it for every run
    p = run_scope("run", *mod, *argv, "--dry-run", db=tmp_path / "r.db", env=env)
    if p.returncode == 0:
        doc = json.loads(p.stdout)
        assert honoured(doc), f"{name} accepted but not honoured: {json.dumps(doc)[:2000]}"
        assert not (tmp_path / "r.db").exists() and not (tmp_path / "s").exists()  # a dry run writes nothing
    else:
        assert _refused(p, word), f"{name}: neither honoured nor refused naming {word!r}: {p.stderr}"
    # the rules this walk holds the modules to: a fixed module refuses its workload's options
    if module in ("baseline", "standard", "screen") and name in WORKLOAD:
        assert p.returncode == 2 and f"the {module} module sets its own workload" in p.stderr
    if module == "advanced" and name in WORKLOAD:
        assert p.returncode == 0
    if name == "time-limit":
        assert (p.returncode == 0) == (module == "standard"), p.stderr
