"""The `pairs` record: one step of a pairs-timed test (p2p.allpairs), a column per figure and
an entry per pair measured in that step (engine/pairs.c)."""

from __future__ import annotations

from typing import Union

from msgspec import Struct

from scope.records.values import Count, Num, Scalar


class Pairs(Struct, tag="pairs", tag_field="type"):
    test: str
    index: int
    points: Count
    params: dict[str, Scalar]
    step: Count
    steps: Count
    mode: str  # parallel | serial
    a: list[Count]  # the pinger, the lower rank of each pair
    b: list[Count]
    n: list[Count]  # round trips timed
    median_us: list[Num]  # one-way time (RTT / 2)
    ci_lo_us: list[Num]
    ci_hi_us: list[Num]
    min_us: list[Num]
    seconds: Num = None  # the step on rank 0's wall clock, its barrier and gather included
    slice_s: Num = None  # each pair's share of the budget
    launch: Union[int, None] = None  # added by the front end where it keeps a saved stream
