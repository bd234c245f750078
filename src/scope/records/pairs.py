"""The `pairs` record: one step of a pairs-timed test (p2p.allpairs), a column per figure and
an entry per pair measured in that step (engine/pairs.c)."""

from __future__ import annotations

from typing import Annotated, Literal, Union

from msgspec import Meta, Struct

from scope.records.values import Count, Num, Scalar

FIGURES = ("n", "median_us", "ci_lo_us", "ci_hi_us", "min_us")  # the columns beside a and b


class Pairs(Struct, tag="pairs", tag_field="type"):
    test: str
    index: Count
    points: Annotated[int, Meta(ge=1)]
    params: dict[str, Scalar]
    step: Count
    steps: Annotated[int, Meta(ge=1)]
    mode: Literal["parallel", "serial"]
    a: list[Count]  # the pinger, the lower rank of each pair
    b: list[Count]
    n: list[Annotated[int, Meta(ge=1, le=2**63 - 1)]]  # round trips timed (the engine times 10 at least)
    median_us: list[Num]  # one-way time (RTT / 2)
    ci_lo_us: list[Num]
    ci_hi_us: list[Num]
    min_us: list[Num]
    seconds: Num = None  # the step on rank 0's wall clock, its barrier and gather included
    slice_s: Num = None  # each pair's share of the budget
    launch: Union[int, None] = None  # added by the front end where it keeps a saved stream

    def __post_init__(self):
        # What engine/pairs.c always writes, checked where a record enters (issue 58: a
        # hand-edited stream with a self-pair, an inverted interval or a rank in two pairs of
        # one step was stored and screened): msgspec turns the ValueError into its
        # ValidationError, naming the record.
        why = pairs_problem(self)
        if why:
            raise ValueError(why)


def pairs_problem(p: Pairs) -> str | None:
    """Why one step's columns cannot be what the engine measured, or None."""
    if p.step >= p.steps:
        return f"step {p.step} of a sweep of {p.steps} steps (steps count from 0)"
    if p.index >= p.points:
        return f"point index {p.index} of {p.points} points"
    if p.params.get("mode", p.mode) != p.mode:
        return f"mode {p.mode!r} but the point's parameter mode is {p.params.get('mode')!r}"
    lengths = {k: len(getattr(p, k)) for k in ("a", "b", *FIGURES)}
    if len(set(lengths.values())) != 1:
        return "columns of unequal length (" + ", ".join(f"{k} {v}" for k, v in lengths.items()) + ")"
    seen: set[int] = set()
    for i, (a, b) in enumerate(zip(p.a, p.b)):
        if a >= b:
            return f"pair {i}: a {a} is not below b {b} (a pair is two ranks, the lower first)"
        if a in seen or b in seen:
            return f"pair {i}: rank {a if a in seen else b} is in two pairs of one step"
        seen.update((a, b))
        med, lo, hi, low = p.median_us[i], p.ci_lo_us[i], p.ci_hi_us[i], p.min_us[i]
        if any(v is not None and v < 0 for v in (med, lo, hi, low)):
            return f"pair {i}: a negative time"
        if med is not None and ((lo is not None and lo > med) or (hi is not None and hi < med)):
            return f"pair {i}: the median {med} us lies outside its interval [{lo}, {hi}]"
        if med is not None and low is not None and low > med:
            return f"pair {i}: the minimum {low} us is above the median {med} us"
    return None
