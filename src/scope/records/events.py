"""The records of an events file, written by the clock library (engine/clock/clock_events.c)
for each rank of a program that stamps its own events (issue 57): an `events` header with the
rank's clock, then one `event` a line.  Declared once here; docs/clock-library.md documents
exactly these fields (a test checks it).  Every field has a range: an events file is input
from anywhere, read as hostile."""

from __future__ import annotations

from typing import Annotated, Literal

from msgspec import Meta, Struct

from scope.records.values import LARGEST, Count, Finite, Ranks

EVENTS_SCHEMA = 1
NAME_CHARS = 64  # an event's name, as the report's legend can show it
# what the library refuses at the call (clock_events.c, name_ok): no control character (C0, DEL, C1)
Name = Annotated[str, Meta(min_length=1, max_length=NAME_CHARS, pattern="^[^\\x00-\\x1f\\x7f-\\x9f]+$")]
# a global time within 300 years of the clock's zero (ns): 1e308 was taken and printed 300-digit spans
Instant = Annotated[float, Meta(ge=-1e19, le=1e19)]
Text = Annotated[str, Meta(max_length=256)]
Positive = Annotated[float, Meta(gt=0, le=1e12)]


class EventsHeader(Struct, tag="events", tag_field="type"):
    schema: Annotated[int, Meta(ge=1, le=EVENTS_SCHEMA)]
    library: Text  # the library's version
    rank: Count
    size: Ranks
    host: Text
    timer: Literal["tsc", "clock_monotonic_raw", "mpi_wtime"]
    tick_ns: Positive  # the counter's calibrated tick
    method: Text  # the synchronisation method
    clock_domain: Literal["host", "rank"]
    clock_of: Count  # the rank whose counter and map this rank's clock is (its domain's leader)
    depth: Count  # edges from rank 0 along the synchronisation tree
    truth_known: bool  # every rank reads one counter: the true global time of each event is known
    injected_offset_ns: Finite  # a test's planted offset of this rank's clock (0 unless planted)
    injected_drift: Annotated[float, Meta(ge=-0.01, le=0.01)]  # and its planted drift, a fraction
    injected_base_ns: Finite
    sync_s: Annotated[float, Meta(ge=0, le=1e6)]  # the first synchronisation's wall time
    bound_z: Annotated[float, Meta(gt=0, le=100)]  # standard errors the statistical part of a bound spans

    def __post_init__(self):
        if self.rank >= self.size:
            raise ValueError(f"rank {self.rank} of {self.size} ranks")
        if self.clock_of >= self.size:
            raise ValueError(f"clock_of {self.clock_of} of {self.size} ranks")


class Event(Struct, tag="event", tag_field="type"):
    name: Name
    t_ns: Instant  # global time: rank 0's clock, ns
    bound_ns: Annotated[float, Meta(ge=0, le=1e15)]  # the bound on t_ns's error
    ticks: Annotated[int, Meta(ge=0, le=LARGEST)]  # the counter's value at the stamp
    sync: Count  # synchronisations before this event

    def __post_init__(self):
        if not self.name.isprintable():  # a newline or an escape would rewrite a terminal's lines
            raise ValueError("the name holds a control character")
