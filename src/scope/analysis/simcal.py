"""A simulated cluster calibrated from SCOPE's own runs (issue 73): the network SimGrid's SMPI
simulates, fitted to the measured p2p curves as SimGrid's calibration procedure fits it
(Degomme et al., TPDS 2017: piecewise latency and bandwidth factors per message-size range),
with the ranges the breakpoint detection found (analysis/breakpoints.py) instead of ranges
chosen by hand.

What each measurement calibrates:
- p2p.pingpong (blocking, one message each way at a time): the network and the host's time of
  a send together. Its piecewise Hockney fit gives, per range k, t0_k and r_k; SMPI's factors
  make a message of a range take o + lat_k * L + (size + 16) / (bw_k * R) (o: the host's time
  of a send, `smpi/os`; SMPI adds a 16-byte envelope to every message), which is
  t0_k + size / r_k.  So lat_k = (t0_k - o - 16 / r_k) / L and bw_k = r_k / R, the route's
  latency L that of the first range less o, its rate R that of the largest sizes.
- p2p.stream (a window of nonblocking sends): the host's cost of each send, which no latency
  hides: SMPI's `smpi/ois` (the time an MPI_Isend occupies its rank), per range j, t0_j plus
  size / r_j, from the stream's own piecewise fit.  The network's time of a message in the
  stream overlaps the next sends, as a real stream's does.  Its time a message at its smallest
  size is o, the host's time of any send (LogP's o: Culler et al. 1993; the PRTT method's o
  on the testbed, 6.8 us, is the stream's 6.9 us a message): a ping-pong's one-way time holds
  it, so it is taken out of the route's latency and charged to each blocking send (`smpi/os`),
  not added to the latency again by a collective's nonblocking sends.  Where the link's
  sustained rate paces the stream (a token bucket's, below what its burst lets the ping-pong
  see), its pace is kept apart for the stream's own simulation, and a send pays o
  (analysis/simsend.py).
- p2p.pingping (both ranks send at once, then receive: a collective's step between two ranks),
  where a run given has it, measured alike: the host's time of a nonblocking send, the exchange
  less the route (analysis/simsend.py); the stream then keeps its own curve, as its pace, for its own
  simulation.  A window-timed exchange (timed as the collectives are) is taken first.
- p2p.loggp (the PRTT method's parametrised round trips), where a run given has it, measured
  alike (within a host, or between two): its o is the host's time of a send instead of the
  stream's smallest size's, the measurement LogGP defines it by (Hoefler, Lichei, Rehm, IPDPS
  2007; analysis/loggp.py), fitted at the longest burst measured.
- node.dgemm: the host's rate (flop/s per core), for computation that a simulation times.

Receives get no host cost of their own (`smpi/or` zero): the receiver's work on a message
overlaps the sender's in the one-way time measured."""

from __future__ import annotations

import math

from scope.analysis.breakpoints import fit_piecewise
from scope.analysis.kernels import rate_of
from scope.analysis.loggp import fit_loggp
from scope.analysis.screen import screens
from scope.analysis.simnet import DETACHED, ENVELOPE, Calibration, Overhead, Range
from scope.analysis.simsend import from_exchange, from_stream
from scope.catalog.names import DGEMM, LOGGP, PINGPING, PINGPONG, STREAM
from scope.model import Point, Run

MAX_RATE_MBPS = 1e7  # a range whose time does not grow with size: 10 TB/s, no time SMPI would show
DEFAULT_FLOPS = 1e9  # a host's speed (flop/s a core) where no node.dgemm was measured
HINT = "measure them first, e.g. scope run p2p.pingpong p2p.stream --sizes 0-4M:x2"


def _curve(runs: list[Run], test: str, timing: str | None = None) -> tuple[Run, list[Point]] | None:
    """The newest run's points of `test` at its defaults (and timed by `timing`, where given),
    one per size (the first launch combined), with a median; None when no run has three sizes."""
    for run in runs:
        pts = {
            p.size: p
            for p in run.points
            if p.test == test
            and p.median
            and p.size is not None
            and run.at_defaults(p)
            and (timing is None or p.part.get("timing") == timing)
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


def _ranges(fit, pts: list[Point], host_us: float = 0.0) -> tuple[float, float, float, list[Range]]:
    """(the host's time of a send us, the route's latency us, its rate MB/s, the ranges) from the
    ping-pong's fit, `host_us` (the host's time of a send, part of every one-way time) taken out
    of each range's line below DETACHED first: at most the first range's latency and each line
    at a measured size (less 1 ns), so the route keeps a latency and every message a time.

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
    first_lat = first.t0_us - ENVELOPE / min(first.rinf_MBps, MAX_RATE_MBPS)
    # no message below DETACHED takes less than the host's time: a range's line past a token
    # bucket's burst, or a noisy small size, may lie below the first range's latency
    lines = [g.t0_us + p.size / min(g.rinf_MBps, MAX_RATE_MBPS) for g in segs for p in pts
             if g.first_size <= p.size <= g.last_size and p.size < DETACHED]  # fmt: skip
    host = min(max(host_us, 0.0), max(min([first_lat, *lines]) - 1e-3, 0.0))
    lat = max(first_lat - host, 1e-3)  # zero: factors infinite
    out = []
    for g, first_size, last_size in _split(segs, host):
        # a send from DETACHED bytes pays no smpi/os: its line keeps the host's time
        r, t0 = min(g.rinf_MBps, MAX_RATE_MBPS), g.t0_us - (host if first_size < DETACHED else 0.0)
        if t0 >= ENVELOPE / r:
            out.append(Range(first_size, last_size, g.t0_us, r, (t0 - ENVELOPE / r) / lat, r / rate,
                             g.max_abs_residual))  # fmt: skip
            continue
        sizes = sorted(p.size for p in pts if first_size <= p.size <= last_size)
        for k, n in enumerate(sizes):
            line = t0 + n / r
            last = sizes[k + 1] - 1 if k + 1 < len(sizes) else last_size
            bytes_ = (n + ENVELOPE) / rate
            if line >= bytes_:
                out.append(Range(n, last, g.t0_us, r, (line - bytes_) / lat, 1.0, g.max_abs_residual))
            else:
                out.append(Range(n, last, g.t0_us, r, 0.0, (n + ENVELOPE) / (line * rate), g.max_abs_residual))
    return host, lat, rate, out


def _split(segs, host: float) -> list[tuple]:
    """Each segment of the fit with its first and last size, a segment across DETACHED (with a
    host time to take out below it) split there."""
    out = []
    for g in segs:
        if host and g.first_size < DETACHED <= g.last_size:
            out += [(g, g.first_size, DETACHED - 1), (g, DETACHED, g.last_size)]
        else:
            out.append((g, g.first_size, g.last_size))
    return out


def _loggp_o(runs: list[Run], shared: bool) -> tuple[float, dict] | None:
    """LogGP's o from the newest run with p2p.loggp measured where the ping-pong was (within a
    host, or between two), fitted at its longest burst, and the source that says so; None
    where no such run has it or its o is not a positive time."""
    for run in runs:
        pts = [p for p in run.points if p.test == LOGGP and p.median]
        fits = fit_loggp(pts) if pts and same_host(run) == shared else []
        if fits:
            f = max(fits, key=lambda x: x.n)
            if not (math.isfinite(f.o_us) and f.o_us > 0):
                return None
            return f.o_us, {"run": run.id, "test": LOGGP, "fit": "LogGP o (PRTT, Hoefler et al. 2007)",
                            "n": f.n, "o_us": f.o_us}  # fmt: skip
    return None


def _host_us(fit, stream: list[Point] | None) -> float:
    """The host's time of a send: the stream's time a message at its smallest size, where that
    size is within the ping-pong's first range (a time of latency, not of bytes); else 0."""
    if not stream or stream[0].size > fit.segments[0].last_size:
        return 0.0
    return float(stream[0].median)


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
    stream = _curve(runs, STREAM)
    shared = same_host(run)
    loggp = _loggp_o(runs, shared)
    host, lat, rate, ranges = _ranges(fit, pts, loggp[0] if loggp else _host_us(fit, stream[1] if stream else None))
    sources = [{"run": run.id, "test": PINGPONG, "fit": "piecewise Hockney", "sizes": len(pts),
                "ranges": len(fit.segments), "sections": len(ranges), "same_host": shared}]  # fmt: skip
    if loggp:
        sources.append(loggp[1])
    net = Calibration(lat, rate, shared, ranges, [], 1, 1, None, host_us=host)  # the network alone
    isend: list[Overhead] = []
    paces: dict[str, list[Overhead]] = {}
    if stream:
        isend, pace = from_stream(net, stream[1])
        sources.append({"run": stream[0].id, "test": STREAM, "fit": "piecewise Hockney, less the network's share",
                        "sizes": len(stream[1]), "ranges": len(isend)}
                       | ({"paced_by_link": len(pace)} if pace else {}))  # fmt: skip
        paces = {STREAM: pace} if pace else {}
    # timed as the collectives are (each repetition on its own, from a common start), where measured so
    exchange = _curve(runs, PINGPING, "window") or _curve(runs, PINGPING)
    if exchange and same_host(exchange[0]) == shared:
        if stream:  # the stream keeps its own pace: the exchange's is each other send's
            paces[STREAM] = paces.get(STREAM) or isend
        isend, pace = from_exchange(net, exchange[1])
        paces |= {PINGPING: pace} if pace else {}
        sources.append({"run": exchange[0].id, "test": PINGPING, "fit": "piecewise Hockney, less the route's time",
                        "sizes": len(exchange[1]), "ranges": len(isend),
                        "timing": exchange[1][0].part.get("timing") or "loop"}
                       | ({"paced_by_link": len(pace)} if pace else {}))  # fmt: skip
    flops = None
    for r in runs:
        rates_ = [(rate_of(p)[0] / p.procs) for p in r.points if p.test == DGEMM and p.procs and rate_of(p)]
        if rates_:
            flops = max(rates_) * 1e9  # rate_of: Gflop/s
            sources.append({"run": r.id, "test": DGEMM, "fit": "best rate per core", "sizes": len(rates_)})
            break
    shares, links, screened = slow_parts(runs)
    if screened:
        sources.append(screened)
    return Calibration(
        host_shares=shares,
        link_shares=links,
        host_us=host,
        latency_us=lat,
        rate_MBps=rate,
        same_host=shared,
        ranges=ranges,
        isend=isend,
        paces=paces,
        hosts=max(
            1,
            len({(p.host, p.netns) for p in run.context.placement}) if run.context else 1,
            screened["hosts"] if screened else 1,
        ),
        cores=max([int(n.get("cores") or 0) for r in runs if r.context for n in r.context.nodes] + [run.ranks or 1, 1]),
        flops_per_core=flops,
        sources=sources,
    )


def slow_parts(runs: list[Run]) -> tuple[dict[int, float], list[tuple[int, int, float]], dict | None]:
    """What the newest screen (p2p.allpairs) flagged as slow, at its largest size (where a
    pair's time is mostly its bytes'), as the share of the typical rate it carries: each slow
    host's link, and each slow link between two hosts (the route between them), hosts by their
    index in the screen's order (the measured run's placement: node-K of the platform); and
    the source that says so."""
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
        flags = [f for f in sc.flags if f.kind in ("host", "link") and f.figure_us > fixed]
        share = [(f, min(max((f.typical_us - fixed) / (f.figure_us - fixed), 1e-3), 1.0)) for f in flags]
        hosts = {sc.hosts.index(f.hosts[0]): v for f, v in share if f.kind == "host"}
        links = sorted(
            (*sorted((sc.hosts.index(f.hosts[0]), sc.hosts.index(f.hosts[1]))), v) for f, v in share if f.kind == "link"
        )
        return hosts, links, {"run": run.id, "test": sc.test, "fit": "screen's host and link flags at its largest size",
                              "sizes": 1, "size": sc.size, "hosts": len(sc.hosts),
                              "slow_hosts": {sc.hosts[i]: round(v, 4) for i, v in hosts.items()},
                              "slow_links": {f"{sc.hosts[a]}<->{sc.hosts[b]}": round(v, 4)
                                             for a, b, v in links}}  # fmt: skip
    return {}, [], None
