"""The engine's records, declared once (docs/records.md is checked against these by a test).

Every line the engine writes is validated against its type where it enters the front end
(`run/stream.py`): a record whose fields do not have these types is not a record, and the run
says how many it dropped.  Numbers the engine writes as `null` (NaN, infinities) are `None`.
A reader must ignore fields it does not know, so unknown fields pass; the record is kept as
the engine wrote it.  The front end's additions to a context (testbed, io, pattern, module,
slurm) and to a combined point (launches, modes) are declared here too."""

from __future__ import annotations

from typing import Union

import msgspec

from scope.records.engine import Cvar, Option, Planned, Test, Timers, Version
from scope.records.pairs import Pairs
from scope.records.point import Point
from scope.records.run import Canary, Clock, Context, End, Error, Fault, Plan, Skip, Warning

Record = Union[
    Context,
    Plan,
    Planned,
    Warning,
    Point,
    Pairs,
    Clock,
    Canary,
    Fault,
    Skip,
    Error,
    End,
    Test,
    Option,
    Timers,
    Cvar,
    Version,
]
TYPES = {t.__struct_config__.tag: t for t in Record.__args__}


def problem(rec: dict) -> str | None:
    """Why a decoded record is not a record of its type (msgspec's words: the field and what
    it expected), or None when it is.  A type this front end does not know is not a problem:
    a newer engine may write one."""
    kind = rec.get("type")
    if kind not in TYPES:
        return None
    try:
        msgspec.convert(rec, TYPES[kind])
    except msgspec.ValidationError as e:
        return f"{kind} record: {e}"
    return None


def typed(rec: dict) -> Record:
    """The record as its type (raises msgspec.ValidationError when it is not one)."""
    return msgspec.convert(rec, Record)
