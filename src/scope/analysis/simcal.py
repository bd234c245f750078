"""A simulated cluster calibrated from SCOPE's own runs (issue 73): the network SimGrid's SMPI
simulates, fitted to the measured p2p curves as SimGrid's calibration procedure fits it
(Degomme et al., TPDS 2017: piecewise latency and bandwidth factors per message-size range),
with the ranges the breakpoint detection found (analysis/breakpoints.py) instead of ranges
chosen by hand.

What each measurement calibrates:
- p2p.pingpong (blocking, one message each way at a time): the network. Its piecewise Hockney
  fit gives, per range k, t0_k and r_k; the route's latency L is t0 of the first range and the
  rate R that of the largest sizes, and SMPI's factors make a message of a range take
  lat_k * L + (size + 16) / (bw_k * R) (SMPI adds a 16-byte envelope to every message), which is
  t0_k + size / r_k.  So lat_k = (t0_k - 16 / r_k) / L and bw_k = r_k / R.
- p2p.stream (a window of nonblocking sends): the host's cost of each send, which no latency
  hides: SMPI's `smpi/ois` (the time an MPI_Isend occupies its rank), per range j, t0_j plus
  size / r_j, from the stream's own piecewise fit.  The network's time of a message in the
  stream overlaps the next sends, as a real stream's does.
- node.dgemm: the host's rate (flop/s per core), for computation that a simulation times.

Blocking sends and receives get no host cost of their own (`smpi/os`, `smpi/or` zero): the
ping-pong's whole time is the network's, as measured."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

from scope.analysis.breakpoints import fit_piecewise
from scope.analysis.kernels import rate_of
from scope.analysis.screen import screens
from scope.catalog.names import DGEMM, PINGPONG, STREAM
from scope.model import Point, Run

ENVELOPE = 16  # bytes SMPI adds to every message it simulates (SimGrid 3.32, smpi_request.cpp)
MAX_RATE_MBPS = 1e7  # a range whose time does not grow with size: 10 TB/s, no time SMPI would show
DEFAULT_FLOPS = 1e9  # a host's speed (flop/s a core) where no node.dgemm was measured
SHARE_FIT = 0.10  # a range of the stream's host shares one line may stand for (relative residual)
HINT = "measure them first, e.g. scope run p2p.pingpong p2p.stream --sizes 0-4M:x2"


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
    latency_us: float  # the route's latency between the two ranks measured (factor 1)
    rate_MBps: float  # its rate (factor 1): the ping-pong's rate at the largest sizes
    same_host: bool  # the ping-pong's ranks shared a host (its curve is the host's loopback)
    ranges: list[Range]
    isend: list[Overhead]  # empty: no p2p.stream measured
    hosts: int  # the measured run's hosts
    cores: int  # cores a host (the largest the runs report)
    flops_per_core: float | None  # node.dgemm's rate, or None
    sources: list[dict] = field(default_factory=list)  # what came from which run
    host_shares: dict[int, float] = field(default_factory=dict)  # host index -> share of the rate its link carries

    def record(self) -> dict:
        """The calibration as the platform file and a simulated run's context keep it."""
        return asdict(self)


def _curve(runs: list[Run], test: str) -> tuple[Run, list[Point]] | None:
    """The newest run's points of `test` at its defaults, one per size (the first launch
    combined), with a median; None when no run has three sizes."""
    for run in runs:
        pts = {
            p.size: p for p in run.points if p.test == test and p.median and p.size is not None and run.at_defaults(p)
        }
        if len(pts) >= 3:
            return run, [pts[s] for s in sorted(pts)]
    return None


def same_host(run: Run) -> bool:
    """Whether ranks 0 and 1 (the pair a p2p test measures) shared a host (and, on the testbed,
    its network namespace)."""
    ctx = run.context
    a, b = (ctx.rank(0), ctx.rank(1)) if ctx else (None, None)
    if a is None or b is None:
        return len(ctx.hosts) <= 1 if ctx else True
    return (a.host, a.netns) == (b.host, b.netns)


def _ranges(fit, pts: list[Point]) -> tuple[float, float, list[Range]]:
    """(the route's latency us, its rate MB/s, the ranges) from the ping-pong's fit.

    A rate is at most MAX_RATE_MBPS. SMPI's factors cannot make a latency negative, and every
    message carries a 16-byte envelope at its range's rate: a range whose line cannot be so
    written (t0 below 16 B / r: a negative t0 past a token bucket's burst, t = L - burst / R +
    n / R; or a rate fitted over a few small sizes, so low the envelope alone outweighs t0) is
    written as one section per measured size, each putting the range's line at that size: its
    bytes at the route's rate and the rest as latency, or where the line is below the bytes'
    time at that rate, no latency and the rate that reaches it."""
    segs = fit.segments
    rate = min(segs[-1].rinf_MBps, MAX_RATE_MBPS)
    first = next((g for g in segs if g.t0_us > ENVELOPE / min(g.rinf_MBps, MAX_RATE_MBPS)), segs[0])
    lat = max(first.t0_us - ENVELOPE / min(first.rinf_MBps, MAX_RATE_MBPS), 1e-3)  # zero: factors infinite
    out = []
    for g in segs:
        r = min(g.rinf_MBps, MAX_RATE_MBPS)
        if g.t0_us >= ENVELOPE / r:
            out.append(Range(g.first_size, g.last_size, g.t0_us, r, (g.t0_us - ENVELOPE / r) / lat, r / rate,
                             g.max_abs_residual))  # fmt: skip
            continue
        sizes = sorted(p.size for p in pts if g.first_size <= p.size <= g.last_size)
        for k, n in enumerate(sizes):
            line = g.t0_us + n / r
            last = sizes[k + 1] - 1 if k + 1 < len(sizes) else g.last_size
            bytes_ = (n + ENVELOPE) / rate
            if line >= bytes_:
                out.append(Range(n, last, g.t0_us, r, (line - bytes_) / lat, 1.0, g.max_abs_residual))
            else:
                out.append(Range(n, last, g.t0_us, r, 0.0, (n + ENVELOPE) / (line * rate), g.max_abs_residual))
    return lat, rate, out


def calibrate(runs: list[Run]) -> Calibration | str:
    """The calibration from `runs` (newest first; each test from the newest run that has it),
    or why there is none."""
    found = _curve(runs, PINGPONG)
    if found is None:
        return f"no run given has {PINGPONG} at three sizes or more"
    run, pts = found
    fit = fit_piecewise([p.size for p in pts], [p.median for p in pts])
    if fit is None:
        return f"{PINGPONG} of run {run.id} could not be fitted"
    lat, rate, ranges = _ranges(fit, pts)
    shared = same_host(run)
    sources = [{"run": run.id, "test": PINGPONG, "fit": "piecewise Hockney", "sizes": len(pts),
                "ranges": len(fit.segments), "sections": len(ranges), "same_host": shared}]  # fmt: skip
    isend: list[Overhead] = []
    stream = _curve(runs, STREAM)
    if stream:
        net = Calibration(lat, rate, shared, ranges, [], 1, 1, None)  # the network alone, for _isend
        isend = _isend(net, stream[1])
        sources.append({"run": stream[0].id, "test": STREAM, "fit": "piecewise Hockney, less the network's share",
                        "sizes": len(stream[1]), "ranges": len(isend)})  # fmt: skip
    flops = None
    for r in runs:
        rates_ = [(rate_of(p)[0] / p.procs) for p in r.points if p.test == DGEMM and p.procs and rate_of(p)]
        if rates_:
            flops = max(rates_) * 1e9  # rate_of: Gflop/s
            sources.append({"run": r.id, "test": DGEMM, "fit": "best rate per core", "sizes": len(rates_)})
            break
    shares, screened = host_shares(runs)
    if screened:
        sources.append(screened)
    return Calibration(
        host_shares=shares,
        latency_us=lat,
        rate_MBps=rate,
        same_host=shared,
        ranges=ranges,
        isend=isend,
        hosts=max(
            1,
            len({(p.host, p.netns) for p in run.context.placement}) if run.context else 1,
            screened["hosts"] if screened else 1,
        ),
        cores=max([int(n.get("cores") or 0) for r in runs if r.context for n in r.context.nodes] + [run.ranks or 1, 1]),
        flops_per_core=flops,
        sources=sources,
    )


def host_shares(runs: list[Run]) -> tuple[dict[int, float], dict | None]:
    """Each host the newest screen (p2p.allpairs) flagged as slow, at its largest size (where a
    pair's time is mostly its bytes'), as the share of the typical rate its link carries. Hosts
    by their index in the screen's order (the measured run's placement: node-K of the
    platform). A slow link between two hosts is not one host's, and a star's
    links are the hosts': it is said in the source, not planted."""
    for run in runs:
        if not run.pairs:
            continue
        found = [sc for sc in screens(run) if sc.flags or sc.judged]
        if not found:
            continue
        sc = max(found, key=lambda x: x.size)
        # the pairs' time besides their bytes, read from the smallest size screened (its typical
        # pair), so a share is of the bytes' rate: (typical - that) / (slow - that)
        small = min(found, key=lambda x: x.size)
        fixed = small.typical_us if small.size < sc.size else 0.0
        shares = {
            sc.hosts.index(f.hosts[0]): min(max((f.typical_us - fixed) / (f.figure_us - fixed), 1e-3), 1.0)
            for f in sc.flags
            if f.kind == "host" and f.figure_us > fixed
        }
        links = [list(f.hosts) for f in sc.flags if f.kind == "link"]
        return shares, {"run": run.id, "test": sc.test, "fit": "screen's host flags at its largest size",
                        "sizes": 1, "size": sc.size, "hosts": len(sc.hosts),
                        "slow_hosts": {sc.hosts[i]: round(v, 4) for i, v in shares.items()},
                        "slow_links_not_planted": links}  # fmt: skip
    return {}, None


def _isend(net: Calibration, pts: list[Point]) -> list[Overhead]:
    """The host's time of a nonblocking send (SMPI's ois), fitted piecewise to the share of
    each measured stream time the network does not explain.

    Simulated, a window of w sends of `size` bytes shares the route (its bytes cross one after
    another, at the route's rate: b = the bytes' time, net = b plus the latency) while the
    sender spends ois on each send. Where ois >= b the sends pace the stream and a message takes
    ois + (net + ack) / w (the last message's crossing and the receiver's 0-byte acknowledgement
    shared by the window); else the route does, and it takes b + (ois + latency + ack) / w. So
    the measured time T gives ois = w (T - b) - latency - ack where that is at most b, else
    T - (net + ack) / w (the two agree at ois = b): where the route could pace the stream it is
    taken to (a network-bound stream says nothing of the host's time, and a host time as long
    as the route's would be paid again by every send of a collective). What a stream spends
    beyond the route is taken for the host's; where it is the route's instead (a token bucket's
    sustained rate below what its burst lets a ping-pong see), collectives are charged it at
    each nonblocking send (docs/sim.md). The shares are fitted by the same
    piecewise Hockney fit as the curves (breakpoint detection), start + size / rate a range;
    a range no line holds within SHARE_FIT (a token bucket's stream, noise) is interpolated
    between its measured sizes instead."""
    ack = time_us(net, 0)
    sizes, share = [], []
    for p in pts:
        w = max(float(p.ops_per_iter or 1), 1.0)
        total, b = time_us(net, p.size), bytes_us(net, p.size)
        routed = w * (p.median - b) - (total - b) - ack  # the route paces the stream: ois at most b
        sizes.append(p.size)
        share.append(max(routed if routed <= b else p.median - (total + ack) / w, 1e-3))
    fit = fit_piecewise(sizes, share)
    if fit is None:
        return []
    out = []
    for g in fit.segments:
        if g.t0_us >= 0 and g.max_abs_residual <= SHARE_FIT:
            out.append(Overhead(g.first_size, g.last_size, g.t0_us, 1.0 / g.rinf_MBps, g.max_abs_residual))
            continue
        # no line holds the range's shares: a section per measured size, the line through its
        # share and the next size's (the last one flat)
        out += _interpolated([(n, y) for n, y in zip(sizes, share) if g.first_size <= n <= g.last_size], g.last_size)
    return out


def stream_time_us(cal: Calibration, size: int, window: int) -> float:
    """A message's time in a simulated stream of `window` sends (the model _isend inverts)."""
    o = next((x for x in reversed(cal.isend) if size >= x.first_size), None)
    ois = o.start_us + o.per_byte_us * size if o else 0.0
    total, b, ack = time_us(cal, size), bytes_us(cal, size), time_us(cal, 0)
    w = max(window, 1)
    return ois + (total + ack) / w if ois >= b else b + (ois + total - b + ack) / w


def _interpolated(points: list[tuple[int, float]], last: int) -> list[Overhead]:
    """Sections whose value at each measured size is its share, linear between sizes. SMPI
    bounds a section by its first size - 1 (compared strictly), so a section cannot start at
    1 B beside one at 0 B: the 0 B section's line reaches 1 B's share, and the next starts at
    2 B on the line from 1 B's."""
    out: list[Overhead] = []
    for (n, y), nxt in zip(points, [*points[1:], None]):
        slope = (nxt[1] - y) / (nxt[0] - n) if nxt else 0.0
        first = 2 if n == 1 and out and out[-1].first_size == 0 else n
        if nxt and first > nxt[0] - 1:
            continue  # 1 B then 2 B: the 0 B section carries 1 B, the 2 B one the rest
        out.append(Overhead(first, nxt[0] - 1 if nxt else last, y - slope * n, slope, 0.0))
    return out


def _range(cal: Calibration, size: int) -> Range:
    return next((r for r in reversed(cal.ranges) if size + ENVELOPE > _lat_threshold(r.first_size)), cal.ranges[0])


def _latency_us(cal: Calibration, size: int) -> float:
    return _range(cal, size).lat_factor * cal.latency_us


def bytes_us(cal: Calibration, size: int) -> float:
    """The calibrated route's time for the bytes of one message (its envelope too), without
    the latency: what a message takes of the route's rate while others share it."""
    return time_us(cal, size) - _latency_us(cal, size)


def time_us(cal: Calibration, size: int) -> float:
    """What the calibrated network takes for one message of `size` bytes between the two
    ranks measured: SMPI's formula with this calibration's factors (a check of the arithmetic,
    and the figure a what-if changes)."""
    rg = _range(cal, size)
    return rg.lat_factor * cal.latency_us + (size + ENVELOPE) / (rg.bw_factor * cal.rate_MBps)


def _lat_threshold(first_size: int) -> int:
    """SMPI applies a factor section to a message whose size plus its envelope exceeds the
    section's bound (measured on SimGrid 3.32: a bound of 1016 leaves a 1,000-byte message in the
    range below, 1015 takes it), so a range from `first_size` is bounded at first_size + 15."""
    return first_size + ENVELOPE - 1 if first_size else 0


def smpi_config(cal: Calibration) -> dict[str, str]:
    """SMPI's settings for the calibration: the factors per range, the nonblocking send's host
    cost per range (its bound compared with the size alone, strictly: a bound of first_size - 1),
    no RTT-unfairness term (weight-S) and no acknowledgement traffic against the data
    (crosstraffic): a single flow's time is then exactly the formula."""
    lat = ";".join(f"{_lat_threshold(r.first_size)}:{r.lat_factor:.9g}" for r in cal.ranges)
    bw = ";".join(f"{_lat_threshold(r.first_size)}:{r.bw_factor:.9g}" for r in cal.ranges)
    out = {"smpi/lat-factor": lat, "smpi/bw-factor": bw, "network/weight-S": "0", "network/crosstraffic": "0",
           "smpi/os": "0:0:0", "smpi/or": "0:0:0"}  # fmt: skip
    if cal.isend:
        out["smpi/ois"] = ";".join(
            f"{max(o.first_size - 1, 0)}:{o.start_us * 1e-6:.9g}:{o.per_byte_us * 1e-6:.9g}" for o in cal.isend
        )
    return out


def finite_calibration(cal: Calibration) -> str | None:
    """Why the calibration cannot be written (a factor or rate that is not finite and positive)."""
    values = [cal.latency_us, cal.rate_MBps, *(r.bw_factor for r in cal.ranges)]
    if any(not math.isfinite(v) or v <= 0 for v in values):
        return "the ping-pong's fit gives a rate or latency that is not finite and above zero"
    return None
