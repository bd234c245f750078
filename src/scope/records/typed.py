"""Every engine record type in one union, and the two ways a decoded line is judged against it:
`problem` (why it is no record of its type) and `typed` (it as its type); scope.records
re-exports them."""

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
