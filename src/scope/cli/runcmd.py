"""The commands that build, launch or manage the machine: run, list, build, testbed, doctor."""

from __future__ import annotations

import importlib
import os
import sys
import tempfile
from pathlib import Path

from scope.catalog.baseline import DEFAULT_LAUNCHES, launches
from scope.catalog.options import EngineOption, from_records, given
from scope.catalog.osu import osu_settings, peer_names
from scope.cli.common import emit, open_store, push_target
from scope.cli.modulecmd import apply_module
from scope.envvars import flag
from scope.errors import ScopeError
from scope.fetch.facts import derive_stored
from scope.model import TestInfo
from scope.run.request import RunOptions
from scope.run.runner import execute, raise_for
from scope.run.slurm import default_ranks
from scope.run.toolchain import describe, engine_path, find_toolchain, list_tests
from scope.store import Store
from scope.store.connect import default_path
from scope.views.jsonout import dumps
from scope.views.summary import summary


def run_options(args) -> list[EngineOption]:
    """The engine's option table, from the engine built for --mpicc's MPI (kept on args, so the
    run does not find it again: its sources' digest is 8 ms of every start, issue 52)."""
    args.engine_exe = engine_path(find_toolchain(args.mpicc))
    return from_records(describe(args.engine_exe))


def default_launches() -> int:
    """The launches a run makes unless --launches says: $SCOPE_LAUNCHES (for a machine's quick
    runs, or a test suite), else DEFAULT_LAUNCHES."""
    text = os.environ.get("SCOPE_LAUNCHES", "").strip()
    if not text:
        return DEFAULT_LAUNCHES
    try:
        return launches(text)
    except ValueError as e:
        raise ScopeError(f"SCOPE_LAUNCHES {e}", "unset it, or e.g. 3") from None


def engine_options(args) -> dict[str, object]:
    """The engine options given; and --no-canary where $SCOPE_NO_CANARY says yes (a test
    suite's runs that never read the machine probes: ~0.2 s of every core a launch)."""
    out = given(args, args.engine_table)
    if flag("SCOPE_NO_CANARY"):
        out.setdefault("no-canary", True)
    return out


def cmd_run(args) -> int:
    env = {}
    for e in args.env:
        k, eq, v = e.partition("=")
        if not eq or not k:
            raise ScopeError(f"--env expects NAME=VALUE, got '{e}'")
        env[k] = v
    if args.time_limit is not None and not args.module:  # issue 58: it was read by nothing
        raise ScopeError("--time-limit scales the standard module", "add --module standard, or leave it out")
    if args.osu and args.module:
        raise ScopeError(f"--osu {args.osu} and --module {args.module} both choose the tests", "give one of them")
    if args.osu:
        apply_osu(args)
    ranks_given = args.ranks is not None
    if not ranks_given:
        args.ranks = default_ranks(args.launcher) or 2  # in an allocation, srun's tasks
    o = RunOptions(
        tests=args.tests,
        ranks=args.ranks,
        engine=engine_options(args),
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
        launches=args.launches or default_launches(),
        fixed_launches=args.fixed_launches,
        save_stream=args.save_stream,
        dry_run=args.dry_run,
        canary=args.canary,
        sim=args.sim,
        sim_ppn=args.sim_ppn,
        sim_cfg=args.sim_cfg,
        sim_clocks=args.sim_clocks,
        engine_exe=getattr(args, "engine_exe", None),
    )
    hub = push_target(args, args.push)  # a bad hub address or a missing token said before anything runs
    if args.canary and o.engine.get("no-canary"):
        raise ScopeError("--canary and --no-canary (or $SCOPE_NO_CANARY) say the opposite", "give one of them")
    if args.dry_run:  # nothing written: the database read as it is, or none at all
        with tempfile.TemporaryDirectory() as empty:
            there = Path(args.db or default_path()).exists()
            store = open_store(args, create=False) if there else Store(Path(empty) / "none.db")
            if args.module:
                apply_module(args, o, store, ranks_given)
            result = execute(o, store)
        where = None
        if hub:  # where the run would go, and where its token is read from: the token itself never
            token = "--token-file" if args.token_file else "$SCOPE_HUB_TOKEN"
            where = {"hub": hub[0], "cluster": args.cluster, "token": token}
        print(dumps({**result.doc, "push": where}))
        return 0
    store = open_store(args)
    if args.module:
        apply_module(args, o, store, ranks_given)
    result = execute(o, store)
    emit(summary(derive_stored(store, result.run_id, samples=False)) + "\n")
    print()
    print(f"Results: run {result.run_id} in {store.path}")
    print(f"  details: scope show {result.run_id}    export: scope export {result.run_id} --format csv -o run.csv")
    for e in result.errors:
        print(f"scope: error: {e.get('test')} {e.get('params')}: {e.get('message')}", file=sys.stderr)
    for e in result.skips:
        print(f"scope: skipped: {e.get('test')} {e.get('params') or ''}: {e.get('reason')}", file=sys.stderr)
    if hub and result.status == "complete":  # the run is stored whatever the hub says
        # the push client (HTTP, the bundle) loaded only by a run that pushes: 16 ms of every
        # run's start otherwise (issue 52), as cli/main loads a command's module
        importlib.import_module("scope.cli.hubcmd").push_runs(store, [result.run_id], *hub, args.cluster)
    elif hub:
        print(f"scope: warning [push]: run {result.run_id} is {result.status}: not pushed", file=sys.stderr)
    raise_for(result)
    return 1 if result.errors else 0


def apply_osu(args) -> None:
    """`scope run --osu PROGRAM`: the test, parameters and options of that program's definition
    (OMB's sizes unless --sizes is given; options the user gave are kept)."""
    tests = list_tests(engine_path(find_toolchain(args.mpicc), quiet=True))
    setting = next((r for r in osu_settings(peer_names([TestInfo.of(t) for t in tests])) if r.osu == args.osu), None)
    if setting is None:
        raise ScopeError(f"--osu {args.osu}: no OMB 7.4 CPU program of that name", "see 'scope list --osu'")
    if setting.test is None:
        raise ScopeError(f"--osu {args.osu} has no SCOPE setting: {setting.note}", "see 'scope list --osu'")
    if args.tests:
        raise ScopeError(f"--osu {args.osu} runs {setting.test}", "name tests or --osu, not both")
    args.tests = [setting.test]
    table = {o.name: o for o in args.engine_table}
    args.param = list(getattr(args, "param", None) or []) + [f"{k}={v}" for k, v in setting.params.items()]
    for name, value in {**({"sizes": setting.sizes} if setting.sizes else {}), **setting.options}.items():
        dest = table[name].dest if name in table else name.replace("-", "_")
        if getattr(args, dest, None) in (None, False, []):
            setattr(args, dest, value)
    args.label = args.label or f"as {args.osu}"
