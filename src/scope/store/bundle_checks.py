"""The strict reading of a run bundle past its msgspec types (records/bundle.py): what
store/bundle.py checks before anything is stored, as it reads a saved stream.  Each check says
what is wrong in words, or None."""

from __future__ import annotations

import json
import math
from datetime import datetime, timedelta, timezone

import msgspec
import numpy as np

from scope.records import problem
from scope.records.bundle import Bundle, ImportedRow
from scope.store import windows
from scope.store.columns import MAX_SIZE, MAX_TIME_US, MIN_TIME_US

HINT = "push or export it again from its store ('scope export RUN --format bundle')"
EVENT_KINDS = ("skip", "error", "warning", "fault", "clock", "canary")  # what a run keeps as events (run/recorder.py)
DEPTH = 32  # nesting a record may have (the engine writes 4 at most)


def _deeper(obj, most: int) -> bool:
    """Whether obj nests past `most` levels (walked without recursion)."""
    todo = [(obj, 0)]
    while todo:
        o, d = todo.pop()
        if d > most:
            return True
        if isinstance(o, dict):
            todo += [(v, d + 1) for v in o.values() if isinstance(v, (dict, list))]
        elif isinstance(o, list):
            todo += [(v, d + 1) for v in o if isinstance(v, (dict, list))]
    return False


def record_problem(rec: dict, kinds: tuple[str, ...], where: str, nesting_checked: bool = False) -> str | None:
    """What is wrong with an engine record a bundle carries; `nesting_checked`: its text's
    nesting was counted already (a line of a stream, bundle_lines.shape)."""
    if rec.get("type") not in kinds:
        return f"{where}: a {rec.get('type')!r} record where {' or '.join(kinds)} belongs"
    if not nesting_checked and _deeper(rec, DEPTH):
        return f"{where}: nested past {DEPTH} levels"
    why = problem(rec)
    return f"{where}: {why}" if why else None


EARLIEST = datetime(1990, 1, 1, tzinfo=timezone.utc)  # before any run SCOPE could have made


def _when_problem(run) -> str | None:
    """A run's dates must be real, and not in the future (a run of 9999 would stay a cluster's
    latest for ever); a day of clock skew between a cluster and its hub is allowed."""
    latest = datetime.now(timezone.utc) + timedelta(days=1)
    for name in ("started_utc", "finished_utc"):
        text = getattr(run, name)
        if text is None:
            continue
        try:
            when = datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc)
        except ValueError:
            return f"its {name} {text!r} is no date"
        if not EARLIEST <= when <= latest:
            return f"its {name} {text} is not a time it could have run at"
    return None


def _nul_problem(*kept) -> str | None:
    """No NUL in the text a hub keeps in its columns (PostgreSQL's text cannot hold one, so the
    two databases would answer differently): the run's own columns, its context, its events."""
    todo: list = list(kept)
    while todo:
        o = todo.pop()
        if isinstance(o, str):
            if "\x00" in o:
                return "a text with a NUL character in it"
        elif isinstance(o, dict):
            todo += list(o.keys()) + list(o.values())
        elif isinstance(o, list):
            todo += o
    return None


def problem_of(b: Bundle) -> str | None:
    """What is wrong with a decoded bundle, in words, or None: its dates, its text, each record
    against its own type and nesting, the samples' and the imported columns' values."""
    why = head_problem(b.run, b.context, b.tests)
    for i, p in enumerate(b.points):
        why = why or point_problem(p, i)
    for i, e in enumerate(b.events):
        why = why or event_problem(e, i)
    for i, p in enumerate(b.pairs):
        why = why or record_problem(p.record, ("pairs",), f"pairs step {i + 1}")
    for i, row in enumerate(b.imported):
        why = why or imported_problem(row, i)
    return why


def head_problem(run, context: dict | None, tests: list) -> str | None:
    """What is wrong with a bundle's run, context or test descriptors, or None."""
    why = _when_problem(run) or _nul_problem(msgspec.structs.asdict(run), context)
    if why is None and context is not None:
        why = record_problem(context, ("context",), "its context")
    for i, t in enumerate(tests):
        why = why or record_problem(t, ("test",), f"test descriptor {i + 1}")
    return why


def event_problem(e, i: int, nesting_checked: bool = False) -> str | None:
    return _nul_problem(e.record) or record_problem(e.record, EVENT_KINDS, f"event {i + 1}", nesting_checked)


def point_problem(p, i: int, nesting_checked: bool = False) -> str | None:
    """What is wrong with point row i: its record, figures, samples and windows (store/windows.py:
    null arrays in the record where the row carries them, and only there)."""
    rec, where = p.record, f"point {i + 1}"
    if p.windows is not None:
        per = rec.get("per_rank")
        if not isinstance(per, dict) or any(per.get(k, 0) is not None for k in windows.KEYS):
            return f"{where}: its windows are carried beside its record and in it"
        if not windows.whole(p.windows):
            return f"{where}: its windows are not whole arrays"
        rec = dict(rec, per_rank=dict(per, start_us=[], end_us=[]))  # its type checked, the arrays by shape
    why = record_problem(rec, ("point",), where, nesting_checked)
    if why:
        return why
    why = _stats_problem(rec)
    if why:
        return f"{where}: {why}"
    if "samples" in rec:
        return f"{where}: its samples belong beside its record, not in it"
    why = _samples_problem(p.samples) if p.samples is not None else None
    return f"{where}: {why}" if why else None


def imported_problem(row: ImportedRow, i: int) -> str | None:
    why = _imported_problem(row)
    return f"imported benchmark {i + 1} ({row.test}): {why}" if why else None


NUMBERS = frozenset((int, float))


def _stats_problem(rec: dict) -> str | None:
    """A point's figures must hold together: finite, the median inside its own interval and
    its range, and a time (unit us) a measurement can be."""
    stats = rec.get("stats")
    if not isinstance(stats, dict):
        return None
    num = {k: v for k, v in stats.items() if type(v) in NUMBERS}  # a bool is no number here
    if not all(map(math.isfinite, num.values())):
        return "a statistic that is not finite"
    med = num.get("median")
    if med is None:
        return None
    slack = 1e-9 * abs(med)
    for lo, hi in (("ci_lo", "ci_hi"), ("min", "max")):
        if lo in num and hi in num and not num[lo] - slack <= med <= num[hi] + slack:
            return f"its median {med:g} lies outside its own {lo}..{hi} ({num[lo]:g}..{num[hi]:g})"
    if rec.get("unit") == "us" and not (med == 0 or MIN_TIME_US <= med < MAX_TIME_US):
        return f"its median {med:g} us is not a time a measurement can have"
    return None


def _array(blob: bytes, dtype: str, n: int | None = None):
    """A column's values (a view, no copy), or None when its bytes are no whole array of n."""
    if len(blob) % 8 or (n is not None and len(blob) != 8 * n):
        return None
    return np.frombuffer(blob, dtype=dtype)


def _imported_problem(row: ImportedRow) -> str | None:
    sizes = _array(row.sizes, "<i8")
    if sizes is None:
        return "its sizes are not a whole int64 array"
    n = len(sizes)
    times = _array(row.times, "<f8", n)
    counts = _array(row.counts, "<i8", n) if row.counts is not None else np.zeros(0, dtype="<i8")
    if times is None or counts is None:
        return f"its columns differ in length ({n} sizes)"
    if np.any(sizes < 0) or np.any(sizes > MAX_SIZE):
        return "a size that is not a whole number of bytes"
    if np.any(np.diff(sizes) < 0):
        return "sizes not in ascending order"
    if not np.all((times >= MIN_TIME_US) & (times < MAX_TIME_US)):  # NaN fails it too
        return "a time that is not a positive, finite measurement"
    if np.any(counts < 0):
        return "a negative count"
    for k, blob in (row.extra or {}).items():
        col = _array(blob, "<f8", n)
        if col is None or np.any(np.isinf(col)):
            return f"its column {k!r} is not {n} numbers"
    return None


def _samples_problem(blob: bytes) -> str | None:
    col = _array(blob, "<f8")
    if col is None:
        return "its samples are not a whole float64 array"
    if np.any(np.isinf(col)) or np.any(np.abs(col[np.isfinite(col)]) > 1.7e308):
        return "a sample that is infinite"
    return None


class _Repeated(Exception):
    pass


def _pairs(pairs: list) -> None:
    if len(pairs) > 1 and len({k for k, _ in pairs}) != len(pairs):
        seen: set[str] = set()
        raise _Repeated(next(k for k, _ in pairs if k in seen or seen.add(k)))


def repeated_key(text) -> str | None:
    """A key some object of the JSON names twice, or None.  JSON leaves such an object's meaning
    open and msgspec (as most parsers) keeps the last: `"ranks": 2, "ranks": 99` would be stored
    as 99 with nothing said.  The text was decoded whole already, so it parses here."""
    try:
        json.loads(bytes(text), object_pairs_hook=_pairs)
    except _Repeated as e:
        return str(e.args[0])
    return None
