"""scope import: a peer tool's output, a saved stream of engine records, or a run bundle, stored as a run."""

from __future__ import annotations

import re
import sys
from pathlib import Path

from scope.cli.common import descriptors, open_store
from scope.errors import USAGE, ScopeError
from scope.run.recorder import replay
from scope.store import bundle_stream
from scope.store.bundle import HINT as BUNDLE_HINT
from scope.store.bundle import is_bundle, read
from scope.store.bundle import load as load_bundle
from scope.store.eventfiles import prefix_of as events_prefix
from scope.store.eventfiles import read_events
from scope.store.importers import (
    importable,
    load,
    load_long,
    load_perflog,
    long_form,
    peer_names,
    perflog_form,
)

TEST_NAME = re.compile(r"[a-z][a-z0-9_]*(\.[a-z0-9_]+)+")  # level.operation, as the engine names tests


def cmd_import(args) -> int:
    if args.test is not None and not TEST_NAME.fullmatch(args.test):
        raise ScopeError(
            f"--test {args.test!r} is not a test name", "LEVEL.NAME in lowercase, e.g. --test csv.allreduce", USAGE
        )
    if args.format == "events" or (args.format == "auto" and events_prefix(args.file)):
        ranks, prefix = read_events(args.file)
        rid = open_store(args).import_timeline(str(Path(prefix).resolve()), ranks, args.label)
        n = sum(len(r) for r in ranks)
        print(f"imported {n} events of {len(ranks)} ranks from {prefix}.*.jsonl as run {rid} [EVENTS]")
        return 0
    if args.format == "stream" or Path(args.file).is_dir():
        rid, n = replay(open_store(args), args.file, args.label)
        print(f"imported {n} points from the saved stream {args.file} as run {rid}")
        return 0
    if args.format == "bundle" or (args.format == "auto" and is_bundle(args.file)):
        importable(Path(args.file), BUNDLE_HINT)
        if bundle_stream.streamed(Path(args.file)):  # version 2: read a line at a time
            rid, n = bundle_stream.load_file(open_store(args), Path(args.file), args.label)
            print(f"imported the run bundle {args.file} ({n} point records) as run {rid}")
            return 0
        bundle = read(Path(args.file).read_bytes())
        if args.label:
            bundle.run.label = args.label
        rid = load_bundle(open_store(args), bundle)
        n = len(bundle.points) + sum(len(i.sizes) // 8 for i in bundle.imported)  # int64 sizes
        print(f"imported the run bundle {args.file} ({n} point records) as run {rid}")
        return 0
    if long_form(args.file, args.format):
        return _history(args)
    if perflog_form(args.file, args.format):
        return _reframe(args)
    data, _ = load(
        args.file, args.format, args.test, lambda: peer_names(descriptors(args)), progress=Reading(args.file)
    )
    store = open_store(args)
    rid = store.import_run(data.origin, str(Path(args.file).resolve()), data.tests, data.ranks, args.label)
    print(
        f"imported {data.rows} points ({', '.join(data.tests)}) from {args.file} as run {rid} [{data.origin.upper()}]"
    )
    for s in data.skipped:
        print(f"scope: warning [import]: skipped {s}", file=sys.stderr)
    return 0


def _history(args) -> int:
    """A site's history in one CSV: each run a stored run, its launches its replicates."""
    runs = load_long(args.file, args.test, progress=Reading(args.file))
    store = open_store(args)
    source = str(Path(args.file).resolve())
    ids = [store.import_run("csv", source, r.imported().tests, None, r.label, r.started) for r in runs]
    points = sum(len(c) for r in runs for c in r.imported().tests.values())
    print(f"imported {len(runs)} runs ({points} points) from {args.file} as runs {ids[0]}-{ids[-1]} [CSV]")
    return 0


def _reframe(args) -> int:
    """A ReFrame perflog: each job that passed a run of its own (origin reframe)."""
    jobs, skipped = load_perflog(args.file)
    store = open_store(args)
    source = str(Path(args.file).resolve())
    ids = [
        store.import_run("reframe", source, j.imported().tests, None, args.label or j.label, j.started) for j in jobs
    ]
    tests = sorted({t for j in jobs for t in j.values})
    print(
        f"imported {len(jobs)} ReFrame jobs ({', '.join(tests)}) from {args.file} as runs {ids[0]}-{ids[-1]} [REFRAME]"
    )
    for s in skipped:
        print(f"scope: warning [import]: left out {s}", file=sys.stderr)
    return 0


class Reading:
    """How far a large import has read, on stderr: in place on a terminal, else a line a quarter."""

    def __init__(self, name: str, stream=None):
        self.name, self.stream = name, stream or sys.stderr
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.quarter = 0

    def __call__(self, done: int, total: int) -> None:
        share = done / total if total else 1.0
        text = f"scope: importing {self.name}: {share:.0%} ({done / 1e6:,.1f} of {total / 1e6:,.1f} MB)"
        if self.tty:
            print("\r" + text, end="\n" if done >= total else "", file=self.stream, flush=True)
        elif int(share * 4) > self.quarter or done >= total:
            self.quarter = int(share * 4)
            print(text, file=self.stream, flush=True)
