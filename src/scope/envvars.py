"""The environment variables SCOPE reads, each read one way and refused when it is neither
what it documents nor unset (issue 58: SCOPE_NO_CANARY=false turned the canary off,
SCOPE_TEST_LLC=text launched and lost the run's context).  An empty value is unset."""

from __future__ import annotations

import math
import os

from scope.errors import ScopeError

TRUE = ("1", "true", "yes", "on")
FALSE = ("0", "false", "no", "off")


def text(name: str) -> str:
    return os.environ.get(name, "").strip()


def flag(name: str) -> bool:
    """A yes/no variable, as people write one: 1/true/yes/on or 0/false/no/off, any case."""
    value = text(name)
    if not value:
        return False
    if value.lower() in TRUE:
        return True
    if value.lower() in FALSE:
        return False
    raise ScopeError(
        f"{name}={value!r} is neither yes nor no", "set it to 1 (or true, yes, on), 0 (or false, no, off), or unset it"
    )


def whole(name: str, low: int, high: int, what: str) -> int | None:
    """A whole number in [low, high] written in ASCII digits, or None when unset."""
    value = text(name)
    if not value:
        return None
    if not (value.isascii() and value.isdigit()) or not low <= int(value) <= high:
        raise ScopeError(f"{name}={value!r} is not {what} from {low} to {high}", f"set it in range, or unset {name}")
    return int(value)


def seconds(name: str, default: float, high: float) -> float:
    """A finite, non-negative number of seconds, at most `high`; `default` when unset."""
    value = text(name)
    if not value:
        return default
    try:
        s = float(value)
    except ValueError:
        s = math.nan
    if not (math.isfinite(s) and 0 <= s <= high):
        raise ScopeError(f"{name}={value!r} is not a number of seconds from 0 to {high:g}", f"e.g. {name}={default:g}")
    return s


# The engine's test hooks the front end passes on to a launch (engine/core/testhook.h and the
# tests that read them), with the range each must be in: a value out of range is refused before
# launch, never read as another number by strtoull.
ENGINE_HOOKS = {
    "SCOPE_TEST_LLC": (1, 1 << 40, "a cache size in bytes"),
    "SCOPE_TEST_MEM_AVAILABLE": (1, 1 << 50, "a memory size in bytes"),
    "SCOPE_TEST_FREE_BYTES": (0, 1 << 60, "a free space in bytes"),
}


def hook(name: str) -> int | None:
    """A test hook's value in its range (ENGINE_HOOKS), or None when unset."""
    low, high, what = ENGINE_HOOKS[name]
    return whole(name, low, high, what)


def check_engine_hooks() -> None:
    for name in ENGINE_HOOKS:
        hook(name)
