"""The scope command."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from scope import __version__
from scope.errors import USAGE, ScopeError


def _positive_int(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a whole number") from None
    if v < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {v}")
    return v


def _positive_float(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a number") from None
    if not v > 0:
        raise argparse.ArgumentTypeError(f"must be positive, got {text}")
    return v


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line and exit 2, as every other error
        raise ScopeError(message, f"see '{self.prog} --help'", USAGE)


def build_parser() -> argparse.ArgumentParser:
    ap = _Parser(prog="scope", description="SCOPE: measure and explain message-passing performance.")
    ap.add_argument("--version", action="version", version=f"scope {__version__}")
    ap.add_argument("--db", help="results database (default $SCOPE_DB or ~/.local/share/scope/results.db)")
    sub = ap.add_subparsers(dest="cmd", metavar="COMMAND", parser_class=_Parser)

    r = sub.add_parser("run", help="measure: the point-to-point baseline unless tests are named")
    r.add_argument("tests", nargs="*", help="test names or patterns, e.g. p2p.pingpong 'p2p.*'")
    r.add_argument("-n", "--ranks", type=_positive_int, default=2, help="MPI ranks (default 2)")
    r.add_argument("--sizes", default="0-4M", help="message sizes: 0-4M (default), 8,64,1K, 1K-1M:x4, 0-4K:+512")
    r.add_argument(
        "-p",
        "--param",
        action="append",
        default=[],
        metavar="NAME=V1,V2",
        help="sweep a test parameter, e.g. mode=standard,sync (repeatable)",
    )
    r.add_argument(
        "--precision",
        type=_positive_float,
        default=0.01,
        help="target half-width of the median's 95%% CI, relative (default 0.01 = ±1%%)",
    )
    r.add_argument("--budget", type=_positive_float, default=1.0, help="seconds per point at most (default 1)")
    r.add_argument("--min-count", type=_positive_int, help="samples per point at least (default 20)")
    r.add_argument("--max-count", type=_positive_int, help="samples per point at most (default 200000)")
    r.add_argument("--warmup-max", type=_positive_int, help="warm-up iterations at most (default 20000)")
    r.add_argument("--offcache", action="store_true", help="cycle buffers through twice the last-level cache")
    r.add_argument("--timer", choices=["tsc", "clock_monotonic_raw", "mpi_wtime"], help="force a timer")
    r.add_argument("--seed", type=int, help="seed of the data patterns")
    r.add_argument("--no-samples", action="store_true", help="do not store raw samples")
    r.add_argument("--launcher", choices=["mpiexec", "srun"], default="mpiexec")
    r.add_argument("--hosts", help="comma-separated hosts for mpiexec")
    r.add_argument("--launcher-args", default="", help="extra launcher arguments, quoted as one string")
    r.add_argument("--env", action="append", default=[], metavar="NAME=VALUE", help="set for the job (repeatable)")
    r.add_argument("--mpicc", help="MPI compiler wrapper to build with (default $MPICC, this venv's, PATH)")
    r.add_argument("--label", help="a name for this run")
    r.add_argument("--timeout", type=_positive_float, help="seconds without a record before the job is stopped")
    r.add_argument("--quiet", action="store_true", help="no progress line")
    r.add_argument(
        "--timing",
        choices=["window", "barrier"],
        help="collectives: start at agreed global times (window, default) or after a barrier",
    )
    r.add_argument("--procs", help="collectives: process counts to sweep, e.g. 2,4,8 or pow2 (default: all ranks)")
    r.add_argument("--pattern", help="p2p.pattern: file of 'SOURCE DESTINATION SIZE' lines sent concurrently")
    r.add_argument(
        "--testbed",
        metavar="NAME",
        help="run across the hosts of a testbed made by 'scope testbed up' (its name, e.g. scope), MPI over TCP",
    )

    ls = sub.add_parser("list", help="the tests, their summaries and parameters")
    ls.add_argument("--json", action="store_true")
    ls.add_argument("--mpicc")

    sub.add_parser("runs", help="the stored runs")

    sh = sub.add_parser("show", help="a run's results: a table per test with the Hockney fit")
    sh.add_argument("run", nargs="?", default="last", help="run id or 'last' (default)")
    sh.add_argument("--test", help="only tests matching this pattern")
    sh.add_argument("--ranks", help="collectives: analyse only these ranks, e.g. 0,3-5")

    ex = sub.add_parser("export", help="a run as CSV or JSON")
    ex.add_argument("run", nargs="?", default="last")
    ex.add_argument("--format", choices=["csv", "json", "parquet"], default="csv")
    ex.add_argument("-o", "--output", help="file to write (default: standard output)")
    ex.add_argument("--samples", action="store_true", help="CSV: one row per raw sample")

    tb = sub.add_parser("testbed", help="test hosts in network namespaces on this machine (needs root)")
    tbs = tb.add_subparsers(dest="action", metavar="ACTION", parser_class=_Parser)
    tbu = tbs.add_parser("up", help="create N hosts joined by veth pairs, optionally rate-limited")
    tbu.add_argument("--hosts", type=int, default=2, help="number of hosts (2..64)")
    tbu.add_argument("--rate", help="egress rate per host for tc tbf, e.g. 100mbit (Fast Ethernet), 1gbit")
    tbu.add_argument("--burst", default="16kb", help="tbf burst (default 16kb: small, so short messages obey the rate)")
    tbu.add_argument("--mtu", type=int, default=1500)
    tbu.add_argument("--name", default="scope")
    for act in ("down", "status"):
        x = tbs.add_parser(act, help=f"{act} the testbed")
        x.add_argument("--name", default="scope")

    ly = sub.add_parser("layers", help="latency, r_inf and n_half per layer, and what each layer adds")
    ly.add_argument("runs", nargs="*", default=["last"], help="run ids (default: last); later runs fill gaps")

    rp = sub.add_parser("report", help="a self-contained HTML report of one or more runs (overlaid)")
    rp.add_argument("runs", nargs="*", default=["last"], help="run ids (default: last)")
    rp.add_argument("-o", "--output", default="scope-report.html", help="HTML file to write")
    rp.add_argument("--title")

    cp = sub.add_parser("compare", help="run B against run A, point by point, with significance and effect size")
    cp.add_argument("a", help="baseline run")
    cp.add_argument("b", help="candidate run")
    cp.add_argument("--alpha", type=_positive_float, default=0.05, help="significance level (default 0.05)")
    cp.add_argument(
        "--min-effect",
        type=_positive_float,
        default=0.02,
        help="smallest relative change that counts (default 0.02 = 2%%)",
    )
    cp.add_argument("--markdown", action="store_true", help="Markdown table")
    cp.add_argument("--json", action="store_true", help="machine-readable rows")

    im = sub.add_parser("import", help="store OSU, IMB or CSV (size,time_us) results as a run")
    im.add_argument("file")
    im.add_argument("--format", choices=["auto", "osu", "imb", "csv"], default="auto")
    im.add_argument("--test", help="test name for the imported points (CSV default: csv.import)")
    im.add_argument("--label")

    dr = sub.add_parser("doctor", help="check MPI, the engine build, timers, cores and the database")
    dr.add_argument("-n", "--ranks", type=_positive_int, default=2)
    dr.add_argument("--mpicc")

    b = sub.add_parser("build", help="build the engine for an MPI and print its path")
    b.add_argument("--mpicc")
    return ap


def _store(args, create=True):
    from scope.store import Store

    return Store(args.db, create=create)


def cmd_run(args) -> int:
    from scope.runner import RunOptions, execute, raise_for
    from scope.show import summary

    env = {}
    for e in args.env:
        k, eq, v = e.partition("=")
        if not eq or not k:
            raise ScopeError(f"--env expects NAME=VALUE, got '{e}'")
        env[k] = v
    o = RunOptions(
        tests=args.tests,
        ranks=args.ranks,
        sizes=args.sizes,
        params=args.param,
        precision=args.precision,
        budget=args.budget,
        min_count=args.min_count,
        max_count=args.max_count,
        warmup_max=args.warmup_max,
        offcache=args.offcache,
        timer=args.timer,
        seed=args.seed,
        samples=not args.no_samples,
        launcher=args.launcher,
        hosts=args.hosts.split(",") if args.hosts else None,
        launcher_args=args.launcher_args.split() if args.launcher_args else [],
        env=env,
        mpicc=args.mpicc,
        label=args.label,
        timeout=args.timeout,
        progress=not args.quiet,
        testbed=args.testbed,
        timing=args.timing,
        procs=args.procs,
        pattern=args.pattern,
    )
    store = _store(args)
    result = execute(o, store)
    print(summary(store, result.run_id))
    print()
    print(f"Results: run {result.run_id} in {store.path}")
    print(f"  details: scope show {result.run_id}    export: scope export {result.run_id} --format csv -o run.csv")
    for e in result.errors:
        print(f"scope: error: {e.get('test')} {e.get('params')}: {e.get('message')}", file=sys.stderr)
    raise_for(result, store.path)
    return 1 if result.errors else 0


def cmd_list(args) -> int:
    from scope.toolchain import engine_path, find_toolchain, list_tests

    tests = list_tests(engine_path(find_toolchain(args.mpicc)))
    if args.json:
        print(json.dumps(tests, indent=1))
        return 0
    for t in tests:
        print(f"{t['name']:<16} {t['summary']}")
        print(
            f"{'':<16} measures: {t['measures']}; at least {t['min_ranks']} ranks"
            + ("; swept over --sizes" if t["sized"] else "")
        )
        for p in t["params"]:
            dom = (
                f"{p['min']}..{p['max']}"
                if p["type"] == "int"
                else "yes|no"
                if p["type"] == "bool"
                else "|".join(p["choices"])
            )
            print(f"{'':<18}{p['name']:<10} {dom:<30} default {p['default']}: {p['help']}")
    return 0


def cmd_show(args) -> int:
    from scope.show import show_run

    store = _store(args, create=False)
    ranks = None
    if args.ranks:
        from scope.analysis.collectives import parse_ranks

        try:
            ranks = parse_ranks(args.ranks)
        except ValueError as e:
            raise ScopeError(f"bad --ranks '{args.ranks}': {e}", "e.g. --ranks 0,3-5") from None
    print(show_run(store, store.resolve_run(args.run), args.test, ranks))
    return 0


def cmd_runs(args) -> int:
    from scope.show import runs_table
    from scope.store import default_path

    path = Path(args.db) if args.db else default_path()
    if not path.exists():
        print(f"no runs yet: no results database at {path}; start one with 'scope run'")
        return 0
    print(runs_table(_store(args)))
    return 0


def cmd_export(args) -> int:
    from scope.export import to_csv, to_json

    store = _store(args, create=False)
    run_id = store.resolve_run(args.run)
    if args.format == "parquet":
        if not args.output or args.output == "-":
            raise ScopeError("Parquet is binary: give a file with -o", "e.g. -o run.parquet")
        out = _checked_output(args.output)
        from scope.api import Results

        df = Results(store).points(run_id)
        try:
            df.to_parquet(out, index=False)
        except ImportError:
            raise ScopeError("Parquet export needs pyarrow", "pip install pyarrow", 3) from None
        print(f"wrote {out} (parquet, run {run_id}, {len(df)} points)", file=sys.stderr)
        return 0
    text = to_csv(store, run_id, args.samples) if args.format == "csv" else to_json(store, run_id)
    if not args.output or args.output == "-":
        sys.stdout.write(text)
        return 0
    out = _checked_output(args.output)
    try:
        out.write_text(text)
    except OSError as e:
        raise ScopeError(f"cannot write {out}: {e.strerror}", "choose a writable -o") from None
    print(f"wrote {out} ({args.format}, run {run_id})", file=sys.stderr)
    return 0


def _checked_output(path: str) -> Path:
    out = Path(path)
    if not out.parent.is_dir():
        raise ScopeError(f"cannot write {out}: folder {out.parent} does not exist", "create it or choose another -o")
    return out


def cmd_testbed(args) -> int:
    from scope import testbed

    if args.action == "up":
        st = testbed.up(args.name, args.hosts, args.rate, args.burst, args.mtu)
        print(testbed.status(st["name"]))
        print(f"run across it with: scope run --testbed {st['name']} -n {len(st['hosts'])}")
    elif args.action == "down":
        removed = testbed.down(args.name)
        print(
            f"removed {len(removed)} objects of testbed '{args.name}'" + (f": {', '.join(removed)}" if removed else "")
        )
    elif args.action == "status":
        print(testbed.status(args.name))
    else:
        raise ScopeError("scope testbed needs an action", "up, down or status")
    return 0


def cmd_layers(args) -> int:
    from scope.layers import layers_of, render

    store = _store(args, create=False)
    ids = [store.resolve_run(r) for r in args.runs]
    layers = layers_of(store, ids)
    if not layers:
        raise ScopeError(
            "no layer tests in these runs",
            "run e.g. scope run node.c2c shm.pingpong shm.stream p2p.pingpong p2p.stream 'net.tcp.*'",
        )
    print(render(layers))
    return 0


def cmd_report(args) -> int:
    from scope.report import build

    store = _store(args, create=False)
    ids = []
    for r in args.runs:
        rid = store.resolve_run(r)
        if rid not in ids:
            ids.append(rid)
    out = _checked_output(args.output)
    try:
        build(store, ids, out, args.title)
    except OSError as e:
        raise ScopeError(f"cannot write {out}: {e.strerror}", "choose a writable -o") from None
    print(f"wrote {out} ({', '.join(f'run {i}' for i in ids)}); open it in any browser, no network needed")
    return 0


def cmd_compare(args) -> int:
    from scope.comparison import compare_runs, render

    store = _store(args, create=False)
    a, b = store.resolve_run(args.a), store.resolve_run(args.b)
    rows = compare_runs(store, a, b, args.alpha, args.min_effect)
    if not rows:
        raise ScopeError(
            f"runs {a} and {b} have no point in common (same test, parameters and size)",
            "compare runs of the same tests",
        )
    if args.json:
        print(json.dumps(rows, indent=1, default=str))
    else:
        print(render(rows, a, b, args.markdown, args.min_effect))
    # A regression gate: any point significantly and materially slower fails.
    return 1 if any(r["verdict"] == "slower" for r in rows) else 0


def cmd_import(args) -> int:
    from scope.importers import load

    data, _ = load(args.file, args.format, args.test)
    store = _store(args)
    points = [p for pts in data.tests.values() for p in pts]
    rid = store.import_run(data.origin, str(Path(args.file).resolve()), points, data.ranks, args.label)
    print(
        f"imported {len(points)} points ({', '.join(data.tests)}) from {args.file} as run {rid} [{data.origin.upper()}]"
    )
    for s in data.skipped:
        print(f"scope: warning [import]: skipped {s}", file=sys.stderr)
    return 0


def cmd_doctor(args) -> int:
    from scope.doctor import doctor

    text, ok = doctor(args.ranks, args.db, args.mpicc)
    print(text)
    return 0 if ok else 3


def cmd_build(args) -> int:
    from scope.toolchain import engine_path, find_toolchain

    print(engine_path(find_toolchain(args.mpicc)))
    return 0


COMMANDS = {
    "run": cmd_run,
    "list": cmd_list,
    "show": cmd_show,
    "runs": cmd_runs,
    "export": cmd_export,
    "doctor": cmd_doctor,
    "build": cmd_build,
    "report": cmd_report,
    "layers": cmd_layers,
    "testbed": cmd_testbed,
    "compare": cmd_compare,
    "import": cmd_import,
}


def main(argv: list[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
        if not args.cmd:
            build_parser().print_help()
            return USAGE
        return COMMANDS[args.cmd](args)
    except ScopeError as e:
        print(e.line(), file=sys.stderr)
        return e.code
    except KeyboardInterrupt:
        print("scope: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except Exception as e:  # a bug: still one line, the traceback only on request
        if os.environ.get("SCOPE_DEBUG"):
            raise
        print(
            f"scope: internal error: {type(e).__name__}: {e} (rerun with SCOPE_DEBUG=1 and report it)",
            file=sys.stderr,
        )
        return 70


if __name__ == "__main__":
    raise SystemExit(main())
