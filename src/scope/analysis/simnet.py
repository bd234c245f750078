"""The calibrated network as SMPI computes it (issue 73): a Calibration's ranges, the host's time
of a send and of a nonblocking send (analysis/simcal.py fits them to the measured curves), the
time a message takes by SMPI's formula with them, and SMPI's settings that say them."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

from scope.catalog.names import PINGPING, STREAM

ENVELOPE = 16  # bytes SMPI adds to every message it simulates (SimGrid 3.32, smpi_request.cpp)
# SMPI charges a blocking send its host time (smpi/os) only where the send is detached: below
# smpi/send-is-detached-thresh, 65,536 bytes by default (SimGrid 3.32, smpi_request.cpp); a
# larger one's one-way time keeps the host's share in the route's latency
DETACHED = 65536


@dataclass(frozen=True)
class Range:
    """One message-size range of the calibrated network, from a segment of the ping-pong's fit."""

    first_size: int
    last_size: int
    t0_us: float
    rinf_MBps: float  # at most MAX_RATE_MBPS (a range whose time does not grow: that, not infinity)
    lat_factor: float
    bw_factor: float
    max_residual: float  # the fit's largest relative residual within the range


@dataclass(frozen=True)
class Overhead:
    """The host's time of one nonblocking send from `first_size` bytes: start + size * per_byte."""

    first_size: int
    last_size: int
    start_us: float
    per_byte_us: float
    max_residual: float


@dataclass
class Calibration:
    latency_us: float  # the route's latency between the two ranks measured (factor 1), the host's time out of it
    rate_MBps: float  # its rate (factor 1): the ping-pong's rate at the largest sizes
    same_host: bool  # the ping-pong's ranks shared a host (its curve is the host's loopback)
    ranges: list[Range]
    isend: list[Overhead]  # empty: no p2p.stream measured
    hosts: int  # the measured run's hosts
    cores: int  # cores a host (the largest the runs report)
    flops_per_core: float | None  # node.dgemm's rate, or None
    sources: list[dict] = field(default_factory=list)  # what came from which run
    host_shares: dict[int, float] = field(default_factory=dict)  # host index -> share of the rate its link carries
    # a slow link between two hosts: (host index, host index, share of the rate their route carries)
    link_shares: list[tuple[int, int, float]] = field(default_factory=list)
    host_us: float = 0.0  # the host's time of a send (smpi/os), part of each one-way time: no stream, 0
    # a test's own ois (p2p.stream's, p2p.pingping's) where it is not `isend`: its pace where the
    # link's sustained rate sets it (a token bucket's), or the stream's where an exchange set `isend`
    paces: dict[str, list[Overhead]] = field(default_factory=dict)

    def record(self) -> dict:
        """The calibration as the platform file and a simulated run's context keep it."""
        return asdict(self)


def ois_us(cal: Calibration, size: int, test: str = "") -> float:
    """A nonblocking send's host time at `size` bytes, in `test`'s own simulation (its pace)."""
    o = next((x for x in reversed(cal.paces.get(test) or cal.isend) if size >= x.first_size), None)
    return o.start_us + o.per_byte_us * size if o else 0.0


def exchange_time_us(cal: Calibration, size: int) -> float:
    """A simulated ping-ping's time (the model simsend.from_exchange inverts): both ranks' nonblocking sends
    pay their host time at once, then cross the route, each way on a link of its own."""
    return ois_us(cal, size, PINGPING) + route_us(cal, size)


def stream_time_us(cal: Calibration, size: int, window: int) -> float:
    """A message's time in a simulated stream of `window` sends (the model simsend.from_stream inverts), at
    the stream's pace."""
    ois = ois_us(cal, size, STREAM)
    total, b, ack = route_us(cal, size), bytes_us(cal, size), time_us(cal, 0)
    w = max(window, 1)
    return ois + (total + ack) / w if ois >= b else b + (ois + total - b + ack) / w


def _range(cal: Calibration, size: int) -> Range:
    return next((r for r in reversed(cal.ranges) if size + ENVELOPE > _lat_threshold(r.first_size)), cal.ranges[0])


def _latency_us(cal: Calibration, size: int) -> float:
    return _range(cal, size).lat_factor * cal.latency_us


def bytes_us(cal: Calibration, size: int) -> float:
    """The calibrated route's time for the bytes of one message (its envelope too), without
    the latency: what a message takes of the route's rate while others share it."""
    return route_us(cal, size) - _latency_us(cal, size)


def route_us(cal: Calibration, size: int) -> float:
    """The calibrated route's time for one message of `size` bytes: its latency and its bytes,
    without the host's time of the send."""
    rg = _range(cal, size)
    return rg.lat_factor * cal.latency_us + (size + ENVELOPE) / (rg.bw_factor * cal.rate_MBps)


def time_us(cal: Calibration, size: int) -> float:
    """What one blocking message of `size` bytes takes between the two ranks measured: the
    host's time of the send (smpi/os, below DETACHED) and the route's, SMPI's formula with this
    calibration's factors (a check of the arithmetic, and the figure a what-if changes)."""
    return (cal.host_us if size < DETACHED else 0.0) + route_us(cal, size)


def _lat_threshold(first_size: int) -> int:
    """SMPI applies a factor section to a message whose size plus its envelope exceeds the
    section's bound (measured on SimGrid 3.32: a bound of 1016 leaves a 1,000-byte message in the
    range below, 1015 takes it), so a range from `first_size` is bounded at first_size + 15."""
    return first_size + ENVELOPE - 1 if first_size else 0


def _sections(factors) -> str:
    """SMPI's piecewise factor setting: each (first size of a range, factor), bounded as
    _lat_threshold says."""
    return ";".join(f"{_lat_threshold(n)}:{f:.9g}" for n, f in factors)


def smpi_config(cal: Calibration) -> dict[str, str]:
    """SMPI's settings for the calibration: the factors per range, the host's time of a blocking
    send, the nonblocking send's host cost per range (its bound compared with the size alone,
    strictly: a bound of first_size - 1), no RTT-unfairness term (weight-S) and no
    acknowledgement traffic against the data (crosstraffic): a single flow's time is then
    exactly the formula."""
    lat = _sections((r.first_size, r.lat_factor) for r in cal.ranges)
    bw = _sections((r.first_size, r.bw_factor) for r in cal.ranges)
    out = {"smpi/lat-factor": lat, "smpi/bw-factor": bw, "network/weight-S": "0", "network/crosstraffic": "0",
           "smpi/os": f"0:{cal.host_us * 1e-6:.9g}:0", "smpi/or": "0:0:0"}  # fmt: skip
    if cal.isend:
        out["smpi/ois"] = ois_setting(cal.isend)
    return out


def ois_setting(overheads: list[Overhead]) -> str:
    """SMPI's piecewise smpi/ois: each section's bound (its first size - 1, compared strictly),
    start and per-byte time in seconds."""
    return ";".join(f"{max(o.first_size - 1, 0)}:{o.start_us * 1e-6:.9g}:{o.per_byte_us * 1e-6:.9g}" for o in overheads)


def pace_config(record: dict | None, test: str) -> list[str]:
    """The setting a simulation of `test` alone adds to a calibrated platform (`record`: the
    calibration it carries): its own pace as smpi/ois (Calibration.paces); [] where the
    platform's ois is its own already."""
    pace = [Overhead(**o) for o in ((record or {}).get("paces") or {}).get(test) or []]
    return [f"smpi/ois:{ois_setting(pace)}"] if pace else []


def undetached_config(record: dict | None, thresh: int) -> list[str]:
    """SMPI's latency factors for a run on a calibrated platform (`record`: the calibration it
    carries) whose sends are detached below `thresh` bytes only (`--sim-cfg scale` sets 0):
    SMPI charges smpi/os to detached sends alone, so a blocking send from `thresh` up to
    DETACHED would lose the host's time. Each section from `thresh` up takes it back in its
    latency (host / L): its one-way time stays the ping-pong's, and its nonblocking sends pay
    the host's time on top of it, as before it was split out (a section across `thresh`, its
    sizes from it lose it). [] where nothing moves."""
    host, lat = float((record or {}).get("host_us") or 0.0), float((record or {}).get("latency_us") or 0.0)
    if host <= 0 or lat <= 0 or thresh >= DETACHED:
        return []
    back = host / lat
    factors = [(r["first_size"], r["lat_factor"] + (back if thresh <= r["first_size"] < DETACHED else 0.0))
               for r in record.get("ranges") or []]  # fmt: skip
    return [f"smpi/lat-factor:{_sections(factors)}"] if factors else []


def finite_calibration(cal: Calibration) -> str | None:
    """Why the calibration cannot be written (a factor or rate that is not finite and positive)."""
    values = [cal.latency_us, cal.rate_MBps, *(r.bw_factor for r in cal.ranges)]
    if any(not math.isfinite(v) or v <= 0 for v in values):
        return "the ping-pong's fit gives a rate or latency that is not finite and above zero"
    return None
