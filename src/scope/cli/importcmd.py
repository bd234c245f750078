"""scope import: a peer tool's output, or a saved stream of engine records, stored as a run."""

from __future__ import annotations

import re
import sys
from pathlib import Path

from scope.cli.common import descriptors, open_store
from scope.errors import USAGE, ScopeError
from scope.run.recorder import replay
from scope.store.importers import load, peer_names

TEST_NAME = re.compile(r"[a-z][a-z0-9_]*(\.[a-z0-9_]+)+")  # level.operation, as the engine names tests


def cmd_import(args) -> int:
    if args.test is not None and not TEST_NAME.fullmatch(args.test):
        raise ScopeError(
            f"--test {args.test!r} is not a test name", "LEVEL.NAME in lowercase, e.g. --test csv.allreduce", USAGE
        )
    if args.format == "stream" or Path(args.file).is_dir():
        rid, n = replay(open_store(args), args.file, args.label)
        print(f"imported {n} points from the saved stream {args.file} as run {rid}")
        return 0
    data, _ = load(args.file, args.format, args.test, lambda: peer_names(descriptors(args)))
    store = open_store(args)
    rid = store.import_run(data.origin, str(Path(args.file).resolve()), data.tests, data.ranks, args.label)
    print(
        f"imported {data.rows} points ({', '.join(data.tests)}) from {args.file} as run {rid} [{data.origin.upper()}]"
    )
    for s in data.skipped:
        print(f"scope: warning [import]: skipped {s}", file=sys.stderr)
    return 0
