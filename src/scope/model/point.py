"""A measured point as the store reads it, with what its record carries (window timing,
replication over launches, modes) decoded when first asked for; a point's bandwidth."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from scope.model.context import finite


@dataclass(frozen=True)
class WindowInfo:
    timing: str  # window | barrier | osu
    window_us: float | None
    repetitions: int
    invalid: int
    sync_error_ns: float | None
    arrival_skew_us: float | None  # medians
    exit_skew_us: float | None
    reason: str | None = None  # barrier timing: why (oversubscribed, or --timing barrier)
    # every rank's start and end of every kept repetition (us), or what reads them when first
    # asked for: the store keeps them apart from the record (store/windows.py), and only the
    # views that draw them or take a subset of ranks read them
    per_rank: tuple | Callable[[], tuple | None] = field(default=((), ()), repr=False, compare=False)

    @classmethod
    def of(cls, rec: dict, load: Callable[[], tuple | None] | None = None) -> WindowInfo | None:
        """From a point's record; `load`: what reads its per-rank arrays where the record holds
        them as null (store/windows.py)."""
        if "timing" not in rec:
            return None
        w, skew, pr = rec.get("window") or {}, rec.get("skew") or {}, rec.get("per_rank") or {}
        start, end = pr.get("start_us"), pr.get("end_us")
        return cls(
            rec["timing"],
            finite(w.get("window_us")),
            int(w.get("repetitions") or 0),
            int(w.get("invalid") or 0),
            finite(w.get("sync_error_ns")),
            finite((skew.get("arrival_us") or {}).get("median")),
            finite((skew.get("exit_us") or {}).get("median")),
            rec.get("timing_reason"),
            load if start is None and end is None and load is not None else (start or [], end or []),
        )

    def read_per_rank(self) -> tuple | None:
        """The starts and ends as the record has them (lists per rank), read each time asked:
        an export writes each point's once and keeps none."""
        return self.per_rank() if callable(self.per_rank) else self.per_rank

    @functools.cached_property
    def _arrays(self) -> tuple[tuple[tuple[float, ...], ...], tuple[tuple[float, ...], ...]]:
        start, end = self.read_per_rank() or ((), ())
        return tuple(tuple(r) for r in start), tuple(tuple(r) for r in end)

    @property
    def start_us(self) -> tuple[tuple[float, ...], ...]:  # per rank, per kept repetition
        return self._arrays[0]

    @property
    def end_us(self) -> tuple[tuple[float, ...], ...]:
        return self._arrays[1]


@dataclass(frozen=True)
class Mode:
    at: float  # location, in the point's unit
    share: float  # share of the samples around it


def relaxed_launches(precisions) -> list[bool]:
    """Which launches were measured to a looser target than the first, because their earlier
    launches already differed (engine/core/rep.c, rep_target); a launch with none is not."""
    first = float(precisions[0] or 0) if precisions else 0.0
    return [float(p or 0) > first * (1 + 1e-9) for p in precisions]


@dataclass(frozen=True)
class Replication:
    """How a point's launches agree (combine.combined_record, analysis/replicates.py)."""

    planned: int
    medians: tuple[float, ...]  # each launch's own median
    next_lo: float | None  # 95 % interval of a next launch's median (two launches or more)
    next_hi: float | None
    within_rel: float | None  # a launch's own CI half-width, relative (median over launches)
    spread_rel: float | None  # (largest - smallest launch median) / median
    spread_exceeds_within: bool
    precisions: tuple[float, ...] = ()  # each launch's precision target (later ones may be looser)

    @property
    def n(self) -> int:
        return len(self.medians)

    @property
    def relaxed(self) -> bool:
        """A later launch was measured to a looser target than the first (relaxed_launches)."""
        return any(relaxed_launches(self.precisions))

    @classmethod
    def of(cls, rec: dict) -> Replication | None:
        r = rec.get("launches")
        if not r:
            return None
        nxt = r.get("next") or [None, None]
        return cls(
            int(r.get("planned") or 1),
            tuple(float(m) for m in r.get("medians") or ()),
            finite(nxt[0]),
            finite(nxt[1]),
            finite(r.get("within_rel")),
            finite(r.get("spread_rel")),
            bool(r.get("spread_exceeds_within")),
            tuple(float(p) for p in r.get("precisions") or () if p is not None),
        )


def rate_MBps(nbytes: float | None, time_us: float | None) -> float | None:
    """Bandwidth: bytes per microsecond is MB/s (10^6 bytes/s); None without bytes or a
    positive time.  The one definition: the engine's bandwidth_MBps is the same quotient."""
    if not nbytes or not time_us or time_us <= 0:
        return None
    return nbytes / time_us


# The keys of a point's record that the views of a whole run read of every point (its window
# timing, replication over launches, what its budget gave up, its modes and page faults, what
# it measures, its overlap and its samples' tail): Point.part, kept as a column of its own
# (store/encode.py), each of a size that does not grow with ranks (per_rank does: its arrays
# are read from the record).
PART_KEYS = ("timing", "timing_reason", "window", "skew", "launches", "gave_up", "modes", "page_faults", "measures",
             "overlap", "tail")  # fmt: skip


# A point's statistics of its samples, in the order tables and exports give them (Point's fields).
POINT_STATS = (
    "min",
    "median",
    "mean",
    "sd",
    "max",
    "p5",
    "p25",
    "p75",
    "p95",
    "p99",
    "ci_lo",
    "ci_hi",
    "ci_rel",
)


# Slots where the language has them (3.10): a run may hold a million points, and a point's
# __dict__ would triple its size.
SLOTS = {"slots": True} if sys.version_info >= (3, 10) else {}


class PointReading:
    """What a point says beyond its fields, read the same way whether the point was measured
    (Point) or imported (model/imported.py): from its record, its replication and its numbers."""

    __slots__ = ()

    @property
    def part(self) -> dict:
        """The record's keys most views read (PART_KEYS); the whole record where the point
        has no cheaper reading of them."""
        return self.record

    @property
    def measures(self) -> str:
        return self.part.get("measures", "")

    @property
    def whole_record(self) -> dict:
        """The record as the engine wrote it (Point's may keep per-rank arrays apart)."""
        return self.record

    @property
    def extra(self) -> dict[str, float]:
        return dict(self.record.get("extra") or {})

    @property
    def launches(self) -> int:
        r = self.replication
        return r.n if r else 1

    @property
    def modes(self) -> list[Mode]:
        return [Mode(float(m["at"]), float(m["share"])) for m in self.part.get("modes") or ()]

    @property
    def reference_samples(self) -> list[float]:
        """A paired test's reference variant (e.g. t_pure of a non-blocking collective), timed
        in the same loop as the point's own samples."""
        return [float(x) for x in self.record.get("reference_samples") or ()]

    @property
    def gave_up(self) -> list[str]:
        """What the budget made this point give up (min_count, min_time, warmup)."""
        return list(self.part.get("gave_up") or ())

    @property
    def page_faults(self) -> int:
        """Page faults inside the measured chunks (the most of any rank; summed over launches)."""
        return int(self.part.get("page_faults") or 0)

    @property
    def procs(self) -> int:
        return int(self.params.get("procs") or 0)

    def bandwidth_at(self, time_us: float | None) -> float | None:
        """MB/s this point's bytes per operation make at a time (its median, a bound, a subset's)."""
        return rate_MBps(self.bytes_per_op, time_us)

    @property
    def bandwidth_interval(self) -> tuple[float | None, float | None]:
        """The median's 95 % CI as bandwidth (the longer time is the lower rate)."""
        return self.bandwidth_at(self.ci_hi or self.median), self.bandwidth_at(self.ci_lo or self.median)


@dataclass(**SLOTS)
class Point(PointReading):
    seq: int
    test: str
    params: dict[str, Any]  # without size
    size: int | None
    unit: str
    count: int | None
    batch: int | None
    ops_per_iter: float | None
    bytes_per_op: float | None
    min: float | None
    median: float | None
    mean: float | None
    sd: float | None
    max: float | None
    p5: float | None
    p25: float | None
    p75: float | None
    p95: float | None
    p99: float | None
    ci_lo: float | None
    ci_hi: float | None
    ci_rel: float | None
    bw_median: float | None
    warmup_iterations: int | None
    warmup_converged: bool | None
    stop: str | None
    seconds: float | None
    note: str | None
    # The engine's record (without samples) and the samples are decoded when first asked for:
    # most views of a large run need neither.
    # `record` is what the store keeps: a window-timed point's per-rank start and end times
    # are null in it, read by `window` (or whole in `whole_record`) through `load_windows`.
    load_record: Callable[[Point], dict] | None = None
    load_part: Callable[[], dict] | None = None  # the record's PART_KEYS alone (store/decode.py)
    load_samples: Callable[[], list[float]] | None = None
    load_windows: Callable[[], tuple | None] | None = None
    cache: dict | None = field(default=None, repr=False, compare=False)  # what was decoded so far

    def _cached(self, key: str, make: Callable[[], Any]) -> Any:
        cache = self.cache
        if cache is None:
            cache = self.cache = {}
        elif key in cache:
            return cache[key]
        got = cache[key] = make()
        return got

    @property
    def record(self) -> dict:
        if self.load_record is None:
            return {}
        if self.cache is not None and "record" in self.cache:
            return self.cache["record"]
        rec = self._cached("record", lambda: self.load_record(self))
        self.cache.pop("part", None)  # the whole record answers for it now: one copy held, not two
        return rec

    @property
    def part(self) -> dict:
        """The record's PART_KEYS, decoded alone, unless the whole record is at hand: a large
        run's warnings and tables read them of every point, and its `show` took half the time
        and half the memory once it read these instead of whole records (bench/views_cost.py)."""
        cache = self.cache
        if cache is not None:
            if "part" in cache:
                return cache["part"]
            if "record" in cache:
                return cache["record"]
        load, self.load_part = self.load_part, None  # asked once: what it holds (the column's text) let go
        if load is None:
            return self.record
        return self._cached("part", load)

    @property
    def imported(self) -> bool:
        """A measured point (an imported one is model/imported.py's ImportedPoint)."""
        return False

    @property
    def whole_record(self) -> dict:
        """The record as the engine wrote it, its per-rank arrays in it (an export's record)."""
        rec = self.record
        per = rec.get("per_rank")
        if self.load_windows is None or not isinstance(per, dict) or per.get("start_us") is not None:
            return rec
        w = self.window
        got = w.read_per_rank() if w is not None else None
        if not got:
            return rec
        return dict(rec, per_rank=dict(per, start_us=got[0], end_us=got[1]))

    @property
    def window(self) -> WindowInfo | None:
        return self._cached("window", lambda: WindowInfo.of(self.part, self.load_windows or self._inline_windows))

    def _inline_windows(self) -> tuple:
        """The per-rank arrays a record keeps inside it (none moved to the column), read from
        the whole record: the part has no per_rank."""
        per = self.record.get("per_rank") or {}
        return per.get("start_us") or [], per.get("end_us") or []

    @property
    def replication(self) -> Replication | None:
        return self._cached("replication", lambda: Replication.of(self.part))

    @property
    def samples(self) -> list[float]:
        if self.load_samples is None:
            return []
        return self._cached("samples", self.load_samples)
