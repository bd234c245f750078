"""The commands that read stored runs to the terminal: show, runs, layers."""

from __future__ import annotations

import fnmatch
from pathlib import Path

from scope.analysis.cluster import by_pair_kind
from scope.analysis.collectives import parse_ranks
from scope.analysis.layers import layers_of
from scope.cli.common import emit, emit_json, open_store, warn_text
from scope.errors import USAGE, ScopeError
from scope.fetch.facts import derive_stored
from scope.store import default_path
from scope.views.export import runs_json, show_json
from scope.views.jsonout import dumps
from scope.views.terminal import layers_table, runs_table, show_run


def cmd_show(args) -> int:
    store = open_store(args, create=False)
    ranks = None
    if args.ranks:
        try:
            ranks = parse_ranks(args.ranks)
        except ValueError as e:
            raise ScopeError(f"bad --ranks '{args.ranks}': {e}", "e.g. --ranks 0,3-5") from None
    facts = derive_stored(store, store.resolve_run(args.run))
    tests = sorted({p.test for p in facts.run.points})
    if args.test is not None and not any(fnmatch.fnmatchcase(t, args.test) for t in tests):
        # a filter that matches nothing says so (issue 44), rather than print an empty run
        raise ScopeError(
            f"run {facts.run.id} has no points of a test matching '{args.test}'",
            f"its tests: {', '.join(tests) or 'none'}",
            USAGE,
        )
    if ranks is not None:
        check_ranks(facts.run, ranks, args.ranks)
    try:
        if args.json:
            emit_json(show_json(facts, ranks))
        else:
            emit(show_run(facts, args.test, ranks, args.rows) + "\n")
    except ValueError as e:  # a rank the run's points do not have
        raise ScopeError(f"bad --ranks '{args.ranks}': {e}", "ranks count from 0 up to the run's ranks - 1") from None
    warn_text(store)
    return 0


def cmd_runs(args) -> int:
    path = Path(args.db) if args.db else default_path()
    if not path.exists():
        print("[]" if args.json else f"no runs yet: no results database at {path}; start one with 'scope run'")
        return 0
    store = open_store(args, create=False)
    rows = store.runs()
    emit((runs_json(rows) if args.json else runs_table(rows)) + "\n")
    warn_text(store)
    return 0


def cmd_layers(args) -> int:
    store = open_store(args, create=False)
    ids = [store.resolve_run(r) for r in args.runs]
    groups = by_pair_kind([store.load_run(i, samples=False) for i in ids])
    tables = [(kind, layers_of(runs)) for kind, runs in groups.items()]
    if not any(layers for _, layers in tables):
        raise ScopeError(
            "no layer tests in these runs",
            "run e.g. scope run node.c2c shm.pingpong shm.stream p2p.pingpong p2p.stream 'net.tcp.*'",
        )
    if args.json:
        print(dumps({"kinds": [{"kind": kind, "layers": layers} for kind, layers in tables if layers]}))
        warn_text(store)
        return 0
    for kind, layers in tables:
        if len(tables) > 1 and layers:  # runs on different kinds of node: a table per kind
            print(f"nodes of kind: {kind or 'not described'}")
        if layers:
            emit(layers_table(layers) + "\n")
    warn_text(store)
    return 0


def check_ranks(run, ranks: list[int], given: str) -> None:
    """--ranks selects ranks of the points that time every rank (window and barrier timing);
    a rank the run does not have, or a run with no such point, is refused rather than ignored
    (issue 58: `--ranks 9` on a 5-rank all-pairs run printed the run as if not given)."""
    if run.ranks and max(ranks) >= run.ranks:
        raise ScopeError(
            f"bad --ranks '{given}': run {run.id} has {run.ranks} ranks", f"ranks count from 0 to {run.ranks - 1}"
        )
    if not any(p.window is not None for p in run.points):
        raise ScopeError(
            f"--ranks selects ranks of window- or barrier-timed points, and run {run.id} has none",
            "leave --ranks out (an all-pairs run's screen shows every rank pair)",
        )
