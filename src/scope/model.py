"""The typed model of a stored run: run, context, series, points and events.

The store builds it (`Store.load_run`), and it is the only place where stored record JSON is
decoded; analysis functions and views read these objects, never rows or JSON.  A field that
an older or imported run lacks is None (or empty), in one place, here."""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from scope.catalog.testinfo import TestInfo  # noqa: F401  (part of the model)


def _f(v) -> float | None:
    """A stored number, or None for missing and non-finite values."""
    if v is None:
        return None
    v = float(v)
    return v if math.isfinite(v) else None


@dataclass(frozen=True)
class Placement:
    rank: int
    host: str
    node: int
    cpu: int | None = None
    netns: str | None = None


@dataclass(frozen=True)
class Timer:
    selected: str | None
    overhead_ns: float | None
    resolution_ns: float | None


@dataclass
class Context:
    mpi_library: str
    engine_version: str | None
    mpicc: str | None
    ranks: int | None
    placement: list[Placement]
    oversubscribed: bool
    timer: Timer
    settings: dict[str, Any]
    env: dict[str, str]
    testbed: dict | None
    pattern: dict | None
    blas: str | None = None  # the BLAS node.dgemm multiplies with (the engine's build)
    module: dict | None = None  # the module the run was (modules.py): name, version, digest, ...
    io: dict | None = None  # the io tests' directory and its file system
    nodes: list = field(default_factory=list)  # each node as its own first rank described it
    slurm: dict | None = None  # the Slurm job the run was, when launched with srun

    @classmethod
    def of(cls, rec: dict) -> Context:
        t = rec.get("timer") or {}
        return cls(
            mpi_library=((rec.get("mpi") or {}).get("library") or "").strip(),
            engine_version=(rec.get("engine") or {}).get("version"),
            mpicc=(rec.get("engine") or {}).get("mpicc"),
            ranks=rec.get("ranks"),
            placement=[
                Placement(p["rank"], p.get("host", "?"), p.get("node", 0), p.get("cpu"), p.get("netns"))
                for p in rec.get("placement", [])
            ],
            oversubscribed=bool(rec.get("oversubscribed")),
            timer=Timer(t.get("selected"), _f(t.get("overhead_ns")), _f(t.get("resolution_ns"))),
            settings=dict(rec.get("settings") or {}),
            env=dict(rec.get("env") or {}),
            testbed=rec.get("testbed"),
            pattern=rec.get("pattern"),
            blas=(rec.get("engine") or {}).get("blas"),
            module=rec.get("module"),
            io=rec.get("io"),
            nodes=list(rec.get("nodes") or ()),
            slurm=rec.get("slurm"),
        )

    @property
    def hosts(self) -> list[str]:
        return sorted({p.host for p in self.placement})

    def rank(self, r: int) -> Placement | None:
        return next((p for p in self.placement if p.rank == r), None)


@dataclass(frozen=True)
class WindowInfo:
    timing: str  # window | barrier
    window_us: float | None
    repetitions: int
    invalid: int
    sync_error_ns: float | None
    arrival_skew_us: float | None  # medians
    exit_skew_us: float | None
    start_us: tuple[tuple[float, ...], ...]  # per rank, per kept repetition
    end_us: tuple[tuple[float, ...], ...]
    reason: str | None = None  # barrier timing: why (oversubscribed, or --timing barrier)

    @classmethod
    def of(cls, rec: dict) -> WindowInfo | None:
        if "timing" not in rec:
            return None
        w, skew, pr = rec.get("window") or {}, rec.get("skew") or {}, rec.get("per_rank") or {}
        return cls(
            rec["timing"],
            _f(w.get("window_us")),
            int(w.get("repetitions") or 0),
            int(w.get("invalid") or 0),
            _f(w.get("sync_error_ns")),
            _f((skew.get("arrival_us") or {}).get("median")),
            _f((skew.get("exit_us") or {}).get("median")),
            tuple(tuple(x for x in r) for r in pr.get("start_us", [])),
            tuple(tuple(x for x in r) for r in pr.get("end_us", [])),
            rec.get("timing_reason"),
        )


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
            _f(nxt[0]),
            _f(nxt[1]),
            _f(r.get("within_rel")),
            _f(r.get("spread_rel")),
            bool(r.get("spread_exceeds_within")),
            tuple(float(p) for p in r.get("precisions") or () if p is not None),
        )


def rate_MBps(nbytes: float | None, time_us: float | None) -> float | None:
    """Bandwidth: bytes per microsecond is MB/s (10^6 bytes/s); None without bytes or a
    positive time.  The one definition: the engine's bandwidth_MBps is the same quotient."""
    if not nbytes or not time_us or time_us <= 0:
        return None
    return nbytes / time_us


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


@dataclass(**SLOTS)
class Point:
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
    # most views of a large run need neither.  load_record is given the point (one loader can
    # serve a whole imported series).
    load_record: Callable[[Point], dict] | None = None
    load_samples: Callable[[], list[float]] | None = None
    cache: dict | None = field(default=None, repr=False, compare=False)  # what was decoded so far

    def _cached(self, key: str, make: Callable[[], Any]) -> Any:
        if self.cache is None:
            self.cache = {}
        if key not in self.cache:
            self.cache[key] = make()
        return self.cache[key]

    @property
    def record(self) -> dict:
        if self.load_record is None:
            return {}
        return self._cached("record", lambda: self.load_record(self))

    @property
    def measures(self) -> str:
        return self.record.get("measures", "")

    @property
    def extra(self) -> dict[str, float]:
        return dict(self.record.get("extra") or {})

    @property
    def window(self) -> WindowInfo | None:
        return self._cached("window", lambda: WindowInfo.of(self.record))

    @property
    def replication(self) -> Replication | None:
        return self._cached("replication", lambda: Replication.of(self.record))

    @property
    def launches(self) -> int:
        r = self.replication
        return r.n if r else 1

    @property
    def modes(self) -> list[Mode]:
        return [Mode(float(m["at"]), float(m["share"])) for m in self.record.get("modes") or ()]

    @property
    def reference_samples(self) -> list[float]:
        """A paired test's reference variant (e.g. t_pure of a non-blocking collective), timed
        in the same loop as the point's own samples."""
        return [float(x) for x in self.record.get("reference_samples") or ()]

    @property
    def gave_up(self) -> list[str]:
        """What the budget made this point give up (min_count, min_time, warmup)."""
        return list(self.record.get("gave_up") or ())

    @property
    def samples(self) -> list[float]:
        if self.load_samples is None:  # an imported point: one average, no samples
            return []
        return self._cached("samples", self.load_samples)

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


@dataclass(frozen=True)
class Event:
    type: str  # skip | error | warning | clock
    kind: str | None
    test: str | None
    params: dict | None
    message: str | None
    hint: str | None
    record: dict


@dataclass
class Series:
    """The points of one test and one parameter setting (size varies)."""

    test: str
    params: dict[str, Any]
    points: list[Point]
    info: TestInfo

    @property
    def sizes(self) -> list[int]:
        return [p.size or 0 for p in self.points]

    @property
    def medians(self) -> list[float | None]:
        return [p.median for p in self.points]


@dataclass
class Run:
    id: int
    started_utc: str
    finished_utc: str | None
    status: str
    reason: str | None
    command: list[str]
    launcher: str | None
    ranks: int | None
    label: str | None
    origin: str
    source: str | None
    stderr: str | None
    context: Context | None
    points: list[Point]
    events: list[Event]
    tests: dict[str, TestInfo]
    context_record: dict | None = None  # the engine's context record as stored, for exports
    launches: int | None = None  # launches asked for (None: before launches were replicates)
    unknown_tests: dict[str, TestInfo] = field(default_factory=dict, repr=False, compare=False)

    @property
    def imported(self) -> bool:
        return self.origin not in (None, "scope")

    def info(self, test: str) -> TestInfo:
        found = self.tests.get(test)
        if found is None:  # one stand-in per name: views ask per point, a million times
            found = self.unknown_tests.get(test) or self.unknown_tests.setdefault(test, TestInfo.unknown(test))
        return found

    def at_defaults(self, p: Point) -> bool:
        """Whether a point ran its test's default parameters (a reference figure must)."""
        return self.info(p.test).off_default(p.params) == 0

    def series(self) -> list[Series]:
        """Points grouped by (test, parameters other than size), in order of appearance."""
        out: dict[tuple, Series] = {}
        for p in self.points:
            key = (p.test, tuple(sorted(p.params.items(), key=lambda kv: kv[0])) if p.params else ())
            if key not in out:
                out[key] = Series(p.test, p.params, [], self.info(p.test))
            out[key].points.append(p)
        return list(out.values())

    def title(self) -> str:
        base = f"run {self.id}"
        if self.label:
            base += f" ({self.label})"
        if self.imported:
            base += f" [{self.origin.upper()}]"
        return base
