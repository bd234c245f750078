"""One step of a pairs-timed point as stored: the pairs one launch measured at once (or one
after another) in that step, a column per figure (records.md, `pairs`)."""

from __future__ import annotations

from array import array
from dataclasses import dataclass
from typing import Any


@dataclass
class PairStep:
    test: str
    params: dict[str, Any]  # the point's: size, mode
    launch: int
    step: int
    steps: int
    mode: str
    a: array  # 'q': ranks, a < b
    b: array
    n: array  # 'q': round trips timed
    median_us: array  # 'd': one-way time; NaN where the engine wrote null
    ci_lo_us: array
    ci_hi_us: array
    min_us: array

    @property
    def size(self) -> int:
        return int(self.params.get("size") or 0)
