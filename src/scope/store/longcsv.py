"""A site's history in one CSV (issue 68): one row per measurement,

    run,started_utc,launch,test,size,time_us

(`started_utc`, `launch` and `test` optional; `run` any label).  Each distinct `run` becomes a
stored run (origin `csv`, its label the run's), its launches its replicates: per test and size
the median over its launches is the point's value, and each launch's own value is kept beside
it in a column `launch K` (the imported table's extra columns), which the history reads as the
run's launches (model/imported.py).  Runs are ordered by `started_utc` where every run gives
one, else by their first appearance in the file.  Every row is checked as the other imports
check theirs (store/columns.py); the first bad row names its line, and nothing is stored."""

from __future__ import annotations

import csv
import io
import re
import statistics
from dataclasses import dataclass, field

from scope.store.columns import Column, Imported, size_of, value_of

COLUMNS = ("run", "started_utc", "launch", "test", "size", "time_us")
NEEDED = ("run", "size", "time_us")
UTC = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z")
TEST = re.compile(r"[a-z][a-z0-9_]*(\.[a-z0-9_]+)+")
FORM = ",".join(COLUMNS)
MAX_LAUNCHES = 1000


def is_long(header: str) -> bool:
    """Whether a CSV's first line is the long form's header: it names a run column (what it
    lacks is said where it is read)."""
    return "run" in [c.strip().lower() for c in header.split(",")]


@dataclass
class LongRun:
    label: str
    started: str | None = None
    # test -> size -> launch -> time (us)
    values: dict[str, dict[int, dict[int, float]]] = field(default_factory=dict)

    def imported(self) -> Imported:
        """The run as an import: per test, each size's median over its launches, and each
        launch's own value in its `launch K` column."""
        out = Imported("csv")
        for test, by_size in self.values.items():
            col = Column("time as given in the CSV (the median of its launches)", 1, "median of launches")
            launches = sorted({k for per in by_size.values() for k in per})
            for size in sorted(by_size):
                per = by_size[size]
                extra = {f"launch {k}": per[k] for k in launches if k in per} if len(launches) > 1 else None
                col.add(size, statistics.median(per.values()), None, extra)
            out.tests[test] = col
        return out


def parse_long(text, default_test: str = "csv.import") -> list[LongRun]:
    """The runs of a long CSV, in their order (`text`: the file's text or its lines)."""
    reader = csv.reader(io.StringIO(text) if isinstance(text, str) else text)
    header = None
    runs: dict[str, LongRun] = {}
    for row in reader:
        if not row or row[0].lstrip().startswith("#"):
            continue
        if header is None:
            header = [c.strip().lower() for c in row]
            unknown = [c for c in header if c not in COLUMNS]
            missing = [c for c in NEEDED if c not in header]
            if unknown or missing or len(set(header)) != len(header):
                what = (
                    f"unknown column {unknown[0]!r}"
                    if unknown
                    else f"no column {missing[0]!r}"
                    if missing
                    else "a column twice"
                )
                raise ValueError(f"line {reader.line_num}: {what}; the columns are {FORM}")
            continue
        n = reader.line_num
        if len(row) != len(header):
            raise ValueError(f"line {n}: {len(row)} fields where the header names {len(header)}")
        cell = dict(zip(header, (c.strip() for c in row)))
        label = cell["run"]
        if not label or len(label) > 256 or not label.isprintable():
            raise ValueError(f"line {n}: a run label is 1-256 printable characters")
        size = size_of([cell["size"], cell["time_us"]], n, "size,time_us")
        t = value_of(cell["time_us"], n, "time_us")
        test = cell.get("test") or default_test
        if not TEST.fullmatch(test):
            raise ValueError(f"line {n}: test {test[:40]!r} is not LEVEL.NAME in lowercase")
        launch_text = cell.get("launch") or "1"
        if not (launch_text.isascii() and launch_text.isdigit() and 1 <= int(launch_text) <= MAX_LAUNCHES):
            raise ValueError(f"line {n}: launch {launch_text[:20]!r} is not a whole number from 1 to {MAX_LAUNCHES}")
        run = runs.setdefault(label, LongRun(label))
        started = cell.get("started_utc") or None
        if started is not None:
            if not UTC.fullmatch(started):
                raise ValueError(f"line {n}: started_utc {started[:30]!r} is not YYYY-MM-DDTHH:MM:SSZ")
            if run.started not in (None, started):
                raise ValueError(f"line {n}: run {label!r} started at {run.started} on an earlier line")
            run.started = started
        per = run.values.setdefault(test, {}).setdefault(size, {})
        if int(launch_text) in per:
            raise ValueError(f"line {n}: run {label!r}, {test} at {size} B, launch {launch_text} given twice")
        per[int(launch_text)] = t
    if not runs:
        raise ValueError("no rows")
    ordered = list(runs.values())
    if all(r.started for r in ordered):
        ordered.sort(key=lambda r: r.started)
    return ordered
