"""Engine records into stored rows: the mirror of decode.py."""

from __future__ import annotations

import functools
import json
import sys
from array import array
from datetime import datetime, timezone

import msgspec
import numpy as np

from scope.model import PART_KEYS, POINT_STATS
from scope.store.windows import split

# The points table's columns a record fills, in the order point_row gives them.
POINT_COLUMNS = [
    "run_id",
    "seq",
    "test",
    "params",
    "size",
    "unit",
    "count",
    "batch",
    "ops_per_iter",
    "bytes_per_op",
    *POINT_STATS,
    "bw_median",
    "warmup_iterations",
    "warmup_s",
    "warmup_converged",
    "stop",
    "seconds",
    "note",
    "samples",
    "record",
    "launch",
    "windows",
    "part",
]
INSERT_POINT = f"INSERT INTO points ({', '.join(POINT_COLUMNS)}) VALUES ({', '.join('?' * len(POINT_COLUMNS))})"


def params_key(params: dict) -> str:
    """The parameters other than size, as stored: JSON with sorted keys (written once for each
    setting: a sweep's 10^5 points share a few)."""
    # each value's type in the key: True == 1 == 1.0 to a cache, not to JSON
    items = tuple(sorted((k, type(v).__name__, v) for k, v in params.items() if k != "size"))
    try:
        return _params_text(items)
    except TypeError:  # a value that cannot be a key of the cache (a list): written each time
        return json.dumps({k: v for k, _, v in items}, sort_keys=True)


@functools.lru_cache(maxsize=4096)
def _params_text(items: tuple) -> str:
    return json.dumps({k: v for k, _, v in items}, sort_keys=True)


def samples_blob(samples: list | None) -> bytes | None:
    """Samples as float64 little-endian (missing values as NaN)."""
    if samples is None:
        return None
    return typed_blob("d", [float("nan") if x is None else x for x in samples])


def typed_blob(code: str, values) -> bytes:
    """Values as a little-endian array of `code` ('q': int64, 'd': float64); decode.blob_array
    reads it back."""
    a = array(code, values)
    if sys.byteorder != "little":
        a.byteswap()
    return a.tobytes()


def imported_row(run_id: int, first_seq: int, test: str, col) -> list:
    """An imported benchmark (columns.Column) as one row of the `imported` table, its rows
    sorted by size (stable: a size given twice keeps the file's order)."""
    sizes = np.asarray(col.sizes, dtype=np.int64)
    order = np.argsort(sizes, kind="stable")  # a million rows: arrays, not a list of objects
    counts = None
    if col.counts is not None and len(col.counts) == len(order):
        counts = np.asarray(col.counts, dtype="<i8")[order].tobytes()
    return [
        run_id,
        first_seq,
        test,
        len(order),
        col.measures,
        float(col.credit),
        col.statistic,
        sizes[order].astype("<i8").tobytes(),
        np.asarray(col.times, dtype="<f8")[order].tobytes(),
        counts,
        json.dumps(
            {k: [_finite(v) for v in np.asarray(vals, dtype=float)[order].tolist()] for k, vals in col.extra.items()}
        )
        if getattr(col, "extra", None)
        else None,  # fmt: skip
    ]


def part_text(rec: dict) -> str | None:
    """The record's PART_KEYS as the `part` column keeps them (JSON), None for a record that
    has none of them."""
    part = {k: rec[k] for k in PART_KEYS if k in rec}
    return msgspec.json.encode(part).decode() if part else None


def _finite(v: float):
    return v if v == v and abs(v) != float("inf") else None


INSERT_IMPORTED = (
    "INSERT INTO imported (run_id, first_seq, test, n, measures, credit, statistic, sizes, times, counts, extra)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


def point_row(run_id: int, rec: dict, launch: int | None = None, text: bytes | None = None) -> list:
    """The values of POINT_COLUMNS for one `point` record; samples and per-rank windows go to
    their own columns (windows.py).
    `launch` is k for launch k's own measurement, None for the point the run reports; `text`:
    msgspec's text of `rec`, where the caller has it (kept as the record, nothing moved out)."""
    stats = rec.get("stats") or {}
    warm = rec.get("warmup") or {}
    kept, windows = split(rec if "samples" not in rec else {k: v for k, v in rec.items() if k != "samples"})
    params = rec.get("params") or {}
    return [
        run_id,
        rec.get("index"),
        rec["test"],
        params_key(params),
        params.get("size"),
        rec.get("unit", "us"),
        rec.get("count"),
        rec.get("batch"),
        rec.get("ops_per_iter"),
        rec.get("bytes_per_op"),
        *map(stats.get, POINT_STATS),
        (rec.get("bandwidth_MBps") or {}).get("median"),
        warm.get("iterations"),
        warm.get("seconds"),
        None if not warm else int(bool(warm.get("converged"))),
        rec.get("stop"),
        rec.get("seconds"),
        rec.get("note"),
        samples_blob(rec.get("samples")),
        (text if text is not None and kept is rec else msgspec.json.encode(kept)).decode(),
        launch,
        windows,
        part_text(kept),
    ]


INSERT_EVENT = "INSERT INTO events (run_id, type, kind, test, params, message, hint, record) VALUES (?,?,?,?,?,?,?,?)"


def event_row(run_id: int, rec: dict) -> tuple:
    """The events table's row of a skip, error or warning record."""
    params = rec.get("params")
    return (
        run_id,
        rec["type"],
        rec.get("kind"),
        rec.get("test"),
        json.dumps(params) if params else None,
        rec.get("message") or rec.get("reason"),
        rec.get("hint"),
        json.dumps(rec),
    )


def now_utc() -> str:
    """The time a row is written, UTC, to the second."""
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
