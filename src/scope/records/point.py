"""The `point` record: one point of a test, its statistics and what the timing method adds
(windows and per-rank times, kernel phases, a paired reference, the front end's combination of
launches)."""

from __future__ import annotations

from typing import Any, Union

import msgspec
from msgspec import Struct

from scope.records.values import Count, Finite, Num, Scalar


class Stats(Struct):
    min: Num = None
    median: Num = None
    mean: Num = None
    sd: Num = None
    max: Num = None
    p5: Num = None
    p25: Num = None
    p75: Num = None
    p95: Num = None
    p99: Num = None
    ci_lo: Num = None
    ci_hi: Num = None
    ci_rel: Num = None


class Bandwidth(Struct):
    median: Num = None
    ci_lo: Num = None
    ci_hi: Num = None
    max: Num = None


class Warmup(Struct):
    iterations: Count
    seconds: Num
    converged: bool


class Buffers(Struct):
    slots: Count
    send_bytes: Count
    recv_bytes: Count


class Window(Struct):
    window_us: Num
    repetitions: Count
    invalid: Count
    sync_error_ns: Num


class Quantiles(Struct):
    median: Num = None
    p95: Num = None
    max: Num = None


class Skew(Struct):
    exit_us: Quantiles
    arrival_us: Union[Quantiles, None] = None  # absent with barrier timing


class PerRank(Struct):
    own_us_median: list[Num]
    start_us: list[list[Num]]
    end_us: list[list[Num]]


class Phases(Struct):
    unit: str
    statistic: str
    repetitions: Count
    idle_measured: bool
    init: list[Num]
    comp: list[Num]
    comm: list[Num]
    idle: list[Num]
    steps: dict[str, list[Num]] = {}


class OpInContext(Struct):
    name: str
    test: str
    bytes: Num
    calls: Num
    comm_us: list[Num]
    idle_us: list[Num]


class Reference(Struct):
    count: Count
    median: Num
    ci_lo: Num = None  # the front end's combination of launches (run/combine.py) pools no interval
    ci_hi: Num = None


class OverlapFigure(Struct):
    """A paired point's overlap with its 95 % bootstrap interval (analysis/collectives.py,
    overlap_ci), worked out once where the launches are combined (run/combine.py)."""

    value: Finite
    ci_lo: Finite
    ci_hi: Finite


class TailFigure(Struct):
    """A window- or barrier-timed point's samples' tail (analysis/collectives.py, tail_of): the
    shares above 2x and 4x the minimum (null without samples) and the outliers past 10x the
    median, worked out once where the launches are combined (run/combine.py)."""

    above_2x_min: Num
    above_4x_min: Num
    outliers: Count


class PvarSample(Struct):
    name: str
    before: Num
    after: Num
    # MPI_T class: level, size, percentage, highwatermark, lowwatermark, counter, aggregate, timer
    class_: str = msgspec.field(name="class", default="")


class Point(Struct, tag="point", tag_field="type"):
    test: str
    index: Count
    points: Count
    params: dict[str, Scalar]
    measures: str
    unit: str
    count: Count
    batch: Count
    ops_per_iter: float
    bytes_per_op: float
    warmup: Warmup
    stop: str
    seconds: Num
    validated: Count
    buffers: Buffers
    stats: Stats
    bandwidth_MBps: Bandwidth
    precision: Num = None
    page_faults: Union[int, None] = None  # in the measured chunks, the most of any rank (absent before issue 52)
    earlier_launches: Union[int, None] = None
    gave_up: list[str] = []
    note: Union[str, None] = None
    extra: dict[str, Num] = {}
    mpi_t: list[PvarSample] = []  # performance variables that moved, summed over the point's ranks
    samples: Union[list[Num], None] = None  # absent with --no-samples
    # window- and barrier-timed points
    timing: Union[str, None] = None
    timing_reason: Union[str, None] = None
    window: Union[Window, None] = None
    skew: Union[Skew, None] = None
    per_rank: Union[PerRank, None] = None
    # kernel timing
    phases: Union[Phases, None] = None
    ops: list[OpInContext] = []
    # paired tests
    reference: Union[Reference, None] = None
    reference_samples: Union[list[Num], None] = None
    # the front end's, on a point combined from launches
    launches: Union[dict[str, Any], None] = None
    modes: Union[list[dict[str, Num]], None] = None
    # present (null: none to give) on a combined window- or barrier-timed point since issue 72;
    # absent on older records, whose views work it out from the samples
    overlap: Union[OverlapFigure, None, msgspec.UnsetType] = msgspec.UNSET
    tail: Union[TailFigure, msgspec.UnsetType] = msgspec.UNSET  # alike, since issue 72
