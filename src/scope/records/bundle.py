"""A stored run as one document (`scope push`, `scope export --format bundle`): the run's own
columns and every record it keeps, declared once, so a bundle from anywhere is read as strictly
as a saved stream (`scope import`): each field's type, every number's range, every string's
length, no field this reader does not know.  The engine's records inside it (context, points,
events, pairs, test descriptors) are checked again against their own types (records.problem)
where store/bundle.py loads them."""

from __future__ import annotations

from typing import Annotated, Any, Literal, Union

from msgspec import Meta, Struct

from scope.records.values import Count, Ranks

FORMAT = "scope-run"
VERSION = 2  # 2: a point's per-rank windows beside its record; the stream of lines (store/bundle_stream.py)

# Text a bundle carries: bounded, so a hostile upload cannot hold a gigabyte in one label.
SHORT_CHARS = 256  # a label, a launcher, a statistic's name: what a bundle carries
Short = Annotated[str, Meta(max_length=SHORT_CHARS)]
Text = Annotated[str, Meta(max_length=65536)]
# ASCII digits only (\d takes any script's), to the very end of the text: `$` matches before a
# trailing newline, and `\Z` is Python's alone, so the end is "no character follows" in every
# dialect the published schema is read in (OpenAPI's is ECMA-262's)
END = r"(?![\s\S])"
Utc = Annotated[str, Meta(pattern=r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z" + END)]
Name = Annotated[str, Meta(pattern=r"^[^\x00-\x1f\x7f]{1,256}" + END)]  # a test's name: given, printable
Origin = Annotated[str, Meta(pattern=r"^[a-z][a-z0-9_-]{0,31}" + END)]  # scope, osu, imb, csv, events ...
Launch = Annotated[int, Meta(ge=1, le=10_000)]
# A column of numbers (samples, an imported benchmark's sizes, times, counts) travels as the store
# keeps it: a little-endian array of int64 or float64 (NaN: a missing value), base64 in the JSON.
# A million values are 8 MB of bytes, not 60 MB of Python numbers, and are checked with numpy
# (store/bundle.py); at most 2^24 values (a million rows fit 16 times).
Array = Annotated[bytes, Meta(max_length=8 << 24)]


class RunColumns(Struct, forbid_unknown_fields=True):
    """The run's own columns (the runs table's), less what is private to the machine that ran
    it: the process id, the host that ran the front end, scratch paths and the launch's stderr."""

    started_utc: Utc
    status: Literal["complete", "incomplete"]
    finished_utc: Union[Utc, None] = None
    reason: Union[Text, None] = None
    command: Annotated[list[Text], Meta(max_length=4096)] = []
    launcher: Union[Short, None] = None
    ranks: Union[Ranks, None] = None
    label: Union[Short, None] = None
    origin: Origin = "scope"
    source: Union[Text, None] = None
    launches: Union[Launch, None] = None


class PointRow(Struct, forbid_unknown_fields=True):
    """A point as the engine wrote it (launch k's own, or the run's combination: launch None),
    its samples beside it (float64, NaN where one was not finite), and (version 2) its per-rank
    windows as the store keeps them (store/windows.py), null in the record where they are."""

    record: dict[str, Any]
    launch: Union[Launch, None] = None
    samples: Union[Array, None] = None
    windows: Union[Array, None] = None


SamplesKept = Literal["kept", "left out"]  # left out: the user's choice (--no-samples), said wherever it goes


class EventRow(Struct, forbid_unknown_fields=True):
    record: dict[str, Any]


class PairsRow(Struct, forbid_unknown_fields=True):
    launch: Launch
    record: dict[str, Any]


class ImportedRow(Struct, forbid_unknown_fields=True):
    """A peer tool's benchmark by columns (the imported table's row)."""

    first_seq: Count
    test: Name
    measures: Short
    credit: Annotated[float, Meta(ge=0, le=1e6)]
    statistic: Short
    sizes: Array  # int64, bytes, ascending
    times: Array  # float64, us
    counts: Union[Array, None] = None  # int64
    extra: Union[dict[Short, Array], None] = None  # float64 each, NaN where the peer printed none


class Bundle(Struct, forbid_unknown_fields=True):
    format: Literal["scope-run"]
    version: Annotated[int, Meta(ge=1, le=VERSION)]
    scope: Short  # the front end that wrote it
    run: RunColumns
    context: Union[dict[str, Any], None] = None
    tests: Annotated[list[dict[str, Any]], Meta(max_length=4096)] = []
    points: Annotated[list[PointRow], Meta(max_length=1 << 22)] = []
    events: Annotated[list[EventRow], Meta(max_length=1 << 20)] = []
    pairs: Annotated[list[PairsRow], Meta(max_length=1 << 20)] = []
    imported: Annotated[list[ImportedRow], Meta(max_length=4096)] = []
    samples: SamplesKept = "kept"


# The stream (version 2, store/bundle_stream.py): gzip'd JSON lines, read one at a time, so a run
# of any size leaves its store and is read back in bounded memory.  The first line is a Head,
# then a line a row, tagged by `row`, and last an End that counts them (a cut stream is no run).
class Head(Struct, forbid_unknown_fields=True):
    format: Literal["scope-run"]
    version: Annotated[int, Meta(ge=2, le=VERSION)]
    layout: Literal["lines"]
    scope: Short
    run: RunColumns
    context: Union[dict[str, Any], None] = None
    tests: Annotated[list[dict[str, Any]], Meta(max_length=4096)] = []
    samples: SamplesKept = "kept"


class PointLine(PointRow, tag_field="row", tag="point"):
    pass


class EventLine(EventRow, tag_field="row", tag="event"):
    pass


class PairsLine(PairsRow, tag_field="row", tag="pairs"):
    pass


class ImportedLine(ImportedRow, tag_field="row", tag="imported"):
    pass


class End(Struct, forbid_unknown_fields=True, tag_field="row", tag="end"):
    points: Count
    events: Count
    pairs: Count
    imported: Count


Line = Union[PointLine, EventLine, PairsLine, ImportedLine, End]
