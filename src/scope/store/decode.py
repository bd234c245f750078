"""Stored rows into the typed model (scope.model): the one place where stored JSON is decoded."""

from __future__ import annotations

import functools
import json
import math
import sqlite3
import sys
from array import array
from collections.abc import Callable

from scope.errors import ENVIRONMENT, ScopeError
from scope.model import Event, Point
from scope.store.schema import POINT_STATS

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


def point_of(
    p: sqlite3.Row,
    with_samples: bool,
    schema: int | None = None,
    pooled: Callable[[int, int], list[float]] | None = None,
) -> Point:
    """A stored point.  A point combined from launches keeps no samples of its own: `pooled`
    (run id, seq) reads its launches' samples."""
    text = p["record"]
    loader = (
        functools.partial(pooled, p["run_id"], p["seq"])
        if pooled is not None and keeps_no_samples(p)
        else functools.partial(blob_samples, p["samples"])
    )
    warm = p["warmup_converged"]
    return Point(
        seq=p["seq"],
        test=p["test"],
        params=json.loads(p["params"]),
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
        load_record=functools.partial(_record, text, schema),
        load_samples=loader if with_samples else None,
    )


def keeps_no_samples(p: sqlite3.Row) -> bool:
    """A point the run reports with no samples of its own: combined from launches, whose
    samples are its samples (an import has none anywhere)."""
    return "launch" in p.keys() and p["launch"] is None and p["samples"] is None


def _record(text: str | None, schema: int | None) -> dict:
    return upgrade(json.loads(text), schema) if text else {}


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
    """Stored samples (float64 little-endian, see encode.samples_blob) as a list."""
    if blob is None:
        return []
    a = array("d")
    a.frombytes(blob)
    if sys.byteorder != "little":
        a.byteswap()
    return a.tolist()
