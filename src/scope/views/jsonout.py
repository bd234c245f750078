"""Strict JSON for every command that writes JSON: no NaN or Infinity (not JSON, and a reader
that follows RFC 8259 refuses them), null instead; dataclasses as objects; paths as text.  The
documents' shapes are in docs/json.md."""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Iterable, Iterator
from pathlib import Path


def strict(obj):
    """`obj` as plain JSON values, every non-finite number as None."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, (str, int, bool)) or obj is None:
        return obj
    if isinstance(obj, dict):
        return {str(k): strict(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple, set)):
        return [strict(v) for v in obj]
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return strict({f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)})
    if isinstance(obj, Path):
        return str(obj)
    if hasattr(obj, "item"):  # a numpy scalar
        return strict(obj.item())
    return str(obj)


def dumps(obj, indent: int | None = 1) -> str:
    return json.dumps(strict(obj), indent=indent, allow_nan=False)


# The long lists of a run's documents (a point a record): each element on a line of its own,
# compact, written as it is made.  `show --json` of a 10^6-point import built the whole document,
# then its text with a space for every level, then a copy of that text: 65 s and 7.3 GB
# (issue 52, bench/results/views_cost.md).
_COMPACT = json.JSONEncoder(allow_nan=False, separators=(",", ":"))


def stream(doc: dict, lists: tuple[str, ...] = ("points",)) -> Iterator[str]:
    """`doc` as strict JSON text in pieces: its keys one a line; a value under `lists` (any
    iterable, consumed once) an element a line; every other value as `dumps` writes it."""
    yield "{"
    for i, (key, value) in enumerate(doc.items()):
        yield ("," if i else "") + "\n " + json.dumps(str(key)) + ": "
        if key in lists and isinstance(value, Iterable) and not isinstance(value, (str, dict)):
            yield "["
            n = 0
            for n, item in enumerate(value, 1):
                yield ("," if n > 1 else "") + "\n  " + _compact(item)
            yield "\n ]" if n else "]"
        elif _lazy(value):
            yield from _pieces(value, " ")
        else:
            yield dumps(value).replace("\n", "\n ")
    yield "\n}"


_PLAIN = frozenset((str, int, float, bool, type(None), list, tuple, dict))


def _lazy(value) -> bool:
    """Whether a value holds an iterator to stream (a timeline's events: issue 69, 10^6 events
    written whole took 2.6 GB), itself or one level down in a dict.  A value of a plain type is
    passed by its type alone: the abstract Iterator check, asked of each of an event's nine
    values, was 40 % of exporting 10^6 events (issue 72)."""
    if type(value) not in _PLAIN and isinstance(value, Iterator):
        return True
    return isinstance(value, dict) and any(type(v) not in _PLAIN and isinstance(v, Iterator) for v in value.values())


def _pieces(value, pad: str) -> Iterator[str]:
    """A value whose iterators are consumed as they are written: an iterator an element a line
    (each element streamed the same way), a dict holding one key by key, the rest compact."""
    if isinstance(value, Iterator):
        yield "["
        n = 0
        for n, item in enumerate(value, 1):
            yield ("," if n > 1 else "") + "\n" + pad + " "
            yield from _pieces(item, pad + " ")
        yield "\n" + pad + "]" if n else "]"
    elif _lazy(value):
        yield "{"
        for i, (k, v) in enumerate(value.items()):
            yield ("," if i else "") + json.dumps(str(k)) + ":"
            yield from _pieces(v, pad)
        yield "}"
    else:
        yield _compact(value)


def _compact(item) -> str:
    """One element in compact strict JSON: as it is where it is plain JSON already (a stored
    record), through `strict` where it holds a non-finite number or a value JSON lacks."""
    try:
        return _COMPACT.encode(item)
    except (ValueError, TypeError):
        return _COMPACT.encode(strict(item))
