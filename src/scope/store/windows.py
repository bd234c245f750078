"""A window-timed point's per-rank times (`per_rank.start_us`, `per_rank.end_us`: every rank's
start and end of every kept repetition) kept as a binary column beside the record, not inside
its JSON.  They are 80 % of such a record (6.4 KB of 8 KB at 2 ranks and 100 repetitions, and
they grow with both), and only a few views draw them: the rest read the record without them.

The column (`points.windows`), little-endian: int64 ranks R, int64 repetitions n, then per
array (starts, ends) an int64 type (0: float64, 1: int64) and its R x n values, row by rank.
The record keeps both keys, null, in their place, so joining the two gives back the record's
JSON byte for byte.  Only arrays that come back exactly are moved: rectangular, and every value
of an array a float, or every one an integer (a barrier-timed point's starts are all `0`, which
as a float would come back `0.0`); any other record keeps its arrays in the JSON, as before."""

from __future__ import annotations

import sqlite3
import struct

import msgspec
import numpy as np

KEYS = ("start_us", "end_us")
HEAD = np.dtype("<i8")
VALUES = np.dtype("<f8")


def split(rec: dict) -> tuple[dict, bytes | None]:
    """The record without its per-rank arrays (nulls in their place), and the arrays as the
    column keeps them; the record itself and None where they cannot be moved exactly."""
    per = rec.get("per_rank")
    if not isinstance(per, dict):
        return rec, None
    start, end = per.get("start_us"), per.get("end_us")
    shape, kind_start = _shape(start)
    if shape is None or shape == (0, 0) or _shape(end)[0] != shape:
        return rec, None
    kind_end = _shape(end)[1]
    blob = np.asarray(shape, dtype=HEAD).tobytes()
    for kind, rows in ((kind_start, start), (kind_end, end)):
        blob += np.asarray([kind], dtype=HEAD).tobytes() + np.asarray(rows, dtype=TYPES[kind]).tobytes()
    return dict(rec, per_rank=dict(per, start_us=None, end_us=None)), blob


TYPES = (VALUES, HEAD)  # by type code: 0 float64, 1 int64


def _shape(rows) -> tuple[tuple[int, int] | None, int]:
    """The arrays' shape and type code, or None where they would not come back exactly."""
    if not isinstance(rows, list) or not all(isinstance(r, list) for r in rows):
        return None, 0
    n = len(rows[0]) if rows else 0
    if any(len(r) != n for r in rows):
        return None, 0
    for kind, py in enumerate((float, int)):
        if all(type(x) is py for r in rows for x in r) and (
            py is float or all(abs(x) < 2**63 for r in rows for x in r)
        ):
            return (len(rows), n), kind
    return None, 0


def _layout(blob: bytes | None) -> tuple[int, int, int, int] | None:
    """A column's ranks, repetitions and its two arrays' type codes; None for a damaged one."""
    if blob is None or len(blob) < 16:
        return None
    ranks, n = LAYOUT.unpack_from(blob)  # struct, not numpy: a large run's import reads 10^5 of them
    if ranks < 0 or n < 0 or len(blob) != 16 + 2 * (8 + 8 * ranks * n):
        return None
    kinds = (KIND.unpack_from(blob, 16)[0], KIND.unpack_from(blob, 16 + 8 + 8 * ranks * n)[0])
    return (ranks, n, *kinds) if all(k in (0, 1) for k in kinds) else None


LAYOUT, KIND = struct.Struct("<qq"), struct.Struct("<q")


def whole(blob: bytes | None) -> bool:
    """Whether a column (from a bundle) is whole arrays, read without building them."""
    return _layout(blob) is not None


def arrays(blob: bytes | None) -> tuple[list[list[float]], list[list[float]]] | None:
    """The starts and ends a column holds, per rank; None for no column or a damaged one."""
    got = _layout(blob)
    if got is None:
        return None
    ranks, n, *kinds = got
    out = []
    for k, kind in enumerate(kinds):
        at = 16 + k * (8 + 8 * ranks * n) + 8
        out.append(np.frombuffer(blob, dtype=TYPES[kind], count=ranks * n, offset=at).reshape(ranks, n).tolist())
    return out[0], out[1]


def joined(rec: dict, blob: bytes | None) -> dict:
    """The record as the engine wrote it: its per-rank arrays back in their places."""
    got = arrays(blob)
    per = rec.get("per_rank")
    if got is None or not isinstance(per, dict):
        return rec
    return dict(rec, per_rank=dict(per, start_us=got[0], end_us=got[1]))


def migrate(db: sqlite3.Connection) -> None:
    """Schema step: the column, and every stored record's arrays moved into it (a batch of
    rows at a time, so a large store is not held in memory)."""
    db.execute("ALTER TABLE points ADD COLUMN windows BLOB")
    last = 0
    while True:
        rows = db.execute(
            "SELECT id, record FROM points WHERE id > ? AND record LIKE '%start_us%' ORDER BY id LIMIT 2000",
            (last,),
        ).fetchall()
        if not rows:
            return
        moved = []
        for pid, text in rows:
            try:
                rec = msgspec.json.decode(text)
            except msgspec.DecodeError:
                continue  # a record msgspec refuses (NaN from an older scope, a damaged row) stays whole
            small, blob = split(rec) if isinstance(rec, dict) else (rec, None)
            if blob is not None:
                moved.append((msgspec.json.encode(small).decode(), blob, pid))
        db.executemany("UPDATE points SET record = ?, windows = ? WHERE id = ?", moved)
        last = rows[-1][0]
