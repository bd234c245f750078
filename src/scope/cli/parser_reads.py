"""The commands that read the store (runs, show, predict, export, layers, report, compare,
import), declared as cli/parser.py declares the commands that measure: each bound to its
handler where it is declared."""

from __future__ import annotations

from scope.cli.argtypes import command, fraction, given, launch_count, row_count, shared, whole


def add_reading_commands(sub) -> None:
    """The commands that read the store, each declared by a function of its own."""
    _runs_and_show(sub)
    _predict(sub)
    _history(sub)
    _export(sub)
    _layers_and_report(sub)
    _compare(sub)
    _import(sub)


def _runs_and_show(sub) -> None:
    """scope runs and scope show: the stored runs, and a run's tables."""
    rn = command(sub, "runs", "scope.cli.showcmd:cmd_runs", help="the stored runs")
    shared(rn, "--json")

    sh = command(
        sub, "show", "scope.cli.showcmd:cmd_show", help="a run's results: a table per test with the Hockney fit"
    )
    sh.add_argument("run", nargs="?", default="last", help="run id or 'last' (default)")
    sh.add_argument(
        "--test", type=given("a test pattern, or leave --test out"), help="only tests matching this pattern"
    )
    shared(sh, "--json", "machine-readable: the run and its facts (docs/json.md)")
    sh.add_argument(
        "--ranks",
        type=given("ranks, e.g. 0,3-5, or leave --ranks out"),
        help="collectives: analyse only these ranks, e.g. 0,3-5",
    )
    sh.add_argument(
        "--rows",
        type=row_count,
        default=100,
        help="at most this many rows per test, evenly spread over its sizes (default 100; 0: all)",
    )


def _predict(sub) -> None:
    """scope predict: a kernel's time from the lower levels' figures."""
    pr = command(
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
        type=given("a run id, or 'last'"),
        metavar="RUN",
        help="a measured kernel run against its prediction from the lower levels (as frozen when it was stored)",
    )
    pr.add_argument(
        "--again", action="store_true", help="with --check: predict anew from the runs stored now (a new record)"
    )
    pr.add_argument("-p", "--param", action="append", default=[], help="the kernel's parameters, e.g. -p n=2048")
    pr.add_argument(
        "--procs",
        type=given("process counts, or leave --procs out"),
        help="process counts, e.g. 1,64,4096 (default: powers of two up to 10^4)",
    )
    pr.add_argument(
        "--sim",
        action="store_true",
        help="also run the kernel under SimGrid's SMPI on a platform calibrated from the same inputs (docs/sim.md)",
    )
    shared(pr, "--json")


def _history(sub) -> None:
    """scope history: every figure over the stored runs, and its changes."""
    hi = command(
        sub,
        "history",
        "scope.cli.historycmd:cmd_history",
        help="every figure over time: the real changes, what changed",
    )
    hi.add_argument("--since", help="only runs started on or after this date (YYYY-MM-DD)")
    hi.add_argument(
        "--test", type=given("a test pattern, or leave --test out"), help="only tests matching this pattern"
    )
    hi.add_argument("--sizes", type=given("sizes, e.g. 8,1K, or leave --sizes out"), help="only these sizes, e.g. 8,1K")
    hi.add_argument(
        "--min-runs",
        type=whole(3, "at least 3 runs", 1 << 20),
        default=4,
        help="runs a series needs (default 4, at least 3)",
    )
    shared(hi, "--json", "the series and the changes (docs/json.md)")
    hi.add_argument(
        "--report",
        metavar="HTML",
        type=given("a file, or leave --report out"),
        help="also write the series as charts with their intervals and changes marked, one HTML file",
    )
    hi.add_argument(
        "--check",
        action="store_true",
        help="exit 1 when a series' newest runs sit past a step slower than --max-slowdown",
    )
    hi.add_argument("--max-slowdown", default="5%", help="with --check: the slowdown that fails (default 5%%)")


def _export(sub) -> None:
    """scope export: a run as CSV, JSON, Parquet or a bundle."""
    ex = command(sub, "export", "scope.cli.exportcmd:cmd_export", help="a run as CSV, JSON, Parquet or a bundle")
    ex.add_argument("run", nargs="?", default="last", help="run id or 'last' (default)")
    ex.add_argument(
        "--format",
        choices=["csv", "json", "parquet", "bundle"],
        default="csv",
        help="file format (default csv; bundle: the whole run, gzip'd JSON lines, as `scope import` and a hub read it)",
    )
    ex.add_argument(
        "-o",
        "--output",
        type=given("a file, or '-' for standard output"),
        help="file to write (default: standard output)",
    )
    ex.add_argument("--samples", action="store_true", help="CSV: one row per raw sample")
    ex.add_argument(
        "--no-samples", dest="keep_samples", action="store_false",
        help="bundle: leave each point's raw samples out (its statistics stay), said in the bundle",
    )  # fmt: skip


def _layers_and_report(sub) -> None:
    """scope layers and scope report: what each layer adds, and the HTML report."""
    ly = command(
        sub,
        "layers",
        "scope.cli.showcmd:cmd_layers",
        help="latency, r_inf and n_half per layer, and what each layer adds",
    )
    ly.add_argument("runs", nargs="*", default=["last"], help="run ids (default: last); later runs fill gaps")
    shared(ly, "--json")

    rp = command(
        sub,
        "report",
        "scope.cli.exportcmd:cmd_report",
        help="a self-contained HTML report of one or more runs (overlaid)",
    )
    rp.add_argument("runs", nargs="*", default=["last"], help="run ids (default: last)")
    rp.add_argument(
        "-o",
        "--output",
        type=given("a file"),
        help="HTML file to write (default scope-report-run-ID.html: a new name per run, never another's)",
    )
    rp.add_argument(
        "--title",
        type=given("a title, or leave --title out"),
        help="the report's title (default: 'SCOPE report: ' and the runs' titles)",
    )


def _compare(sub) -> None:
    """scope compare: two runs point by point, or measured again."""
    cp = command(
        sub,
        "compare",
        "scope.cli.comparecmd:cmd_compare",
        help="run B against run A, point by point, with significance and effect size",
    )
    cp.add_argument("a", help="baseline run")
    cp.add_argument("b", help="candidate run")
    cp.add_argument(
        "--alpha", type=fraction(0.5), default=0.05, help="significance level, above 0 and at most 0.5 (default 0.05)"
    )
    cp.add_argument(
        "--min-effect",
        type=fraction(0.5),
        default=0.02,
        help="smallest relative change that counts, above 0 and at most 0.5 (default 0.02 = 2%%)",
    )
    cp.add_argument(
        "--vary",
        type=given("NAME=A,B"),
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
    cp.add_argument(
        "--launches", type=launch_count(2), default=3, help="with --rerun: launches of each side (default 3)"
    )
    cp.add_argument("--markdown", action="store_true", help="Markdown table")
    shared(cp, "--json", "machine-readable rows (docs/json.md)")


def _import(sub) -> None:
    """scope import: a peer's output, a CSV, a saved stream or a bundle as a run."""
    im = command(
        sub,
        "import",
        "scope.cli.importcmd:cmd_import",
        help="store OSU, IMB or CSV (size,time_us) results, a site's history as one CSV "
        "(run,started_utc,launch,test,size,time_us), a ReFrame perflog, a stream saved by run --save-stream, "
        "a run bundle, or a program's events stamped with SCOPE's clock library",
    )
    im.add_argument(
        "file",
        help="a file, a directory saved by 'scope run --save-stream', "
        "or the PREFIX of events files (PREFIX.RANK.jsonl)",
    )
    im.add_argument(
        "--format",
        choices=["auto", "osu", "imb", "csv", "reframe", "stream", "bundle", "events"],
        default="auto",
        help="what the file is (default: told from its content)",
    )
    im.add_argument(
        "--test",
        type=given("a test name, or leave --test out"),
        help="test name for the imported points (CSV default: csv.import)",
    )
    shared(im, "--label", "a name for the imported run")
