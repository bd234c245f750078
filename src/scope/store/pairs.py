"""The steps of pairs-timed points (p2p.allpairs): a row per launch and step, its pairs'
columns as little-endian arrays, so a 1,024-host sweep (523,776 pairs, 1,023 steps) is 1,023
rows of about 40 bytes a pair, read back in one query (bench/screen_scale.py)."""

from __future__ import annotations

import json

from scope.model import PairStep
from scope.store.decode import blob_typed
from scope.store.encode import samples_blob, typed_blob

COLUMNS = ("a", "b", "n", "median_us", "ci_lo_us", "ci_hi_us", "min_us")
INTS = {"a", "b", "n"}


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
        *(typed_blob("q", rec[c]) if c in INTS else samples_blob(rec[c]) for c in COLUMNS),
    )


def pair_step_of(row) -> PairStep:
    """A stored row as the model's PairStep (the one decoder of these rows)."""
    cols = {c: blob_typed("q" if c in INTS else "d", row[c]) for c in COLUMNS}
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
