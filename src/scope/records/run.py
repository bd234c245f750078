"""The records of a run's stream but its points (records/point.py): context, plan, warning, clock,
canary, fault, skip, error, end."""

from __future__ import annotations

from typing import Any, Union

from msgspec import Struct

from scope.records.values import Count, Num, Ranks, Scalar


class Engine(Struct):
    version: str
    compiler: str
    mpicc: str
    blas: Union[str, None] = None
    source: Union[str, None] = None  # the front end's: 12 hex digits of the engine source's digest


class Transport(Struct):
    libraries: list[str] = []  # transport libraries mapped in rank 0 after MPI_Init
    cvars: dict[str, Any] = {}  # protocol thresholds and selections, read through MPI_T
    pvars: int = 0  # performance variables sampled around each point


class Mpi(Struct):
    library: str
    standard: str
    thread_level: Union[str, None] = None  # the level MPI_Init_thread provided (--thread-level)
    transport: Union[Transport, None] = None


class Placement(Struct):
    rank: int
    host: str
    node: int
    cpu: int
    cores: int
    cpus_allowed: int
    netns: Union[str, None] = None


class Caches(Struct):
    l1d: Union[int, None] = None
    l2: Union[int, None] = None
    l3: Union[int, None] = None


class Nic(Struct):
    name: str
    speed_mbps: Union[int, None] = None
    mtu: Union[int, None] = None


class Node(Struct):
    node: int
    host: str
    cpu_model: str
    cores: int
    memory_bytes: Union[int, None]
    cache_bytes: Caches
    kernel: str
    nics: list[Nic]


class Timer(Struct):
    name: str
    available: bool
    tick_ns: Num = None
    resolution_ns: Num = None
    overhead_ns: Num = None
    reported_tick_ns: Num = None
    why_unavailable: Union[str, None] = None


class TimerChoice(Struct):
    selected: str
    tick_ns: Num
    overhead_ns: Num
    resolution_ns: Num
    all: list[Timer]


class Context(Struct, tag="context", tag_field="type"):
    schema: int
    started_utc: str
    engine: Engine
    mpi: Mpi
    ranks: Ranks
    placement: list[Placement]
    nodes: list[Node]
    oversubscribed: bool
    progress_throttle: Union[str, None]
    timer: TimerChoice
    seed: int
    llc_bytes: Count
    settings: dict[str, Any]
    argv: list[str]
    env: dict[str, str]
    # added by the front end when stored
    testbed: Union[dict[str, Any], None] = None
    io: Union[dict[str, Any], None] = None
    pattern: Union[dict[str, Any], None] = None
    module: Union[dict[str, Any], None] = None
    slurm: Union[dict[str, Any], None] = None
    request: Union[dict[str, Any], None] = None
    toolchain: Union[dict[str, Any], None] = None
    sim: Union[dict[str, Any], None] = None  # a simulated run: SimGrid, the platform and its digest

    def __post_init__(self):
        # the engine writes one placement a rank, in rank order (engine/records.c); a stream
        # edited to 20,000 ranks with 3 placements was stored and screened (issue 58)
        if len(self.placement) != self.ranks:
            raise ValueError(f"{self.ranks} ranks but {len(self.placement)} placements (one a rank)")
        for i, pl in enumerate(self.placement):
            if pl.rank != i:
                raise ValueError(f"placement {i} is of rank {pl.rank} (one a rank, in rank order)")
            if not 0 <= pl.node <= i:
                raise ValueError(f"rank {i}'s node {pl.node} is not the world rank of a node's first rank")


class PlanEntry(Struct):
    test: str
    points: Count


class Plan(Struct, tag="plan", tag_field="type"):
    points: Count
    tests: list[PlanEntry] = []  # a run's plan
    budget_s: Num = None
    ranks: Union[int, None] = None  # --plan N
    options: dict[str, Any] = {}


class Warning(Struct, tag="warning", tag_field="type"):  # noqa: A001 - the record's own name
    kind: str
    message: str
    hint: str


class ClockRank(Struct):
    rank: int
    offset_ns: Num
    drift_ppm: Num
    predicted_error_ns: Num  # a bound since clock domains; a standard error before
    fit_residual_ns: Num = None  # records before clock domains
    clock_of: Union[int, None] = None  # the rank whose counter and map this one reads
    parent: Union[int, None] = None  # the leader this one was synchronised against
    depth: Union[int, None] = None  # edges to rank 0, along which the bounds add
    true_offset_ns: Num = None
    true_drift_ppm: Num = None
    error_ns: Num = None


class ClockDomain(Struct):
    leader: int
    count: Count
    ranks: str  # "0-3,8"
    shared: str  # why these ranks share one clock, or why this one is alone


class Clock(Struct, tag="clock", tag_field="type"):
    method: str
    reference_rank: int
    one_host: bool
    ranks: list[ClockRank]
    max_predicted_error_ns: Num
    max_error_ns: Num = None
    at: str = "sync"  # sync | end (the maps as they held after the last point)
    sync: Union[int, None] = None  # synchronisations so far
    method_describes: str = ""
    clock_domain: str = "host"  # host | rank (--clock-domain)
    truth: Union[str, None] = None  # how the true offsets are known, where they are
    rounds: Union[int, None] = None
    exchanges: Union[int, None] = None
    sync_s: Num = None  # wall seconds of the last synchronisation
    bound_z: Num = None
    domains: list[ClockDomain] = []
    within_bound: Union[int, None] = None  # ranks whose true error is within the bound


class Canary(Struct, tag="canary", tag_field="type"):
    at: str  # start | end of the launch
    repetitions: Count
    compute_us: Num
    copy_bytes: int
    copy_us: Num
    c2c_us: Num = None  # where ranks 0 and 1 share a node and have a core each
    steal_pct: Num = None  # end only, where /proc/stat tells
    per_rank: Union[dict[str, list[Num]], None] = None  # across nodes: compute_us and copy_us of every rank


class Fault(Struct, tag="fault", tag_field="type"):
    test: str
    kind: str  # no_space | quota | io
    message: str
    path: str = ""


class Skip(Struct, tag="skip", tag_field="type"):
    test: str
    reason: str
    index: Union[int, None] = None
    points: Union[int, None] = None
    params: Union[dict[str, Scalar], None] = None


class Error(Struct, tag="error", tag_field="type"):
    test: str
    message: str
    index: Union[int, None] = None
    points: Union[int, None] = None
    params: Union[dict[str, Scalar], None] = None


class End(Struct, tag="end", tag_field="type"):
    status: str
    points: Count
    errors: int
    skips: int
    seconds: Num
