"""What the one-sided level derives from its points.

- Library overhead (the fifth source document, Global Arrays over SCI): a get is a round trip,
  so what the one-sided layer costs beyond message passing is get latency minus the MPI
  ping-pong round trip (2 x the one-way median) at the same size.  Both at the setting
  nearest their tests' defaults; the ping-pong comes from the same run, or else from the latest complete
  run on the same MPI library and hosts (the caller finds it: `reference`).
- Asynchronous progress: rma.get with target=busy against target=idle at the same setting.  A
  ratio near 1 says the get was served while the target computed (asynchronous progress, or
  memory the origin reads directly); a ratio near slice / idle says it waited for the target's
  next MPI call."""

from __future__ import annotations

from dataclasses import dataclass

from scope.catalog.names import PINGPONG, RMA_GET
from scope.model import Point, Run

GET = RMA_GET


@dataclass(frozen=True)
class Overhead:
    size: int
    get_us: float
    rtt_us: float  # 2 x the ping-pong's one-way median
    pingpong_run: int

    @property
    def overhead_us(self) -> float:
        return self.get_us - self.rtt_us


@dataclass(frozen=True)
class Progress:
    setting: dict  # the get's parameters other than target and size
    size: int
    idle_us: float
    busy_us: float
    slice_us: float | None

    @property
    def ratio(self) -> float:
        return self.busy_us / self.idle_us

    @property
    def verdict(self) -> str:
        """What the ratio says, in the document's words."""
        if self.slice_us and self.busy_us >= 0.5 * self.slice_us:
            return "waits for the target (no asynchronous progress)"
        if self.ratio < 1.5:
            return "served while the target computes"
        return "partly delayed by the target"


def _defaults(run: Run, test: str) -> dict[int, Point]:
    """The test's points at the setting nearest its defaults, by size."""
    pts = [p for p in run.points if p.test == test and p.median and p.size is not None]
    return {p.size: p for p in run.info(test).nearest_default(pts)}


def library_overhead(run: Run, reference: Run | None = None) -> list[Overhead]:
    gets = _defaults(run, GET)
    if not gets:
        return []
    pp_run = run if any(p.test == PINGPONG for p in run.points) else reference
    if pp_run is None:
        return []
    pp = _defaults(pp_run, PINGPONG)
    return [Overhead(z, gets[z].median, 2 * pp[z].median, pp_run.id) for z in sorted(gets) if z in pp]


def progress_ratios(run: Run) -> list[Progress]:
    idle: dict[tuple, Point] = {}
    busy: list[tuple[tuple, Point]] = []
    for p in run.points:
        if p.test != GET or not p.median or "target" not in p.params:
            continue
        key = p.size, _setting(p)
        if p.params["target"] == "busy":
            busy.append((key, p))
        else:
            idle[key] = p
    out = [
        Progress(dict(key[1]), b.size or 0, idle[key].median, b.median, (b.record.get("extra") or {}).get("slice_us"))
        for key, b in busy
        if key in idle
    ]
    return sorted(out, key=lambda g: (sorted(g.setting.items()), g.size))


def _setting(p: Point) -> tuple:
    """A get's setting apart from the target's part and the size: what idle and busy share."""
    return tuple(sorted((k, v) for k, v in p.params.items() if k not in ("target", "slice", "size")))
