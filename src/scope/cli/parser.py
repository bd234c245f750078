"""The scope command's arguments: one parser; here the commands that measure (run, list,
tune, testbed, doctor, submit, modules, build), in cli/parser_reads.py those that read the
store, their value checks in cli/argtypes.py; the engine's own options come from its table."""

from __future__ import annotations

import argparse

from scope.catalog.baseline import DEFAULT_LAUNCHES, SIM_HOST_CLOCKS
from scope.catalog.modules import NAMES, TIME_LIMIT_S
from scope.catalog.options import EngineOption, add_arguments
from scope.cli.argtypes import (
    MOST_RANKS,
    Parser,
    command,
    fraction,
    given,
    launch_count,
    positive_float,
    positive_int,
    rank_count,
    seconds_up_to_a_week,
    shared,
    whole,
)
from scope.cli.parser_hub import add_hub_commands, add_sim_commands, push_options
from scope.cli.parser_reads import add_reading_commands
from scope.version import __version__


def build_parser(engine: list[EngineOption] | None = None, run_help: bool = False) -> argparse.ArgumentParser:
    """The command line.  `engine` is the engine's option table for `scope run`; without it
    the run command is parsed only far enough to find --mpicc (see main)."""
    ap = Parser(prog="scope", description="SCOPE: measure and explain message-passing performance.")
    ap.add_argument("--version", action="version", version=f"scope {__version__}")
    ap.add_argument(
        "--db",
        type=given("a database path, or leave --db out for the default"),
        help="results database (default $SCOPE_DB or ~/.local/share/scope/results.db)",
    )
    sub = ap.add_subparsers(dest="cmd", metavar="COMMAND", parser_class=Parser)

    # run's help waits for the engine's options (the first parse only finds --mpicc), unless the
    # engine cannot be had: then run_help gives it without them
    r = command(
        sub,
        "run",
        "scope.cli.runcmd:cmd_run",
        help="measure: the point-to-point baseline unless tests are named",
        add_help=bool(engine) or run_help,
    )
    r.add_argument("tests", nargs="*", help="test names or patterns, e.g. p2p.pingpong 'p2p.*'")
    r.add_argument(
        "--osu",
        metavar="PROGRAM",
        type=given("an OMB program's name (scope list --osu lists them)"),
        help="the SCOPE setting with an OMB 7.4 program's definition, e.g. osu_mbw_mr",
    )
    r.add_argument("-n", "--ranks", type=rank_count, help="MPI ranks (default 2)")
    if engine:  # the engine's own options, ranges and defaults: see scope/catalog/options.py
        add_arguments(r, engine)
    r.add_argument(
        "--launches",
        type=launch_count(1),
        metavar="N",
        help="separate launches of the job, the replicates whose spread the intervals cover "
        f"(default {DEFAULT_LAUNCHES}, or $SCOPE_LAUNCHES; 1: the intervals cover that launch only)",
    )
    r.add_argument(
        "--fixed-launches",
        action="store_true",
        help="measure every launch to the same precision (default: from the second launch on, a point whose "
        "launches already differ is measured only as far as that spread makes worth it; docs/method.md)",
    )
    r.add_argument(
        "--launcher", choices=["mpiexec", "srun"], default="mpiexec", help="how ranks start: mpiexec, or Slurm's srun"
    )
    r.add_argument("--hosts", type=given("host names, or leave --hosts out"), help="comma-separated hosts for mpiexec")
    r.add_argument(
        "--launcher-args",
        type=given("launcher arguments, or leave --launcher-args out"),
        help="extra launcher arguments, quoted as one string",
    )
    r.add_argument("--env", action="append", default=[], metavar="NAME=VALUE", help="set for the job (repeatable)")
    shared(r, "--mpicc", "MPI compiler wrapper to build with (default $MPICC, this venv's, PATH)")
    shared(r, "--label")
    r.add_argument(
        "--timeout",
        type=seconds_up_to_a_week,
        help="seconds without a record before the job is stopped (a week at most)",
    )
    r.add_argument("--quiet", action="store_true", help="no progress line")
    push_options(r, "--push")
    r.add_argument(
        "--sim",
        metavar="PLATFORM",
        type=given("a SimGrid platform file ('scope sim platform' writes one)"),
        help="run on a simulated cluster: SimGrid's SMPI on this platform file (docs/sim.md)",
    )
    r.add_argument(
        "--sim-ppn", type=whole(1, "ranks per simulated host", 1 << 20), default=1, help="with --sim: ranks per host"
    )
    r.add_argument(
        "--sim-cfg",
        action="append",
        default=[],
        metavar="KEY:VALUE",
        help="with --sim: a SimGrid setting (repeatable); 'exact': latency + size/rate exactly (docs/sim.md)",
    )
    r.add_argument(
        "--sim-clocks",
        metavar="SEED:MAX_OFFSET_US:MAX_DRIFT_PPM",
        default=None,
        help="with --sim: each host's clock off the simulated one by an offset and a drift drawn from SEED, "
        f"uniform within the maxima (default {SIM_HOST_CLOCKS}); 'none': every host on the simulated clock",
    )
    r.add_argument(
        "--save-stream",
        metavar="DIR",
        help="also keep each launch's records in DIR (launch-K.jsonl), which 'scope import DIR' stores again as a run",
    )
    r.add_argument(
        "--force", action="store_true", help="run even with far more ranks than cores, or below a module's minimum"
    )
    r.add_argument(
        "--canary",
        action="store_true",
        help="probe the machine at each launch's start and end even in a run of one point and one launch "
        "(which skips them: the probes cost more than its point)",
    )
    r.add_argument(
        "--dry-run",
        action="store_true",
        help="check everything, then print the run as it would launch (JSON: its command line, the engine's options "
        "as parsed, the front end's); nothing is launched or stored",
    )
    r.add_argument(
        "--module",
        choices=list(NAMES),
        help="a module's tests and workloads (scope modules lists them)",
    )
    r.add_argument(
        "--time-limit",
        type=positive_float,
        help=f"with --module standard: seconds to fit in (default {TIME_LIMIT_S:g})",
    )
    r.add_argument(
        "--testbed",
        metavar="NAME",
        type=given("a testbed's name ('scope testbed status' lists them)"),
        help="run across the hosts of a testbed made by 'scope testbed up' (its name, e.g. scope), MPI over TCP",
    )
    r.add_argument(
        "--ppn", type=positive_int, help="with --testbed: ranks per host, sharing memory (default: one per host)"
    )

    ls = command(sub, "list", "scope.cli.runcmd:cmd_list", help="the tests, their summaries and parameters")
    shared(ls, "--json", "machine-readable: the engine's test records (docs/json.md)")
    ls.add_argument("--osu", action="store_true", help="every OMB 7.4 program with the SCOPE setting of its definition")
    shared(ls, "--mpicc", "MPI compiler wrapper whose engine to ask (default $MPICC, this venv's, PATH)")

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

    tb = command(
        sub,
        "testbed",
        "scope.cli.runcmd:cmd_testbed",
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

    dr = command(
        sub, "doctor", "scope.cli.runcmd:cmd_doctor", help="check MPI, the engine build, timers, cores and the database"
    )
    dr.add_argument("-n", "--ranks", type=rank_count, default=2, help="MPI ranks of the check launch (default 2)")
    shared(dr, "--mpicc", "MPI compiler wrapper to check (default $MPICC, this venv's, PATH)")
    shared(dr, "--json")
    dr.add_argument("--module", choices=["baseline"], help="also check the baseline's minimum configuration")

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

    b = command(sub, "build", "scope.cli.runcmd:cmd_build", help="build the engine for an MPI and print its path")
    shared(b, "--mpicc", "MPI compiler wrapper to build with (default $MPICC, this venv's, PATH)")
    add_reading_commands(sub)
    add_hub_commands(sub)
    add_sim_commands(sub)

    return ap


# Each command's module is imported only when it is chosen: `scope --help` and the run path
# do not pay for the analysis libraries other commands need.
