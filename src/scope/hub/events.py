"""Known events (issue 71): what a site announces of its cluster (maintenance, an MPI upgrade, a
switch swapped), when, and the slowdown it may cause.  They are drawn on the cluster's history
charts, named in what changed between two runs, and an alert raised across one is filed as
expected unless its step passes the event's bound (hub/alerts.py)."""

from __future__ import annotations

from datetime import datetime, timezone

from sqlalchemy import select, update

from scope.errors import USAGE, ScopeError
from scope.hub.db import now_utc
from scope.hub.documents import plain
from scope.hub.tables import as_dict, events

TEXT_MOST = 200  # characters: a line, as a chart's label and a message's clause


def check_text(said) -> str:
    if not plain(said, TEXT_MOST) or not said.strip():
        raise ScopeError(
            "an event is one line of 1-200 characters of text, no control character",
            'e.g. "MPICH 4.2 -> 5.0" or "switch leaf-3 replaced"',
            USAGE,
        )
    return said.strip()


def at_of(said: str | None) -> str:
    """An event's time as the hub keeps times ("2026-12-05T03:00:00Z"): ISO 8601, UTC unless it
    names its offset; None: now."""
    if said is None:
        return now_utc()
    try:
        t = datetime.fromisoformat(str(said).strip())
    except (TypeError, ValueError):
        t = None
    if t is None or not 1990 <= t.year <= 2999:
        raise ScopeError(f"{str(said)[:40]!r} is not a time", "ISO 8601, UTC unless an offset is given: "
                         "--at 2026-12-05T03:00 (or 2026-12-05T04:00+01:00)", USAGE)  # fmt: skip
    if t.tzinfo is not None:
        t = t.astimezone(timezone.utc)
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def check_bound(bound) -> float | None:
    if bound is None:
        return None
    if isinstance(bound, bool) or not isinstance(bound, (int, float)) or not 0 < bound < 10:
        raise ScopeError(f"bound {bound!r} is not a slowdown", "a fraction above 0: 0.3 allows 30 % slower", USAGE)
    return float(bound)


def add_event(conn, cluster_id: int, at_utc: str, said: str, bound: float | None, now: str) -> int:
    row = {"cluster_id": cluster_id, "at_utc": at_utc, "text": said, "bound": bound, "created_utc": now}
    return int(conn.execute(events.insert().values(**row)).inserted_primary_key[0])


def remove_event(conn, cluster_id: int, event_id: int, now: str) -> bool:
    q = update(events).where(events.c.id == event_id, events.c.cluster_id == cluster_id, events.c.removed_utc.is_(None))
    return conn.execute(q.values(removed_utc=now)).rowcount == 1


def listed(conn, cluster_id: int | None = None, most: int = 500) -> list[dict]:
    """A cluster's live events (every cluster's: None), newest first."""
    q = select(events.c.id, events.c.cluster_id, events.c.at_utc, events.c.text, events.c.bound, events.c.created_utc)
    q = q.where(events.c.removed_utc.is_(None))
    if cluster_id is not None:
        q = q.where(events.c.cluster_id == cluster_id)
    return [as_dict(r) for r in conn.execute(q.order_by(events.c.at_utc.desc(), events.c.id.desc()).limit(most))]


def between(known: list[dict], after_utc: str | None, until_utc: str) -> list[dict]:
    """The events announced in (after, until]: those a change between a run started at `after`
    and the next, started at `until`, may be explained by (oldest first)."""
    return sorted((e for e in known if (after_utc is None or e["at_utc"] > after_utc) and e["at_utc"] <= until_utc),
                  key=lambda e: e["at_utc"])  # fmt: skip


def excuses(event: dict, step: float) -> bool:
    """Whether an announced event files a step as expected: within its bound (any, without one)."""
    return event["bound"] is None or step <= event["bound"]
