"""A program's events (the clock library's events files, issue 57) as rows: one a rank, its
events as little-endian columns, read back in one query."""

from __future__ import annotations

import json

import msgspec

from scope.model import RankEvents
from scope.records.events import EventsHeader
from scope.store.decode import blob_typed
from scope.store.encode import typed_blob

INSERT_TIMELINE = (
    "INSERT INTO timeline (run_id, rank, header, names, name_of, t_ns, bound_ns, ticks) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
)


def timeline_row(run_id: int, r: RankEvents) -> tuple:
    return (
        run_id,
        r.rank,
        msgspec.json.encode(r.header).decode(),
        json.dumps(r.names),
        typed_blob("q", r.name_of),
        typed_blob("d", r.t_ns),
        typed_blob("d", r.bound_ns),
        typed_blob("q", r.ticks),
    )


def rank_events_of(row) -> RankEvents:
    """A stored row as the model's RankEvents (the one decoder of these rows): its header is
    checked against its declaration again, its columns against each other."""
    header = msgspec.json.decode(row["header"], type=EventsHeader)
    names = json.loads(row["names"])
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise ValueError("its names are not a list of strings")
    r = RankEvents(
        header=header,
        names=names,
        name_of=blob_typed("q", row["name_of"]),
        t_ns=blob_typed("d", row["t_ns"]),
        bound_ns=blob_typed("d", row["bound_ns"]),
        ticks=blob_typed("q", row["ticks"]),
    )
    if len({len(r.name_of), len(r.t_ns), len(r.bound_ns), len(r.ticks)}) != 1:
        raise ValueError("its columns differ in length")
    if r.name_of and not (0 <= min(r.name_of) and max(r.name_of) < len(names)):
        raise ValueError("an event names no name of the rank's")
    return r
