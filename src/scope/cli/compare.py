"""scope compare: two runs, or two settings of one run, point by point, as a regression gate."""

from __future__ import annotations

import json
import sys

from scope.analysis.compare import compare_runs
from scope.catalog.modules import comparison_note
from scope.cli.common import open_store
from scope.errors import ScopeError
from scope.views.compare import render


def cmd_compare(args) -> int:
    vary = None
    if args.vary:
        name, _, values = args.vary.partition("=")
        two = values.split(",")
        if not name or len(two) != 2 or not all(two):
            raise ScopeError(f"--vary {args.vary}: expected NAME=A,B", "e.g. --vary transpose=alltoall,nonblocking")
        vary = (name, two[0], two[1])
    store = open_store(args, create=False)
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
