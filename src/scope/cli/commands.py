"""The scope subcommands: each reads its arguments, calls the layer that does the work and
prints what it returns.  The parser is in cli.py."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from scope.errors import ScopeError


def _store(args, create=True):
    """The results database: created and written by run and import; opened for reading only
    (create=False) by every command that only reads it."""
    from scope.store import Store

    return Store(args.db, create=create, readonly=not create)


def cmd_run(args) -> int:
    from scope.analysis.facts import derive_stored
    from scope.catalog.baseline import BASELINE_LAUNCHES
    from scope.catalog.options import given
    from scope.run.runner import RunOptions, execute, raise_for
    from scope.views.terminal import summary

    env = {}
    for e in args.env:
        k, eq, v = e.partition("=")
        if not eq or not k:
            raise ScopeError(f"--env expects NAME=VALUE, got '{e}'")
        env[k] = v
    ranks_given = args.ranks is not None
    if not ranks_given:
        from scope.run.slurm import default_ranks

        args.ranks = default_ranks(args.launcher) or 2  # in an allocation, srun's tasks
    o = RunOptions(
        tests=args.tests,
        ranks=args.ranks,
        engine=given(args, args.engine_table),
        launcher=args.launcher,
        hosts=args.hosts.split(",") if args.hosts else None,
        launcher_args=args.launcher_args.split() if args.launcher_args else [],
        env=env,
        mpicc=args.mpicc,
        label=args.label,
        timeout=args.timeout,
        progress=not args.quiet,
        testbed=args.testbed,
        ppn=args.ppn,
        force=args.force,
        launches=args.launches or (1 if args.tests else BASELINE_LAUNCHES),
        fixed_launches=args.fixed_launches,
        save_stream=args.save_stream,
    )
    store = _store(args)
    if args.module:
        from scope.cli.modulecmd import apply_module

        apply_module(args, o, store, ranks_given)
    result = execute(o, store)
    print(summary(derive_stored(store, result.run_id, samples=False)))
    print()
    print(f"Results: run {result.run_id} in {store.path}")
    print(f"  details: scope show {result.run_id}    export: scope export {result.run_id} --format csv -o run.csv")
    for e in result.errors:
        print(f"scope: error: {e.get('test')} {e.get('params')}: {e.get('message')}", file=sys.stderr)
    for e in result.skips:
        print(f"scope: skipped: {e.get('test')} {e.get('params') or ''}: {e.get('reason')}", file=sys.stderr)
    raise_for(result, store.path)
    return 1 if result.errors else 0


def cmd_list(args) -> int:
    from scope.run.toolchain import engine_path, find_toolchain, list_tests

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
    from scope.analysis.facts import derive_stored
    from scope.views.terminal import show_run

    store = _store(args, create=False)
    ranks = None
    if args.ranks:
        from scope.analysis.collectives import parse_ranks

        try:
            ranks = parse_ranks(args.ranks)
        except ValueError as e:
            raise ScopeError(f"bad --ranks '{args.ranks}': {e}", "e.g. --ranks 0,3-5") from None
    facts = derive_stored(store, store.resolve_run(args.run))
    try:
        text = show_run(facts, args.test, ranks, args.rows)
    except ValueError as e:  # a rank the run's points do not have
        raise ScopeError(f"bad --ranks '{args.ranks}': {e}", "ranks count from 0 up to the run's ranks - 1") from None
    print(text)
    return 0


def cmd_runs(args) -> int:
    from scope.store import default_path
    from scope.views.terminal import runs_table

    path = Path(args.db) if args.db else default_path()
    if not path.exists():
        print(f"no runs yet: no results database at {path}; start one with 'scope run'")
        return 0
    print(runs_table(_store(args, create=False).runs()))
    return 0


def cmd_export(args) -> int:
    from scope.analysis.facts import derive
    from scope.views.export import to_csv, to_json

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
        except OSError as e:
            raise ScopeError(f"cannot write {out}: {e.strerror or e}", "choose a writable -o", 3) from None
        print(f"wrote {out} (parquet, run {run_id}, {len(df)} points)", file=sys.stderr)
        return 0
    run = store.load_run(run_id)
    text = to_csv(run, args.samples) if args.format == "csv" else to_json(derive(run))
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
    from scope.run import testbed

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
    from scope.analysis.cluster import by_pair_kind
    from scope.analysis.layers import layers_of
    from scope.views.terminal import layers_table

    store = _store(args, create=False)
    ids = [store.resolve_run(r) for r in args.runs]
    groups = by_pair_kind([store.load_run(i, samples=False) for i in ids])
    tables = [(kind, layers_of(runs)) for kind, runs in groups.items()]
    if not any(layers for _, layers in tables):
        raise ScopeError(
            "no layer tests in these runs",
            "run e.g. scope run node.c2c shm.pingpong shm.stream p2p.pingpong p2p.stream 'net.tcp.*'",
        )
    for kind, layers in tables:
        if len(tables) > 1 and layers:  # runs on different kinds of node: a table per kind
            print(f"nodes of kind: {kind or 'not described'}")
        if layers:
            print(layers_table(layers))
    return 0


def cmd_report(args) -> int:
    from scope.views.report import build

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
    from scope.analysis.compare import compare_runs
    from scope.catalog.modules import comparison_note
    from scope.views.compare import render

    vary = None
    if args.vary:
        name, _, values = args.vary.partition("=")
        two = values.split(",")
        if not name or len(two) != 2 or not all(two):
            raise ScopeError(f"--vary {args.vary}: expected NAME=A,B", "e.g. --vary transpose=alltoall,nonblocking")
        vary = (name, two[0], two[1])
    store = _store(args, create=False)
    a, b = store.resolve_run(args.a), store.resolve_run(args.b)
    if a == b and not vary:
        raise ScopeError(f"run {a} against itself compares nothing", "name two runs, or two settings with --vary")
    ra, rb = store.load_run(a), store.load_run(b)
    rows = compare_runs(ra, rb, args.alpha, args.min_effect, vary)
    if not rows:
        what = f"with {vary[0]}={vary[1]} and {vary[0]}={vary[2]}" if vary else "(same test, parameters and size)"
        raise ScopeError(f"runs {a} and {b} have no point in common {what}", "compare runs of the same tests")
    if args.json:
        print(json.dumps(rows, indent=1, default=str))
    else:
        la, lb = (f"{a} {vary[0]}={vary[1]}", f"{b} {vary[0]}={vary[2]}") if vary else (a, b)
        print(render(rows, la, lb, args.markdown, args.min_effect))
    note = comparison_note(ra.context.module, rb.context.module) if ra.context and rb.context else None
    if note:
        print(f"scope: warning [module]: {note}", file=sys.stderr)
    # A regression gate: any point significantly and materially slower fails.
    return 1 if any(r["verdict"] == "slower" for r in rows) else 0


def _descriptors(args):
    """The engine's test descriptors: those stored with earlier runs, else the engine's own
    (built if needed); none when no MPI is at hand (imports then keep the peers' names)."""
    from scope.model import TestInfo
    from scope.store import default_path

    if Path(args.db or default_path()).exists():
        infos = _store(args, create=False).test_infos()
        if infos:
            return list(infos.values())
    from scope.run.toolchain import engine_path, find_toolchain, list_tests

    try:
        return [TestInfo.of(t) for t in list_tests(engine_path(find_toolchain(None), quiet=True))]
    except ScopeError:
        return []


def cmd_import(args) -> int:
    from scope.store.importers import load, peer_names

    if args.format == "stream" or Path(args.file).is_dir():
        from scope.run.recorder import replay

        rid, n = replay(_store(args), args.file, args.label)
        print(f"imported {n} points from the saved stream {args.file} as run {rid}")
        return 0

    data, _ = load(args.file, args.format, args.test, lambda: peer_names(_descriptors(args)))
    store = _store(args)
    rid = store.import_run(data.origin, str(Path(args.file).resolve()), data.tests, data.ranks, args.label)
    print(
        f"imported {data.rows} points ({', '.join(data.tests)}) from {args.file} as run {rid} [{data.origin.upper()}]"
    )
    for s in data.skipped:
        print(f"scope: warning [import]: skipped {s}", file=sys.stderr)
    return 0


def cmd_doctor(args) -> int:
    from scope.cli.doctor import doctor

    text, ok = doctor(args.ranks, args.db, args.mpicc)
    print(text)
    if args.module:
        from scope.cli.modulecmd import doctor_module

        more, fine = doctor_module(_store(args), args.ranks)
        print(more)
        ok = ok and fine
    return 0 if ok else 3


def cmd_build(args) -> int:
    from scope.run.toolchain import engine_path, find_toolchain

    print(engine_path(find_toolchain(args.mpicc)))
    return 0
