"""scope history: every figure the stored runs share, over time, with the changes that are real
and what changed at each (analysis/history.py); --check as an operator's alarm."""

from __future__ import annotations

import datetime
import fnmatch
import re
import sys

from scope.analysis.history import MIN_RUNS, check, detect, series_of
from scope.analysis.provenance import explain
from scope.cli.argtypes import slowdown_of
from scope.cli.common import emit, open_store, warn_text
from scope.errors import ENVIRONMENT, USAGE, ScopeError
from scope.run.checks import writable_output
from scope.store import now_utc
from scope.views.history import alarm_line, changes_table, history_doc, history_page, series_table
from scope.views.jsonout import dumps

DATE = re.compile(r"\d{4}-\d\d-\d\d")
UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
SIZE = re.compile(r"(\d{1,15})([KMG]?)")


def sizes_of(text: str) -> set[int]:
    out = set()
    for part in text.split(","):
        m = SIZE.fullmatch(part.strip())
        if not m:
            raise ScopeError(f"--sizes {text!r}: {part!r} is not a size", "e.g. --sizes 8,1K,64K", USAGE)
        out.add(int(m.group(1)) * UNITS[m.group(2)])
    return out


def cmd_history(args) -> int:
    if args.since is not None and not _calendar_date(args.since):
        raise ScopeError(f"--since {args.since!r} is not a date", "YYYY-MM-DD, e.g. --since 2026-11-01", USAGE)
    sizes = sizes_of(args.sizes) if args.sizes else None
    limit = slowdown_of(args.max_slowdown)
    store = open_store(args, create=False)
    out = writable_output(args.report, "--report", reads=(store.path,)) if args.report else None
    # every origin: measured, imported and simulated runs each in series of their own (series_of)
    rows = [r for r in store.runs() if r["status"] == "complete" and (r["origin"] or "scope") != "events"]
    if args.since:
        rows = [r for r in rows if r["started_utc"][:10] >= args.since]
    runs = {r["id"]: store.load_run(r["id"], samples=False) for r in rows}
    test = (lambda t: fnmatch.fnmatchcase(t, args.test)) if args.test else None
    series = series_of(list(runs.values()), test, sizes, args.min_runs)
    if not series and args.check:  # a cron job's first nights: nothing to judge yet is no failure
        print(f"scope history: no series with {args.min_runs} runs yet; nothing to judge", file=sys.stderr)
        return 0
    if not series:
        longest = max((len(s.obs) for s in series_of(list(runs.values()), test, sizes, 1)), default=0)
        hint = (
            f"the longest series here has {longest} runs: --min-runs {longest}"
            if longest >= MIN_RUNS
            else f"a series needs {MIN_RUNS} runs at least: measure the same tests again (scope run)"
        )
        raise ScopeError(
            f"no series with {args.min_runs} runs or more"
            + (f" of a test matching {args.test!r}" if args.test else "")
            + f" ({len(runs)} complete runs considered)",
            hint,
            USAGE,
        )
    changes = detect(series)
    explain(changes, runs)
    if args.report:
        try:
            out.write_text(history_page(series, changes, now_utc()), encoding="utf-8")
        except OSError as e:
            raise ScopeError(f"cannot write {out}: {e.strerror}", "choose a writable --report", ENVIRONMENT) from None
        print(f"wrote {out}: {len(series)} series, {len(changes)} changes; open it in any browser", file=sys.stderr)
    if args.json:
        emit(dumps(history_doc(series, changes)) + "\n")
    else:
        emit(changes_table(changes) + "\n\n" + series_table(series) + "\n")
    warn_text(store)
    if args.check:
        slower = check(changes, limit)
        for c in slower:
            print(f"scope history: {alarm_line(c, limit)}", file=sys.stderr)
        return 1 if slower else 0
    return 0


def _calendar_date(text: str) -> bool:
    """YYYY-MM-DD naming a day of the calendar (2026-13-45 has the shape and names none)."""
    if not DATE.fullmatch(text):
        return False
    try:
        datetime.date.fromisoformat(text)
    except ValueError:
        return False
    return True
