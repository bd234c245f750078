"""Strict JSON for every command that writes JSON: no NaN or Infinity (not JSON, and a reader
that follows RFC 8259 refuses them), null instead; dataclasses as objects; paths as text.  The
documents' shapes are in docs/json.md."""

from __future__ import annotations

import collections
import dataclasses
import json
import math
from collections.abc import Iterable, Iterator
from pathlib import Path

import msgspec
import numpy as np


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
    record), through `strict` where it holds a non-finite number or a value JSON lacks.  Text
    the standard library would write the same is written by msgspec (fast), the rest by it."""
    fast = _msgspec_text(item)
    if fast is not None:
        return fast
    try:
        return _COMPACT.encode(item)
    except (ValueError, TypeError):
        return _COMPACT.encode(strict(item))


# msgspec writes a record's floats 5x faster than the standard library (10^5 points of per-rank
# windows: 20 million of them), and the same text for every float Python's repr writes without
# an exponent (0, and 1e-4 <= |x| < 1e16).  The few others (msgspec writes 1e16 for 1e+16,
# 0.00001 for 1e-05) are written again as repr writes them, where each one's text occurs in the
# item's text exactly as often as it holds that number (so nothing else is touched).  An item
# holding a non-finite number, a value that is not plain JSON, or text that is not ASCII (the
# standard library escapes it) is written by the standard library, as before.
_FIXED_LO, _FIXED_HI = 1e-4, 1e16
_SCALARS = (str, int, bool, type(None))


def _msgspec_text(item) -> str | None:
    if type(item) is not dict:
        return None
    odd: list[float] = []
    if not _same_text(item, odd):
        return None
    text = msgspec.json.encode(item)
    if not text.isascii():
        return None
    if odd:
        fixes = []
        for x, n in collections.Counter(odd).items():
            tok = msgspec.json.encode(x)
            if text.count(tok) != n:
                return None
            fixes.append((tok, repr(x).encode()))
        for tok, rep in fixes:
            text = text.replace(tok, rep)
    return text.decode()


def _same_text(item, odd: list[float]) -> bool:
    """Whether msgspec writes `item` as the standard library does but for the floats it puts in
    `odd` (walked without recursion; a long list of numbers checked by numpy at once)."""
    todo = [item]
    while todo:
        o = todo.pop()
        if type(o) is dict:
            if any(type(k) is not str for k in o):
                return False
            vals = o.values()
        elif len(o) > 8 and type(o[0]) is float:
            a = np.asarray(o)
            if a.dtype != np.float64 or not bool(np.all(np.isfinite(a))):
                return False  # a mixed list: element by element would be slower than the stdlib
            m = np.abs(a)
            out = (m != 0) & ((m < _FIXED_LO) | (m >= _FIXED_HI))
            if out.any():
                odd += a[out].tolist()
            continue
        else:
            vals = o
        for v in vals:
            t = type(v)
            if t is float:
                if not (v == 0 or _FIXED_LO <= abs(v) < _FIXED_HI):
                    if not math.isfinite(v):
                        return False
                    odd.append(v)
            elif t is dict or t is list:
                todo.append(v)
            elif t not in _SCALARS or (t is int and abs(v) >= 1 << 63):
                return False
    return True
