"""Sizes as people read them.  Size lists are parsed by the engine alone (engine/core/sizes.c,
tested with tests/data/sizes_vectors.txt); the front end asks its plan (plan.py)."""

from __future__ import annotations


def format_size(n: float) -> str:
    """Bytes in binary units: 512 B, 4 KiB, 1.5 MiB."""
    if n is None:
        return "-"
    n = int(n)
    for unit, mult in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= mult:
            v = n / mult
            if v == int(v):
                return f"{v:g} {unit}"
            return f"{v:.0f} {unit}" if v >= 100 else f"{v:.3g} {unit}"
    return f"{n} B"
