"""The steps of pairs-timed points (p2p.allpairs): a row per launch and step, its pairs'
columns as little-endian arrays, so a 1,024-host sweep (523,776 pairs, 1,023 steps) is 1,023
rows of about 40 bytes a pair, read back in one query (bench/screen_scale.py)."""

from __future__ import annotations

import json
import sys
from array import array

from scope.model import PairStep

COLUMNS = ("a", "b", "n", "median_us", "ci_lo_us", "ci_hi_us", "min_us")
INTS = {"a", "b", "n"}


def _blob(values: list, code: str) -> bytes:
    arr = array(code, (float("nan") if v is None else v for v in values) if code == "d" else values)
    if sys.byteorder != "little":
        arr.byteswap()
    return arr.tobytes()


def _array(blob: bytes, code: str) -> array:
    arr = array(code)
    arr.frombytes(blob)
    if sys.byteorder != "little":
        arr.byteswap()
    return arr


INSERT_PAIRS = (
    "INSERT INTO pairs (run_id, launch, seq, test, params, step, steps, mode, "
    + ", ".join(COLUMNS)
    + ") VALUES ("
    + ", ".join("?" * (8 + len(COLUMNS)))
    + ")"
)


def pairs_row(run_id: int, rec: dict, launch: int) -> tuple:
    """The row of one `pairs` record (checked against records/pairs.py before it comes here)."""
    return (
        run_id,
        launch,
        rec["index"],
        rec["test"],
        json.dumps(rec.get("params") or {}, sort_keys=True),
        rec["step"],
        rec["steps"],
        rec["mode"],
        *(_blob(rec[c], "q" if c in INTS else "d") for c in COLUMNS),
    )


def pair_step_of(row) -> PairStep:
    """A stored row as the model's PairStep (the one decoder of these rows)."""
    cols = {c: _array(row[c], "q" if c in INTS else "d") for c in COLUMNS}
    if len({len(v) for v in cols.values()}) != 1:
        raise ValueError("its columns differ in length")
    return PairStep(
        test=row["test"],
        params=json.loads(row["params"]),
        launch=row["launch"],
        step=row["step"],
        steps=row["steps"],
        mode=row["mode"],
        **cols,
    )
