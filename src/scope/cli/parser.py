"""The scope command's arguments: one parser, every subcommand's options and their checks
(whole numbers, fractions, seconds); the engine's own options come from its table."""

from __future__ import annotations

import argparse

from scope.catalog.baseline import DEFAULT_LAUNCHES, launches
from scope.catalog.options import EngineOption, add_arguments
from scope.errors import USAGE, ScopeError
from scope.version import __version__


def _whole(least: int, what: str, most: int = 1 << 31):
    """An argparse type: a whole number (ASCII digits) from `least` to `most` (`what` says so
    when it is not): every number from the user has a range (issue 44)."""

    def parse(text: str) -> int:
        t = text.strip()
        digits = t[1:] if t.startswith("-") else t
        if not (digits.isascii() and digits.isdigit()) or len(digits) > 19:
            raise argparse.ArgumentTypeError(f"'{text}' is not a whole number")
        v = int(t)
        if not least <= v <= most:
            raise argparse.ArgumentTypeError(f"must be {what}, got {v}")
        return v

    return parse


MOST_RANKS = 1 << 24  # the engine's plan takes no more (--plan N)
_positive_int = _whole(1, "at least 1")
_ranks = _whole(1, f"at least 1 and at most {MOST_RANKS}", MOST_RANKS)
WEEK_S = 7 * 86400
_count = _whole(0, "0 (all) or more")


def _seconds_up_to_a_week(text: str) -> float:
    v = _positive_float(text)
    if v > WEEK_S:
        raise argparse.ArgumentTypeError(f"must be at most {WEEK_S} s (a week), got {text}")
    return v


def _positive_float(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a number") from None
    if not v > 0:
        raise argparse.ArgumentTypeError(f"must be positive, got {text}")
    return v


def _fraction(top: float):
    """A number in (0, top]: a significance level or an effect size a regression gate can use."""

    def check(text: str) -> float:
        v = _positive_float(text)
        if v > top:
            raise argparse.ArgumentTypeError(f"must be above 0 and at most {top:g}, got {text}")
        return v

    return check


def _given(what: str):
    """A value that must say something: an empty one is refused, never read as the default
    (issue 44: `--db ''` read the default database, `--osu ''` ran the whole baseline)."""

    def check(text: str) -> str:
        if not text.strip():
            raise argparse.ArgumentTypeError(f"is empty: give {what}")
        return text

    return check


def _launches(least: int):
    """An argparse type: a launch count from `least` to MAX_LAUNCHES (catalog/baseline.launches,
    the one check of it: scope run, tune, compare --rerun and $SCOPE_LAUNCHES alike)."""

    def check(text: str) -> int:
        try:
            return launches(text, least)
        except ValueError as e:
            raise argparse.ArgumentTypeError(str(e)) from None

    return check


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line and exit 2, as every other error
        raise ScopeError(message, f"see '{self.prog} --help'", USAGE)


# The arguments several commands share, each defined once: a command adds it by name, with its
# own help where the plain one would say too little.
SHARED = {
    "--mpicc": dict(help="MPI compiler wrapper (default $MPICC, this venv's, PATH)"),
    "--json": dict(action="store_true", help="machine-readable (docs/json.md)"),
    "--label": dict(type=_given("a name, or leave --label out"), help="a name for this run"),
}


def _shared(p: argparse.ArgumentParser, name: str, help: str | None = None) -> None:
    p.add_argument(name, **(SHARED[name] | ({"help": help} if help else {})))


def _command(sub, name: str, handler: str, **kw) -> argparse.ArgumentParser:
    """A subcommand and its handler, "module:function", bound where the command is declared
    (main imports the module only when the command is chosen): adding a command touches this
    file and the handler's module, nothing else."""
    p = sub.add_parser(name, **kw)
    p.set_defaults(handler=handler)
    return p


def build_parser(engine: list[EngineOption] | None = None, run_help: bool = False) -> argparse.ArgumentParser:
    """The command line.  `engine` is the engine's option table for `scope run`; without it
    the run command is parsed only far enough to find --mpicc (see main)."""
    ap = _Parser(prog="scope", description="SCOPE: measure and explain message-passing performance.")
    ap.add_argument("--version", action="version", version=f"scope {__version__}")
    ap.add_argument(
        "--db",
        type=_given("a database path, or leave --db out for the default"),
        help="results database (default $SCOPE_DB or ~/.local/share/scope/results.db)",
    )
    sub = ap.add_subparsers(dest="cmd", metavar="COMMAND", parser_class=_Parser)

    # run's help waits for the engine's options (the first parse only finds --mpicc), unless the
    # engine cannot be had: then run_help gives it without them
    r = _command(
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
        type=_given("an OMB program's name (scope list --osu lists them)"),
        help="the SCOPE setting with an OMB 7.4 program's definition, e.g. osu_mbw_mr",
    )
    r.add_argument("-n", "--ranks", type=_ranks, help="MPI ranks (default 2)")
    if engine:  # the engine's own options, ranges and defaults: see scope/catalog/options.py
        add_arguments(r, engine)
    r.add_argument(
        "--launches",
        type=_launches(1),
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
    r.add_argument("--hosts", type=_given("host names, or leave --hosts out"), help="comma-separated hosts for mpiexec")
    r.add_argument(
        "--launcher-args",
        type=_given("launcher arguments, or leave --launcher-args out"),
        help="extra launcher arguments, quoted as one string",
    )
    r.add_argument("--env", action="append", default=[], metavar="NAME=VALUE", help="set for the job (repeatable)")
    _shared(r, "--mpicc", "MPI compiler wrapper to build with (default $MPICC, this venv's, PATH)")
    _shared(r, "--label")
    r.add_argument(
        "--timeout",
        type=_seconds_up_to_a_week,
        help="seconds without a record before the job is stopped (a week at most)",
    )
    r.add_argument("--quiet", action="store_true", help="no progress line")
    r.add_argument(
        "--save-stream",
        metavar="DIR",
        help="also keep each launch's records in DIR (launch-K.jsonl), which 'scope import DIR' stores again as a run",
    )
    r.add_argument(
        "--force", action="store_true", help="run even with far more ranks than cores, or below a module's minimum"
    )
    r.add_argument(
        "--module",
        choices=["baseline", "standard", "advanced"],
        help="a module's tests and workloads (scope modules lists them)",
    )
    r.add_argument(
        "--time-limit", type=_positive_float, default=600.0, help="standard module: seconds to fit in (default 600)"
    )
    r.add_argument(
        "--testbed",
        metavar="NAME",
        type=_given("a testbed's name ('scope testbed status' lists them)"),
        help="run across the hosts of a testbed made by 'scope testbed up' (its name, e.g. scope), MPI over TCP",
    )
    r.add_argument(
        "--ppn", type=_positive_int, help="with --testbed: ranks per host, sharing memory (default: one per host)"
    )

    ls = _command(sub, "list", "scope.cli.runcmd:cmd_list", help="the tests, their summaries and parameters")
    _shared(ls, "--json", "machine-readable: the engine's test records (docs/json.md)")
    ls.add_argument("--osu", action="store_true", help="every OMB 7.4 program with the SCOPE setting of its definition")
    _shared(ls, "--mpicc", "MPI compiler wrapper whose engine to ask (default $MPICC, this venv's, PATH)")

    rn = _command(sub, "runs", "scope.cli.show:cmd_runs", help="the stored runs")
    _shared(rn, "--json")

    sh = _command(sub, "show", "scope.cli.show:cmd_show", help="a run's results: a table per test with the Hockney fit")
    sh.add_argument("run", nargs="?", default="last", help="run id or 'last' (default)")
    sh.add_argument(
        "--test", type=_given("a test pattern, or leave --test out"), help="only tests matching this pattern"
    )
    _shared(sh, "--json", "machine-readable: the run and its facts (docs/json.md)")
    sh.add_argument(
        "--ranks",
        type=_given("ranks, e.g. 0,3-5, or leave --ranks out"),
        help="collectives: analyse only these ranks, e.g. 0,3-5",
    )
    sh.add_argument(
        "--rows",
        type=_count,
        default=100,
        help="at most this many rows per test, evenly spread over its sizes (default 100; 0: all)",
    )

    pr = _command(
        sub,
        "predict",
        "scope.cli.predictcmd:cmd_predict",
        help="a kernel's time at any process count, from the stored lower levels",
    )
    pr.add_argument(
        "kernel", nargs="?", help="a kernel with a cost model: kernel.matmul, .cannon, .jacobi, .multigrid or .psrs"
    )
    pr.add_argument(
        "--check",
        type=_given("a run id, or 'last'"),
        metavar="RUN",
        help="a measured kernel run against its prediction from the lower levels (as frozen when it was stored)",
    )
    pr.add_argument(
        "--again", action="store_true", help="with --check: predict anew from the runs stored now (a new record)"
    )
    pr.add_argument("-p", "--param", action="append", default=[], help="the kernel's parameters, e.g. -p n=2048")
    pr.add_argument(
        "--procs",
        type=_given("process counts, or leave --procs out"),
        help="process counts, e.g. 1,64,4096 (default: powers of two up to 10^4)",
    )
    _shared(pr, "--json")

    tu = _command(
        sub,
        "tune",
        "scope.tune.command:cmd_tune",
        help="every algorithm of a collective, the switch points, MPICH's tuning file",
    )
    tu.add_argument("collectives", nargs="+", help="allreduce, bcast, allgather, alltoall, reduce, barrier")
    tu.add_argument(
        "-n",
        "--ranks",
        type=_whole(2, f"at least 2 and at most {MOST_RANKS}", MOST_RANKS),
        default=2,
        help="ranks to launch (default 2)",
    )
    tu.add_argument("--sizes", default="8-1M:x8", help="message sizes (default 8-1M:x8)")
    tu.add_argument("--procs", default="all", help="process counts, e.g. 2,4 (default all)")
    tu.add_argument("--budget", default="0.2", help="seconds per point at most (default 0.2)")
    tu.add_argument(
        "--launches", type=_launches(1), default=3, help="launches per algorithm: the replicates (default 3)"
    )
    tu.add_argument("--timeout", type=_seconds_up_to_a_week, help="seconds without output before a launch is stopped")
    tu.add_argument("--alpha", type=_fraction(0.5), default=0.05, help="significance level (default 0.05)")
    tu.add_argument("--min-effect", type=_fraction(0.5), default=0.02, help="smallest gain that counts (default 0.02)")
    tu.add_argument(
        "--algorithms",
        type=_given("algorithm names, e.g. ring,recursive_doubling, or leave it out for all"),
        help="only these algorithms, e.g. ring,recursive_doubling (default: all offered)",
    )
    tu.add_argument(
        "-o",
        "--output",
        type=_given("a file, or leave -o out"),
        help="write MPICH's selection file here (and FILE.scope.json beside it)",
    )
    tu.add_argument(
        "--report",
        metavar="HTML",
        type=_given("a file, or leave --report out"),
        help="write every algorithm's curves with the chosen bands here",
    )
    tu.add_argument(
        "--apply",
        metavar="FILE",
        type=_given("a tuning file, or leave --apply out"),
        help="measure the collectives with FILE in force against the default",
    )
    tu.add_argument("--force", action="store_true", help="--apply a file tuned for another MPI version")
    _shared(tu, "--mpicc")
    tu.add_argument(
        "--testbed",
        metavar="NAME",
        type=_given("a testbed's name ('scope testbed status' lists them)"),
        help="tune across the hosts of a testbed ('scope testbed up')",
    )
    tu.add_argument(
        "--ppn",
        type=_given("processes per host, e.g. 1,2, or leave --ppn out"),
        help="with --testbed: processes per host to tune for, e.g. 1,2 (a decision per value)",
    )

    ex = _command(sub, "export", "scope.cli.export:cmd_export", help="a run as CSV or JSON")
    ex.add_argument("run", nargs="?", default="last", help="run id or 'last' (default)")
    ex.add_argument("--format", choices=["csv", "json", "parquet"], default="csv", help="file format (default csv)")
    ex.add_argument(
        "-o",
        "--output",
        type=_given("a file, or '-' for standard output"),
        help="file to write (default: standard output)",
    )
    ex.add_argument("--samples", action="store_true", help="CSV: one row per raw sample")

    tb = _command(
        sub,
        "testbed",
        "scope.cli.runcmd:cmd_testbed",
        help="test hosts in network namespaces on this machine (needs root)",
    )
    tbs = tb.add_subparsers(dest="action", metavar="ACTION", parser_class=_Parser)
    tbu = tbs.add_parser("up", help="create N hosts joined by veth pairs, optionally rate-limited")
    tbu.add_argument("--hosts", type=int, default=2, help="number of hosts (2..64)")
    tbu.add_argument(
        "--rate",
        type=_given("a rate, e.g. 100mbit, or leave --rate out"),
        help="egress rate per host for tc tbf, e.g. 100mbit (Fast Ethernet), 1gbit",
    )
    tbu.add_argument(
        "--burst",
        default="16kb",
        type=_given("a burst, e.g. 16kb"),
        help="tbf burst (default 16kb: small, so short messages obey the rate)",
    )
    tbu.add_argument("--mtu", type=int, default=1500, help="bytes, the links' MTU (default 1500)")
    tbu.add_argument("--name", default="scope", type=_given("a name"), help="the testbed's name (default scope)")
    for act in ("down", "status"):
        x = tbs.add_parser(act, help=f"{act} the testbed")
        x.add_argument("--name", default="scope", type=_given("a name"), help="the testbed's name (default scope)")

    ly = _command(
        sub, "layers", "scope.cli.show:cmd_layers", help="latency, r_inf and n_half per layer, and what each layer adds"
    )
    ly.add_argument("runs", nargs="*", default=["last"], help="run ids (default: last); later runs fill gaps")
    _shared(ly, "--json")

    rp = _command(
        sub, "report", "scope.cli.export:cmd_report", help="a self-contained HTML report of one or more runs (overlaid)"
    )
    rp.add_argument("runs", nargs="*", default=["last"], help="run ids (default: last)")
    rp.add_argument("-o", "--output", default="scope-report.html", type=_given("a file"), help="HTML file to write")
    rp.add_argument(
        "--title",
        type=_given("a title, or leave --title out"),
        help="the report's title (default: 'SCOPE report: ' and the runs' titles)",
    )

    cp = _command(
        sub,
        "compare",
        "scope.cli.compare:cmd_compare",
        help="run B against run A, point by point, with significance and effect size",
    )
    cp.add_argument("a", help="baseline run")
    cp.add_argument("b", help="candidate run")
    cp.add_argument(
        "--alpha", type=_fraction(0.5), default=0.05, help="significance level, above 0 and at most 0.5 (default 0.05)"
    )
    cp.add_argument(
        "--min-effect",
        type=_fraction(0.5),
        default=0.02,
        help="smallest relative change that counts, above 0 and at most 0.5 (default 0.02 = 2%%)",
    )
    cp.add_argument(
        "--vary",
        type=_given("NAME=A,B"),
        metavar="NAME=A,B",
        help="compare two settings of one parameter (A's points with A, B's with B; a and b may be one run), "
        "e.g. --vary transpose=alltoall,nonblocking",
    )
    cp.add_argument(
        "--rerun",
        action="store_true",
        help="measure both runs' configurations again, one launch each in turn (A B, B A, A B ...), so a drift of "
        "the machine falls on both: the verdict to trust",
    )
    cp.add_argument("--launches", type=_launches(2), default=3, help="with --rerun: launches of each side (default 3)")
    cp.add_argument("--markdown", action="store_true", help="Markdown table")
    _shared(cp, "--json", "machine-readable rows (docs/json.md)")

    im = _command(
        sub,
        "import",
        "scope.cli.importcmd:cmd_import",
        help="store OSU, IMB or CSV (size,time_us) results, or a stream saved by run --save-stream, as a run",
    )
    im.add_argument("file", help="a file, or a directory saved by 'scope run --save-stream'")
    im.add_argument(
        "--format",
        choices=["auto", "osu", "imb", "csv", "stream"],
        default="auto",
        help="what the file is (default: told from its content)",
    )
    im.add_argument(
        "--test",
        type=_given("a test name, or leave --test out"),
        help="test name for the imported points (CSV default: csv.import)",
    )
    _shared(im, "--label", "a name for the imported run")

    dr = _command(
        sub, "doctor", "scope.cli.runcmd:cmd_doctor", help="check MPI, the engine build, timers, cores and the database"
    )
    dr.add_argument("-n", "--ranks", type=_ranks, default=2, help="MPI ranks of the check launch (default 2)")
    _shared(dr, "--mpicc", "MPI compiler wrapper to check (default $MPICC, this venv's, PATH)")
    _shared(dr, "--json")
    dr.add_argument("--module", choices=["baseline"], help="also check the baseline's minimum configuration")

    su = _command(
        sub,
        "submit",
        "scope.cli.submitcmd:cmd_submit",
        help="a module or tests as a Slurm batch job (sbatch), stored when it ends",
    )
    su.add_argument("tests", nargs="*", help="tests, when no --module")
    su.add_argument(
        "--module", choices=["baseline", "standard", "advanced"], help="run a SCOPE module in the job (SCOPE §8.1)"
    )
    su.add_argument("-N", "--nodes", type=_ranks, default=1, help="nodes (default 1)")
    su.add_argument("-n", "--ntasks", type=_ranks, default=2, help="ranks (default 2)")
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
    _shared(su, "--mpicc", "the cluster MPI's compiler wrapper (default: this environment's)")
    _shared(su, "--label", "a name for the job's run")
    su.add_argument("--run-args", help="more scope run arguments, quoted as one string")
    su.add_argument(
        "--script",
        type=_given("a file, or leave --script out"),
        help="where to write the batch script (default: ./scope-MODULE-DATE.sbatch)",
    )
    su.add_argument(
        "--output-dir",
        type=_given("a folder, or leave --output-dir out"),
        help="where the job's output goes (default: here)",
    )
    su.add_argument("--wait", action="store_true", help="wait for the job and name its run")

    mo = _command(
        sub,
        "modules",
        "scope.cli.modulecmd:cmd_modules",
        help="the baseline, standard and advanced modules and the minimum configuration",
    )
    mo.add_argument(
        "--time-limit", type=_seconds_up_to_a_week, default=600.0, help="the standard module's time (s, at most a week)"
    )

    b = _command(sub, "build", "scope.cli.runcmd:cmd_build", help="build the engine for an MPI and print its path")
    _shared(b, "--mpicc", "MPI compiler wrapper to build with (default $MPICC, this venv's, PATH)")
    return ap


# Each command's module is imported only when it is chosen: `scope --help` and the run path
# do not pay for the analysis libraries other commands need.
