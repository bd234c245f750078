"""A program's own events on the global clock, as the clock library wrote them (issue 57):
one rank's events as columns, beside the header that says how its clock was read."""

from __future__ import annotations

from array import array
from dataclasses import dataclass

from scope.records.events import EventsHeader


@dataclass
class RankEvents:
    """One rank's events in the order it stamped them."""

    header: EventsHeader
    names: list[str]  # the distinct names, in first-stamped order
    name_of: array  # 'q': each event's index into names
    t_ns: array  # 'd': global time (rank 0's clock), ns
    bound_ns: array  # 'd': the bound on each t_ns's error
    ticks: array  # 'q': the counter's value at each stamp (the truth is computed from it)

    @property
    def rank(self) -> int:
        return self.header.rank

    def __len__(self) -> int:
        return len(self.t_ns)
