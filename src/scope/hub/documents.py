"""The answer types of a cluster's series and alerts routes (hub/picking.py, hub/alerting.py):
what their JSON holds, which hub/openapi.py publishes with the rest of the API."""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal, Optional, Union

from msgspec import UNSET, Meta, Struct, UnsetType

CONTROL = "[\u0000-\u001f\u007f-\u009f]"  # what a note or an event's text may not hold (NUL: PostgreSQL refuses it)
NO_CONTROL = re.compile(CONTROL)
QUIET = r"([01][0-9]|2[0-3]):([0-5][0-9])-([01][0-9]|2[0-3]):([0-5][0-9])"  # HH:MM-HH:MM, UTC
AT = (r"^[12][0-9]{3}-[01][0-9]-[0-3][0-9]"  # a date, then perhaps a time, then perhaps its offset
      r"([T ][0-2][0-9]:[0-5][0-9](:[0-5][0-9](\.[0-9]{1,6})?)?)?(Z|[+-][0-2][0-9]:[0-5][0-9])?$")  # fmt: skip
Slowdown = Annotated[float, Meta(gt=0, lt=10, description="relative: 0.05 is 5 % slower")]


def plain(text, most: int) -> bool:
    """Text a database keeps and a page shows: a str of at most `most` characters, no control
    character (CONTROL) and no lone surrogate."""
    if not isinstance(text, str) or len(text) > most or NO_CONTROL.search(text):
        return False
    try:
        text.encode()
    except UnicodeEncodeError:
        return False
    return True


class SeriesRow(Struct):
    id: int
    kind: str  # measured | imported osu | imported imb | imported csv | simulated <platform digest>
    test: str
    params: dict[str, str]  # each parameter as written
    size: Optional[int]  # bytes; null: the test has no size
    ranks: Optional[int]
    unit: Optional[str]  # of median, lo and hi: us
    runs: int = 0  # how many runs measured it


class SeriesList(Struct):
    series: list[SeriesRow]


class SeriesPoint(Struct):
    id: int  # the run
    started_utc: str
    median: float
    lo: Optional[float]
    hi: Optional[float]
    launches: Optional[str]  # JSON: the median of each launch
    provenance: Optional[str]  # JSON: the run's provenance
    label: Optional[str]


class SeriesHistory(Struct):
    id: int
    cluster_id: int
    key: str
    kind: str
    test: str
    params: dict[str, str]
    size: Optional[int]
    ranks: Optional[int]
    unit: Optional[str]
    runs: list[SeriesPoint]  # in the order they started
    changes: list[dict[str, Any]] = []  # scope history's detector on this series: steps, alarms, ...


class Delivery(Struct):
    channel: str  # webhook | slack | email
    attempts: int
    delivered_utc: Optional[str]  # null: not yet (retried with back-off)
    last_error: Optional[str]


class Alert(Struct):
    id: int
    series_id: int
    run_id: int  # the first run after the change
    raised_by: int  # the pushed run that raised (or confirmed) it
    kind: str  # alarm (the newest run slower than its history allows) | step (confirmed by the next run)
    step: float  # relative: 0.25 is 25 % slower
    lo: Optional[float]
    hi: Optional[float]
    changed: dict[str, list[str]]  # provenance name -> [before, after]
    status: str  # open | acknowledged | expected | false
    note: Optional[str]
    created_utc: str
    updated_utc: str
    test: str
    params: dict[str, str]
    size: Optional[int]
    ranks: Optional[int]
    deliveries: list[Delivery] = []
    event: Optional[str] = None  # the announced event between its run and the one before
    event_utc: Optional[str] = None
    event_bound: Optional[float] = None  # the slowdown announced with it; past it the alert stays open


class Event(Struct):
    id: int
    at_utc: str
    text: str
    bound: Optional[float]  # the slowdown it may cost (0.3: 30 %); null: any
    created_utc: str


class EventList(Struct):
    events: list[Event]  # newest first


class Made(Struct):
    id: int  # the event's or the rule's id


class Triage(Struct):
    open: int
    acknowledged: int
    expected: int
    false: int
    precision: Optional[float]  # acknowledged / (acknowledged + false); null before any is judged


class Rule(Struct):
    id: int
    channel: str
    max_slowdown: float
    tests: Optional[list[str]]  # the test name prefixes it asks for; null: every test
    quiet: Optional[str]  # "HH:MM-HH:MM" UTC: its deliveries wait for the end
    triage: Triage  # the alerts this threshold and these tests take, as triage judged them


class AlertList(Struct):
    alerts: list[Alert]
    rules: list[Rule]  # where they go (the targets are never shown)
    triage: Triage


class Triaged(Struct):
    id: int
    status: str


class EventBody(Struct, forbid_unknown_fields=True):
    """An event announced (POST /api/clusters/NAME/events); a field left out takes its default
    (a null is refused: the schema has none)."""

    text: Annotated[str, Meta(min_length=1, max_length=200, pattern=f"^[^{CONTROL[1:-1]}]*$",
                              description="what happened, e.g. MPICH 4.2 -> 5.0")]  # fmt: skip
    at: Union[Annotated[str, Meta(pattern=AT, description="ISO 8601, UTC unless an offset is given")],
              UnsetType] = UNSET  # now  # fmt: skip
    bound: Union[Slowdown, UnsetType] = UNSET  # the slowdown it may cost; past it an alert stays open; left out: any


class RuleBody(Struct, forbid_unknown_fields=True):
    """An alert rule made (POST /api/clusters/NAME/rules): checked further as the CLI checks it."""

    channel: Literal["webhook", "slack", "email"]
    target: Annotated[str, Meta(max_length=2000, description="a URL or an address; a secret only as ${VAR}")]
    max_slowdown: Slowdown = 0.05
    tests: Annotated[list[Annotated[str, Meta(min_length=1, max_length=200)]], Meta(max_length=100)] = []
    quiet: Union[Annotated[str, Meta(pattern=f"^{QUIET}$", description="HH:MM-HH:MM UTC")], UnsetType] = UNSET
