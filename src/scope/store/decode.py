"""Stored rows into the typed model (scope.model): the one place where stored JSON is decoded."""

from __future__ import annotations

import contextlib
import functools
import gc
import json
import math
import sqlite3
import sys
from array import array
from collections.abc import Callable
from typing import Any

import msgspec

from scope.errors import ENVIRONMENT, ScopeError
from scope.model import PART_KEYS, POINT_STATS, Event, Point
from scope.model.imported import ImportedPoint, imported_class
from scope.model.imported import imported_points as made_points

# The engine's record schema (docs/records.md) this code reads.  When it changes, append a
# function that takes a record of the previous schema to the next: stored runs keep their
# records as written and are read through these, so old and new runs load alike.
RECORD_UPGRADES: list[Callable[[dict], dict]] = []
RECORD_SCHEMA = 1 + len(RECORD_UPGRADES)


def upgrade(rec: dict, schema: int | None) -> dict:
    """A stored record of `schema` (None: written before schemas were stored, i.e. 1) as the
    current schema reads it."""
    schema = schema or 1
    if schema > RECORD_SCHEMA:
        raise ScopeError(
            f"a stored run has record schema {schema}, newer than this SCOPE reads ({RECORD_SCHEMA})",
            "upgrade SCOPE to read it",
            ENVIRONMENT,
        )
    for step in RECORD_UPGRADES[schema - 1 :]:
        rec = step(rec)
    return rec


def point_of(p: dict, schema: int | None, load_samples: Callable[[], list[float]] | None,
             load_text: Callable[[], str | None],
             load_windows: Callable[[], tuple | None] | None = None) -> Point:  # fmt: skip
    """A stored point (a row as a dict, read without its record, samples and windows); its
    record from `load_text` when first asked for, its samples, when wanted, from
    `load_samples`, its per-rank windows (store/windows.py) from `load_windows`."""
    warm = p["warmup_converged"]
    return Point(
        seq=p["seq"],
        test=p["test"],
        params=dict(_params(p["params"])),
        size=p["size"],
        unit=p["unit"],
        count=p["count"],
        batch=p["batch"],
        ops_per_iter=p["ops_per_iter"],
        bytes_per_op=p["bytes_per_op"],
        **{k: _finite(p[k]) for k in POINT_STATS},
        bw_median=_finite(p["bw_median"]),
        warmup_iterations=p["warmup_iterations"],
        warmup_converged=None if warm is None else bool(warm),
        stop=p["stop"],
        seconds=p["seconds"],
        note=p["note"],
        load_record=lambda _point: _record(load_text(), schema),
        load_part=_part_reader(p.get("part"), load_text, schema),
        load_samples=load_samples,
        load_windows=load_windows,
    )


@contextlib.contextmanager
def collector_paused():
    """Python's cycle collector off while a run's points are built, and what was built frozen
    out of its later sweeps: points form no cycles (reference counting frees them), and with
    the collector on each sweep rescans them all.  A million imported points took 10 s to build
    instead of 2.8 s, and the analysis after it as long again."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if was:
            gc.enable()


def imported_points(row: sqlite3.Row, origin: str) -> list[ImportedPoint]:
    """The points of one imported benchmark (a row of the `imported` table): one average per
    size, so median = mean = that value, and no samples (model/imported.py)."""
    sizes, times = blob_typed("q", row["sizes"]), blob_samples(row["times"])
    counts = blob_typed("q", row["counts"]) if row["counts"] is not None else None
    about = {"measures": row["measures"], "origin": origin, "statistic": row["statistic"], "first": row["first_seq"]}
    try:
        about["extra"] = json.loads(row["extra"]) if "extra" in row.keys() and row["extra"] else {}
    except ValueError:
        about["extra"] = {}  # a damaged column is left out; the points stand
    cls = imported_class(row["test"], row["credit"], about)
    return made_points(cls, row["first_seq"], sizes, times, counts)


def blob_typed(code: str, blob: bytes) -> array:
    """A little-endian array of `code` ('q': int64, 'd': float64; see encode.typed_blob), as an
    array (what numpy reads without a copy)."""
    a = array(code)
    a.frombytes(blob)
    if sys.byteorder != "little":
        a.byteswap()
    return a


def blob_array(code: str, blob: bytes) -> list:
    """blob_typed as a list."""
    return blob_typed(code, blob).tolist()


@functools.lru_cache(maxsize=1024)
def _params(text: str) -> tuple:
    """A stored parameter setting, decoded once however many points share it."""
    return tuple(json.loads(text).items())


def keeps_no_samples(p) -> bool:
    """A point the run reports with no samples of its own: combined from launches, whose
    samples are its samples (an import has none anywhere).  `p`: a row with its samples, or
    one read without them that says `no_samples`."""
    keys = p.keys()
    none = p["no_samples"] if "no_samples" in keys else p["samples"] is None
    return "launch" in keys and p["launch"] is None and bool(none)


def _json(text: str):
    """Stored JSON decoded by msgspec (a point's record of 8 KB with per-rank windows: 10^5 of
    them are what a large run's views wait on), or by the standard library where msgspec
    refuses what the store may hold from an older scope (NaN, a lone surrogate)."""
    try:
        return msgspec.json.decode(text)
    except msgspec.DecodeError:
        return json.loads(text)


def _record(text: str | None, schema: int | None) -> dict:
    """A point's stored record, read when a view first asks (most need only the columns); a
    damaged one reads as empty: the point keeps its columns, never crashes a view."""
    if not text:
        return {}
    try:
        rec = upgrade(_json(text), schema)
    except (ValueError, TypeError, KeyError):
        return {}
    return rec if isinstance(rec, dict) else {}


# A record's PART_KEYS as msgspec reads them, the rest skipped, not built; a key the record
# lacks stays UNSET (and out of the part: `"timing" in part` says what it says of the record).
_Part = msgspec.defstruct("_Part", [(k, Any, msgspec.UNSET) for k in PART_KEYS])
_PART = msgspec.json.Decoder(_Part)


def _part_reader(column: str | None, load_text: Callable[[], str | None], schema: int | None):
    """What reads a point's part: its column where the row has one (written since schema 15),
    else its record's text."""
    if column is None or (schema or 1) != RECORD_SCHEMA:
        return lambda: _part(load_text(), schema)
    return lambda: _part(column, schema)


def _part(text: str | None, schema: int | None) -> dict:
    """A point's stored record's PART_KEYS (Point.part); read from the whole record where an
    upgrade of its schema applies, or msgspec refuses the text (an older scope's NaN)."""
    if not text:
        return {}
    if (schema or 1) == RECORD_SCHEMA:
        with contextlib.suppress(msgspec.DecodeError):
            got = _PART.decode(text)
            return {k: v for k in PART_KEYS if (v := getattr(got, k)) is not msgspec.UNSET}
    rec = _record(text, schema)
    return {k: rec[k] for k in PART_KEYS if k in rec}


def event_of(e: sqlite3.Row, schema: int | None = None) -> Event:
    return Event(
        e["type"],
        e["kind"],
        e["test"],
        json.loads(e["params"]) if e["params"] else None,
        e["message"],
        e["hint"],
        upgrade(json.loads(e["record"]), schema) if e["record"] else {},
    )


def _finite(v):
    return v if v is None or math.isfinite(v) else None


def samples_of(row: sqlite3.Row) -> list[float]:
    return blob_samples(row["samples"])


def blob_samples(blob: bytes | None) -> list[float]:
    """Stored samples (float64 little-endian, see encode.samples_blob) as a list; a blob that is
    no whole number of them (a damaged row) has none."""
    return [] if blob is None or len(blob) % 8 else blob_array("d", blob)


def decoded(read: Callable[[], object], problems: list[str], what: str):
    """What `read` decodes from a stored row, or None when the row is damaged (its JSON cut, a
    type it cannot have): then `what` is added to `problems`, and the caller leaves it out."""
    try:
        return read()
    except (ValueError, TypeError, KeyError, AttributeError) as e:
        problems.append(f"{what} ({type(e).__name__}: {str(e)[:80]})")
        return None
