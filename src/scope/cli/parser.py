"""The scope command's arguments: one parser, each command declared by a function of its own
(`add_NAME`) bound to its handler, "module:function", whose module main imports only when the
command is chosen (`scope --help` and the run path do not pay for what other commands need).
Here the commands that measure (list, tune, testbed, doctor, submit, modules, build); `run` in
cli/parser_run.py, those that read the store in cli/parser_reads.py, the hub's and sim's in
cli/parser_hub.py; the value checks in cli/argtypes.py."""

from __future__ import annotations

import argparse

from scope.catalog.modules import NAMES, TIME_LIMIT_S
from scope.catalog.options import EngineOption
from scope.cli.argtypes import (
    MOST_RANKS,
    Parser,
    command,
    fraction,
    given,
    launch_count,
    rank_count,
    seconds_up_to_a_week,
    shared,
    whole,
)
from scope.cli.parser_hub import add_hub_commands, add_sim_commands, push_options
from scope.cli.parser_reads import add_reading_commands
from scope.cli.parser_run import add_run
from scope.version import __version__


def build_parser(
    engine: list[EngineOption] | None = None, run_help: bool = False, only_run: bool = False
) -> argparse.ArgumentParser:
    """The command line.  `engine` is the engine's option table for `scope run`; without it
    the run command is parsed only far enough to find --mpicc (see main).  `only_run`: the run
    command alone, for its second parse (the other commands' declarations cost every run ~8 ms)."""
    ap = Parser(prog="scope", description="SCOPE: measure and explain message-passing performance.")
    ap.add_argument("--version", action="version", version=f"scope {__version__}")
    ap.add_argument(
        "--db",
        type=given("a database path, or leave --db out for the default"),
        help="results database (default $SCOPE_DB or ~/.local/share/scope/results.db)",
    )
    sub = ap.add_subparsers(dest="cmd", metavar="COMMAND", parser_class=Parser)

    add_run(sub, engine, run_help)
    if only_run:
        return ap
    add_list(sub)
    add_tune(sub)
    add_testbed(sub)
    add_doctor(sub)
    add_submit(sub)
    add_modules(sub)
    add_build(sub)
    add_reading_commands(sub)
    add_hub_commands(sub)
    add_sim_commands(sub)

    return ap


def add_list(sub) -> None:
    """scope list: the tests, their parameters, and OMB's programs."""
    ls = command(sub, "list", "scope.cli.listcmd:cmd_list", help="the tests, their summaries and parameters")
    shared(ls, "--json", "machine-readable: the engine's test records (docs/json.md)")
    ls.add_argument("--osu", action="store_true", help="every OMB 7.4 program with the SCOPE setting of its definition")
    shared(ls, "--mpicc", "MPI compiler wrapper whose engine to ask (default $MPICC, this venv's, PATH)")


def add_tune(sub) -> None:
    """scope tune: the MPI's algorithm choices, measured."""
    tu = command(
        sub,
        "tune",
        "scope.tune.command:cmd_tune",
        help="every algorithm of a collective, the switch points, MPICH's tuning file",
    )
    tu.add_argument("collectives", nargs="+", help="allreduce, bcast, allgather, alltoall, reduce, barrier")
    tu.add_argument(
        "-n",
        "--ranks",
        type=whole(2, f"at least 2 and at most {MOST_RANKS}", MOST_RANKS),
        default=2,
        help="ranks to launch (default 2)",
    )
    tu.add_argument("--sizes", default="8-1M:x8", help="message sizes (default 8-1M:x8)")
    tu.add_argument("--procs", default="all", help="process counts, e.g. 2,4 (default all)")
    tu.add_argument("--budget", default="0.2", help="seconds per point at most (default 0.2)")
    tu.add_argument(
        "--launches", type=launch_count(1), default=3, help="launches per algorithm: the replicates (default 3)"
    )
    tu.add_argument("--timeout", type=seconds_up_to_a_week, help="seconds without output before a launch is stopped")
    tu.add_argument("--alpha", type=fraction(0.5), default=0.05, help="significance level (default 0.05)")
    tu.add_argument("--min-effect", type=fraction(0.5), default=0.02, help="smallest gain that counts (default 0.02)")
    tu.add_argument(
        "--algorithms",
        type=given("algorithm names, e.g. ring,recursive_doubling, or leave it out for all"),
        help="only these algorithms, e.g. ring,recursive_doubling (default: all offered)",
    )
    tu.add_argument(
        "-o",
        "--output",
        type=given("a file, or leave -o out"),
        help="write MPICH's selection file here (and FILE.scope.json beside it)",
    )
    tu.add_argument(
        "--report",
        metavar="HTML",
        type=given("a file, or leave --report out"),
        help="write every algorithm's curves with the chosen bands here",
    )
    tu.add_argument(
        "--apply",
        metavar="FILE",
        type=given("a tuning file, or leave --apply out"),
        help="measure the collectives with FILE in force against the default",
    )
    tu.add_argument("--force", action="store_true", help="--apply a file tuned for another MPI version")
    shared(tu, "--mpicc")
    tu.add_argument(
        "--testbed",
        metavar="NAME",
        type=given("a testbed's name ('scope testbed status' lists them)"),
        help="tune across the hosts of a testbed ('scope testbed up')",
    )
    tu.add_argument(
        "--ppn",
        type=given("processes per host, e.g. 1,2, or leave --ppn out"),
        help="with --testbed: processes per host to tune for, e.g. 1,2 (a decision per value)",
    )


def add_testbed(sub) -> None:
    """scope testbed: hosts in network namespaces, their links shaped."""
    tb = command(
        sub,
        "testbed",
        "scope.cli.testbedcmd:cmd_testbed",
        help="test hosts in network namespaces on this machine (needs root)",
    )
    tbs = tb.add_subparsers(dest="action", metavar="ACTION", parser_class=Parser)
    tbu = tbs.add_parser("up", help="create N hosts joined by veth pairs, optionally rate-limited")
    tbu.add_argument("--hosts", type=whole(0, "a number of hosts", 1 << 20), default=2, help="number of hosts (2..64)")
    tbu.add_argument(
        "--rate",
        type=given("a rate, e.g. 100mbit, or leave --rate out"),
        help="egress rate per host for tc tbf, e.g. 100mbit (Fast Ethernet), 1gbit",
    )
    tbu.add_argument(
        "--burst",
        default="16kb",
        type=given("a burst, e.g. 16kb"),
        help="tbf burst (default 16kb: small, so short messages obey the rate)",
    )
    tbu.add_argument("--mtu", type=int, default=1500, help="bytes, the links' MTU (default 1500)")
    tbu.add_argument(
        "--link-rate",
        action="append",
        metavar="I-J=RATE",
        type=given("a slow link, e.g. 0-1=25mbit"),
        help="plant a slow link: hosts I and J (from 0) exchange at RATE both ways (repeatable)",
    )
    tbu.add_argument(
        "--throttle",
        action="append",
        metavar="I=SHARE",
        type=given("a slow host, e.g. 2=0.25"),
        help="plant a slow host: host I's processes get SHARE of one core, a CFS quota (repeatable)",
    )
    tbu.add_argument("--name", default="scope", type=given("a name"), help="the testbed's name (default scope)")
    for act in ("down", "status"):
        x = tbs.add_parser(act, help=f"{act} the testbed")
        x.add_argument("--name", default="scope", type=given("a name"), help="the testbed's name (default scope)")


def add_doctor(sub) -> None:
    """scope doctor: what this machine and MPI can do."""
    dr = command(
        sub,
        "doctor",
        "scope.cli.doctorcmd:cmd_doctor",
        help="check MPI, the engine build, timers, cores and the database",
    )
    dr.add_argument("-n", "--ranks", type=rank_count, default=2, help="MPI ranks of the check launch (default 2)")
    shared(dr, "--mpicc", "MPI compiler wrapper to check (default $MPICC, this venv's, PATH)")
    shared(dr, "--json")
    dr.add_argument("--module", choices=["baseline"], help="also check the baseline's minimum configuration")


def add_submit(sub) -> None:
    """scope submit: a run as a Slurm batch job."""
    su = command(
        sub,
        "submit",
        "scope.cli.submitcmd:cmd_submit",
        help="a module or tests as a Slurm batch job (sbatch), stored when it ends",
    )
    su.add_argument("tests", nargs="*", help="tests, when no --module")
    su.add_argument("--module", choices=list(NAMES), help="run a SCOPE module in the job (SCOPE §8.1)")
    su.add_argument("-N", "--nodes", type=rank_count, default=1, help="nodes (default 1)")
    su.add_argument("-n", "--ntasks", type=rank_count, default=2, help="ranks (default 2)")
    su.add_argument("--partition", help="Slurm partition (#SBATCH --partition)")
    su.add_argument("--account", help="the account to charge (sbatch --account)")
    su.add_argument("--qos", help="the quality of service (sbatch --qos)")
    su.add_argument("--constraint", help="node features the job needs (sbatch --constraint), e.g. 'ib&avx512'")
    su.add_argument("--exclusive", action="store_true", help="nodes for this job alone (sbatch --exclusive)")
    su.add_argument(
        "--sbatch-arg",
        action="append",
        default=[],
        metavar="--OPTION[=VALUE]",
        help="any other sbatch option, one per use, written as an #SBATCH line (e.g. --sbatch-arg=--mem=8G)",
    )
    su.add_argument("--time", help="the job's time limit, as sbatch takes it (e.g. 30:00)")
    shared(su, "--mpicc", "the cluster MPI's compiler wrapper (default: this environment's)")
    shared(su, "--label", "a name for the job's run")
    su.add_argument("--run-args", help="more scope run arguments, quoted as one string")
    su.add_argument(
        "--script",
        type=given("a file, or leave --script out"),
        help="where to write the batch script (default: ./scope-MODULE-DATE.sbatch)",
    )
    su.add_argument(
        "--output-dir",
        type=given("a folder, or leave --output-dir out"),
        help="where the job's output goes (default: here)",
    )
    su.add_argument("--wait", action="store_true", help="wait for the job and name its run")
    push_options(su, "--push")


def add_modules(sub) -> None:
    """scope modules: the baseline, standard and advanced modules."""
    mo = command(
        sub,
        "modules",
        "scope.cli.modulecmd:cmd_modules",
        help="the baseline, standard and advanced modules and the minimum configuration",
    )
    mo.add_argument(
        "--time-limit",
        type=seconds_up_to_a_week,
        default=TIME_LIMIT_S,
        help="the standard module's time (s, at most a week)",
    )


def add_build(sub) -> None:
    """scope build: the engine for an MPI."""
    b = command(sub, "build", "scope.cli.buildcmd:cmd_build", help="build the engine for an MPI and print its path")
    shared(b, "--mpicc", "MPI compiler wrapper to build with (default $MPICC, this venv's, PATH)")
    b.add_argument(
        "--clock-lib",
        action="store_true",
        help="build SCOPE's clock library (header, shared library, pkg-config file) and install it under --prefix",
    )
    b.add_argument(
        "--prefix",
        type=given("a folder to install under, or leave --prefix out"),
        help="where --clock-lib installs (default: this Python environment, where scope.clock finds it)",
    )
