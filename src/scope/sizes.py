"""Message-size lists; the same grammar as the engine (engine/core/sizes.h), checked against
the shared vectors in tests/data/sizes_vectors.txt."""

from __future__ import annotations

import re

from scope.errors import ScopeError

MAX_BYTES = 1 << 30
MAX_COUNT = 4096
_UNITS = {
    "": 1,
    "b": 1,
    "k": 1 << 10,
    "ki": 1 << 10,
    "kib": 1 << 10,
    "m": 1 << 20,
    "mi": 1 << 20,
    "mib": 1 << 20,
    "g": 1 << 30,
    "gi": 1 << 30,
    "gib": 1 << 30,
}
_SIZE = re.compile(r"^(\d+)([A-Za-z]*)$")


def parse_size(text: str) -> int:
    s = text.strip()
    if not s:
        raise ValueError("empty size")
    if s.startswith("-"):
        raise ValueError(f"negative size '{s}'")
    m = _SIZE.match(s)
    if not m:
        raise ValueError(f"'{s}' is not a size (expected e.g. 64, 8K, 4MiB)")
    digits, unit = m.groups()
    u = unit.lower()
    if u in ("kb", "mb", "gb"):
        raise ValueError(f"'{s}' is ambiguous: write {digits}{unit[0].upper()} (2^10 multiples) or the byte count")
    if u not in _UNITS:
        raise ValueError(f"unknown unit in '{s}' (use K, M or G)")
    v = int(digits) * _UNITS[u]
    if v > MAX_BYTES:
        raise ValueError(f"size '{s}' is larger than 1 GiB")
    return v


def parse_sizes(spec: str) -> list[int]:
    """Parse a size list; raises ScopeError naming the bad part."""
    try:
        return _parse(spec)
    except ValueError as e:
        raise ScopeError(f"bad --sizes '{spec}': {e}", "e.g. --sizes 0-4M or 8,64,1K or 1K-1M:x4") from None


def _parse(spec: str) -> list[int]:
    if not spec:
        raise ValueError("empty size list")
    out: list[int] = []
    for item in spec.split(","):
        body = item.strip()
        dash = body.find("-", 1) if body else -1
        if dash < 0:
            out.append(parse_size(item))
        else:
            rng, _, step = body.partition(":")
            lo_s, _, hi_s = rng.partition("-")
            lo, hi = parse_size(lo_s), parse_size(hi_s)
            if lo > hi:
                raise ValueError(f"range '{body}' runs backwards")
            if step:
                if step[0] in "xX*":
                    try:
                        factor = float(step[1:])
                    except ValueError:
                        factor = 0.0
                    if not factor > 1.0:
                        raise ValueError(f"step '{step}' needs a factor above 1, e.g. x4")
                    out.extend(_geometric(lo, hi, factor, MAX_COUNT - len(out)))
                elif step[0] == "+":
                    inc = parse_size(step[1:])
                    if inc == 0:
                        raise ValueError("step '+0' never advances")
                    if (hi - lo) // inc + 1 > MAX_COUNT - len(out):  # counted before it is built
                        raise ValueError(f"more than {MAX_COUNT} sizes")
                    out.extend(range(lo, hi + 1, inc))
                else:
                    raise ValueError(f"step '{step}' must be xFACTOR or +SIZE")
            else:
                out.extend(_geometric(lo, hi, 2.0, MAX_COUNT - len(out)))
        if len(out) > MAX_COUNT:
            raise ValueError(f"more than {MAX_COUNT} sizes")
    return sorted(set(out))


def _geometric(lo: int, hi: int, factor: float, limit: int) -> list[int]:
    out = []
    v = lo
    if v == 0:
        out.append(0)
        v = 1
    while v <= hi:
        if len(out) >= limit:
            raise ValueError(f"more than {MAX_COUNT} sizes")
        out.append(v)
        nxt = int(v * factor)
        v = nxt if nxt > v else v + 1
    return out


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
