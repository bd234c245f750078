"""`scope run`'s arguments: what to run, where its ranks go, how it is kept; the engine's own
options come from its table (catalog/options.py)."""

from __future__ import annotations

from scope.catalog.baseline import DEFAULT_LAUNCHES, SIM_HOST_CLOCKS
from scope.catalog.modules import NAMES, TIME_LIMIT_S
from scope.catalog.options import EngineOption, add_arguments
from scope.cli.argtypes import (
    command,
    given,
    launch_count,
    positive_float,
    positive_int,
    rank_count,
    seconds_up_to_a_week,
    shared,
    whole,
)
from scope.cli.parser_hub import push_options


def add_run(sub, engine: list[EngineOption] | None, run_help: bool) -> None:
    """scope run.  `engine`: the engine's option table; without it the command is parsed only
    far enough to find --mpicc (see main)."""
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
    _simulation(r)
    _kept_and_placed(r)


def _simulation(r) -> None:
    """--sim and its settings: the run on a simulated cluster (docs/sim.md)."""
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
        help="with --sim: a SimGrid setting (repeatable); 'exact': latency + size/rate exactly; "
        "'scale': for thousands of ranks (docs/sim.md)",
    )
    r.add_argument(
        "--sim-clocks",
        metavar="SEED:MAX_OFFSET_US:MAX_DRIFT_PPM",
        default=None,
        help="with --sim: each host's clock off the simulated one by an offset and a drift drawn from SEED, "
        f"uniform within the maxima (default {SIM_HOST_CLOCKS}); 'none': every host on the simulated clock",
    )


def _kept_and_placed(r) -> None:
    """Where the records are kept besides the store, the module, the checks to skip, and the testbed."""
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
