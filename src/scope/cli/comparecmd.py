"""scope compare: two runs, or two settings of one run, point by point, as a regression gate;
with --rerun, the two runs' configurations measured again in alternating launches."""

from __future__ import annotations

import io
import sys

from scope.analysis.compare import compare_launch_sets, compare_runs, engines_differ
from scope.analysis.noise import MACHINE_CHANGED, canary_shifts, judge_machine
from scope.analysis.provenance import what_changed
from scope.analysis.verdict import verdicts
from scope.catalog.modules import comparison_note
from scope.cli.common import emit, open_store, warn_damaged, warn_text
from scope.errors import MACHINE_MOVED, RUN_FAILED, USAGE, ScopeError
from scope.run.request import options_of
from scope.run.runner import execute
from scope.views.compare import render
from scope.views.jsonout import dumps


def cmd_compare(args) -> int:
    vary = None
    if args.vary:
        name, _, values = args.vary.partition("=")
        two = values.split(",")
        if not name or len(two) != 2 or not all(two):
            raise ScopeError(f"--vary {args.vary}: expected NAME=A,B", "e.g. --vary transpose=alltoall,nonblocking")
        vary = (name, two[0], two[1])
    store = open_store(args, create=bool(args.rerun))
    a, b = store.resolve_run(args.a), store.resolve_run(args.b)
    if a == b and (args.rerun or not vary):
        raise ScopeError(f"run {a} against itself compares nothing", "name two runs, or two settings with --vary")
    ra, rb = store.load_run(a), store.load_run(b)
    warn_damaged(ra, rb)
    sims = [bool(r.context and r.context.sim) for r in (ra, rb)]
    if sims[0] != sims[1]:
        which = a if sims[0] else b
        print(
            f"scope: warning [simulated]: run {which} is simulated (SimGrid) and the other measured on a machine: "
            "the comparison sets a model against hardware, so no difference fails it (exit 0)",
            file=sys.stderr,
        )
    shifts = []
    if args.rerun and not compare_runs(ra, rb, args.alpha, args.min_effect, vary):
        # known from the stored runs: said before four launches measure both again (issue 44)
        raise nothing_in_common(a, b, ra, rb, vary)
    if args.rerun:
        rows, la, lb = rerun(args, store, a, b, ra, rb, vary)
    else:
        rows = compare_runs(ra, rb, args.alpha, args.min_effect, vary)
        la, lb = (f"{a} {vary[0]}={vary[1]}", f"{b} {vary[0]}={vary[2]}") if vary else (a, b)
        if a != b and not (ra.imported or rb.imported):
            shifts = canary_shifts(ra, rb, args.alpha, args.min_effect)
            rows = judge_machine(rows, shifts)
    if not rows:
        raise nothing_in_common(a, b, ra, rb, vary)
    if args.json:
        emit(dumps(rows) + "\n")
    else:
        answers = verdicts(rows, f"run {la}", f"run {lb}")  # the answer first (issue 70), the rows after
        changed = what_changed(ra, rb) if not args.rerun else {}  # what differs beside the answer (issue 70)
        said = [f"answer: {v.sentence}" for v in answers]
        said += [f"differs: {k}: {x} -> {y}" for k, (x, y) in changed.items()]
        emit("".join(f"{line}\n" for line in said) + ("\n" if said else ""))
        emit(render(rows, la, lb, args.markdown, args.min_effect) + "\n")
        for s in shifts:
            print(f"machine (canary): {s.text()}: {s.verdict}")
    note = comparison_note(ra.context.module, rb.context.module) if ra.context and rb.context else None
    if note:
        print(f"scope: warning [module]: {note}", file=sys.stderr)
    engines = None if args.rerun else engines_differ(ra, rb)  # a rerun measures both with this engine
    if engines:
        print(
            f"scope: warning [engine]: runs {a} and {b} were measured by different engine code (source "
            f"{engines[0]} and {engines[1]}), so a difference may be SCOPE's own change; measure both again "
            f"with one engine: scope compare --rerun {a} {b}",
            file=sys.stderr,
        )
    warn_text(store)
    if any(r["verdict"] == MACHINE_CHANGED for r in rows):
        print(
            f"scope: warning [machine]: the machine changed between runs {a} and {b} (their canaries moved), so "
            "no difference can be laid on what was compared; measure both again in alternating launches: "
            f"scope compare --rerun {a} {b}",
            file=sys.stderr,
        )
        return MACHINE_MOVED
    if sims[0] != sims[1]:  # a model set against hardware is no regression of either (the warning says so)
        return 0
    # A regression gate: any point significantly and materially slower fails.
    return 1 if any(r["verdict"] == "slower" for r in rows) else 0


def nothing_in_common(a: int, b: int, ra, rb, vary) -> ScopeError:
    """The refusal of two runs without a point in common; where the same test differs in one
    parameter only, --vary is offered with its two values."""
    what = f"with {vary[0]}={vary[1]} and {vary[0]}={vary[2]}" if vary else "(same test, parameters and size)"
    hint = "compare runs of the same tests"
    pairs = [] if vary else [(x, y) for x in ra.points for y in rb.points if (x.test, x.size) == (y.test, y.size)]
    for x, y in pairs:
        diff = [k for k in {*x.params, *y.params} if x.params.get(k) != y.params.get(k)]
        if len(diff) == 1:
            k = diff[0]
            hint = f"they differ in {k} only: scope compare {a} {b} --vary {k}={x.params.get(k)},{y.params.get(k)}"
            break
    return ScopeError(f"runs {a} and {b} have no point in common {what}", hint, USAGE)


def rerun(args, store, a: int, b: int, ra, rb, vary) -> tuple[list[dict], str, str]:
    """A's and B's configurations measured again, one launch each in turn (A B, B A, A B ...:
    neither side always goes first), so a drift of the machine falls on both sides alike; the
    launches are the replicates."""
    sides = {}
    for rid, run in ((a, ra), (b, rb)):
        request = (run.context_record or {}).get("request")
        sides[rid] = options_of(request, rid, launches=1, progress=False, label=f"rerun of {rid}")
    ids: dict[int, list[int]] = {a: [], b: []}
    for k in range(args.launches):
        for rid, o in sides.items() if k % 2 == 0 else reversed(sides.items()):
            print(f"scope compare: launch {k + 1} of {args.launches}: run {rid}'s configuration", file=sys.stderr)
            r = execute(o, store, out=io.StringIO())
            if r.status != "complete":
                raise ScopeError(
                    f"the rerun of run {rid} stopped (run {r.run_id}): {r.reason or r.status}",
                    f"see 'scope show {r.run_id}'",
                    RUN_FAILED,
                )
            ids[rid].append(r.run_id)
    rows = compare_launch_sets(
        [store.load_run(i) for i in ids[a]], [store.load_run(i) for i in ids[b]], args.alpha, args.min_effect, vary
    )
    la, lb = (f"{rid} rerun as {','.join(map(str, ids[rid]))}" for rid in (a, b))
    print(f"runs {a} and {b} measured again in alternating launches; this verdict is the one to trust")
    return rows, la, lb
