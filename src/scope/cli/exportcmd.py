"""The commands that write stored runs to files: export (CSV, JSON, Parquet, bundle) and report (HTML)."""

from __future__ import annotations

import sys

from scope.analysis.facts import derive
from scope.analysis.layers import layers_of
from scope.api import Results
from scope.cli.common import emit, emit_json, open_store, warn_damaged, warn_text
from scope.errors import ENVIRONMENT, USAGE, ScopeError
from scope.fetch.facts import derive_stored
from scope.run.checks import writable_output
from scope.store import bundle_stream
from scope.views.export import to_csv, to_json
from scope.views.report import build
from scope.views.timeline import events_csv


def cmd_export(args) -> int:
    store = open_store(args, create=False)
    run_id = store.resolve_run(args.run)
    if args.format == "parquet":
        if not args.output or args.output == "-":
            raise ScopeError("Parquet is binary: give a file with -o", "e.g. -o run.parquet")
        out = writable_output(args.output, reads=(store.path,))
        df = Results(store).points(run_id)
        try:
            df.to_parquet(out, index=False)
        except ImportError:
            raise ScopeError(
                "Parquet export needs pyarrow, an optional part of SCOPE",
                "pip install 'scope-bench[parquet]', or export --format csv",
                ENVIRONMENT,
            ) from None
        except OSError as e:
            raise ScopeError(f"cannot write {out}: {e.strerror or e}", "choose a writable -o", ENVIRONMENT) from None
        print(f"wrote {out} (parquet, run {run_id}, {len(df)} points)", file=sys.stderr)
        warn_text(store)
        return 0
    if args.format == "bundle":
        return _export_bundle(args, store, run_id)
    run = store.load_run(run_id)
    warn_damaged(run)
    csv = args.format == "csv"
    # CSV as one text; JSON in pieces as it is made (views/jsonout.stream), never held whole
    if csv and run.timeline:  # a program's events: an event a row (views/timeline.py)
        facts = derive(run)
        body = events_csv(run.id, facts.timeline, run.timeline)
    else:
        body = to_csv(run, args.samples) if csv else to_json(derive(run))
    if not args.output or args.output == "-":
        if csv:
            emit(body, data=True)
        else:
            emit_json(body)
        warn_text(store)
        return 0
    out = writable_output(args.output, reads=(store.path,))
    try:
        with open(out, "w") as f:
            if csv:
                f.write(body)
            else:
                f.writelines(body)
                f.write("\n")
    except OSError as e:
        raise ScopeError(f"cannot write {out}: {e.strerror}", "choose a writable -o", ENVIRONMENT) from None
    print(f"wrote {out} ({args.format}, run {run_id})", file=sys.stderr)
    warn_text(store)
    return 0


def _export_bundle(args, store, run_id: int) -> int:
    """The whole run (records, samples, provenance) as gzip'd JSON lines, written row by row
    (store/bundle_stream.py): binary, so a file only."""
    if not args.output or args.output == "-":
        raise ScopeError("a bundle is gzip'd: give a file with -o", "e.g. -o run.scope.json.gz", USAGE)
    out = writable_output(args.output, reads=(store.path,))
    head = bundle_stream.dump_head(store, run_id)  # a run that cannot leave is said before the file is made
    try:
        with open(out, "wb") as f:
            bundle_stream.write(store, run_id, f, args.keep_samples, head)
            size = f.tell()
    except OSError as e:
        raise ScopeError(f"cannot write {out}: {e.strerror}", "choose a writable -o", ENVIRONMENT) from None
    left = "" if args.keep_samples else ", samples left out"
    print(f"wrote {out} (bundle, run {run_id}, {size / 1e6:.2f} MB{left})", file=sys.stderr)
    return 0


def report_name(ids: list[int]) -> str:
    """A report's file when -o is not given: named by its runs, so `scope report last` never
    overwrites another run's report, nor the baseline's scope-report.html (issue 70)."""
    shown = ids if len(ids) <= 4 else [ids[0], ids[-1]]
    joined = "-".join(map(str, shown)) + (f"-{len(ids)}-runs" if len(ids) > 4 else "")
    return f"scope-report-run{'s' if len(ids) > 1 else ''}-{joined}.html"


def cmd_report(args) -> int:
    store = open_store(args, create=False)
    ids = []
    for r in args.runs:
        rid = store.resolve_run(r)
        if rid not in ids:
            ids.append(rid)
    out = writable_output(args.output or report_name(ids), reads=(store.path,))
    try:
        facts = [derive_stored(store, i) for i in ids]
        build(facts, out, args.title, layers=layers_of([f.run for f in facts]))
    except OSError as e:
        raise ScopeError(f"cannot write {out}: {e.strerror}", "choose a writable -o", ENVIRONMENT) from None
    print(f"wrote {out} ({', '.join(f'run {i}' for i in ids)}); open it in any browser, no network needed")
    warn_text(store)
    return 0
