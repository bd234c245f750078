"""Strict JSON for every command that writes JSON: no NaN or Infinity (not JSON, and a reader
that follows RFC 8259 refuses them), null instead; dataclasses as objects; paths as text.  The
documents' shapes are in docs/json.md."""

from __future__ import annotations

import dataclasses
import json
import math
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
