"""The host's time of a nonblocking send on a calibrated platform (SMPI's `smpi/ois`, issue 73),
fitted to what the network does not explain of a measured p2p.stream or p2p.pingping, and a
test's own pace where the link, not the host, sets it (Calibration.paces).  analysis/simcal.py
calibrates the network these are measured against."""

from __future__ import annotations

from scope.analysis.breakpoints import fit_piecewise
from scope.analysis.simnet import ENVELOPE, Calibration, Overhead, bytes_us, route_us, time_us
from scope.model import Point

SHARE_FIT = 0.10  # a range of the stream's host shares one line may stand for (relative residual)


def from_stream(net: Calibration, pts: list[Point]) -> tuple[list[Overhead], list[Overhead]]:
    """The host's time of a nonblocking send (SMPI's ois), fitted piecewise to the share of
    each measured stream time the network does not explain; and the stream's own pace, where
    it differs (else []).

    Simulated, a window of w sends of `size` bytes shares the route (its bytes cross one after
    another, at the route's rate: b = the bytes' time, net = b plus the latency, no host time:
    an MPI_Isend pays ois, not os) while the sender spends ois on each send; the ack is a
    blocking send, the host's time and all. Where ois >= b the sends pace the stream and a message takes
    ois + (net + ack) / w (the last message's crossing and the receiver's 0-byte acknowledgement
    shared by the window); else the route does, and it takes b + (ois + latency + ack) / w. So
    the measured time T gives ois = w (T - b) - latency - ack where that is at most b, else
    T - (net + ack) / w (the two agree at ois = b): where the route could pace the stream it is
    taken to (a network-bound stream says nothing of the host's time, and a host time as long
    as the route's would be paid again by every send of a collective).

    What the stream spends beyond the calibrated route is its pace.  Where T is within PACED
    of the bytes' time at the route's own rate (factor 1), that pace is the link's sustained
    rate, below what its burst lets a lone message see (a token bucket: the ping-pong's factors
    pass 32 KiB at 1.4x the rate), not the host's work: the host's time there is a blocking
    send's (o), and the stream's pace is kept apart, for the stream's own simulation
    (sim check).  A collective's step sends one message a peer and waits, as the ping-pong
    does: charged the stream's pace, the testbed's 64 KiB allreduce and alltoall simulated 2x
    the measurement.  The shares are fitted by the same piecewise Hockney fit as the curves
    (breakpoint detection), start + size / rate a range; a range no line holds within SHARE_FIT
    (a token bucket's stream, noise) is interpolated between its measured sizes instead."""
    ack = time_us(net, 0)
    sizes, share = [], []
    for p in pts:
        w = max(float(p.ops_per_iter or 1), 1.0)
        total, b = route_us(net, p.size), bytes_us(net, p.size)
        routed = w * (p.median - b) - (total - b) - ack  # the route paces the stream: ois at most b
        sizes.append(p.size)
        share.append(max(routed if routed <= b else p.median - (total + ack) / w, 1e-3))
    return _host_and_pace(net, pts, sizes, share)


def from_exchange(net: Calibration, pts: list[Point]) -> tuple[list[Overhead], list[Overhead]]:
    """The host's time of a nonblocking send from p2p.pingping (both ranks send at once, then
    receive: a collective's step between two ranks), and the exchange's own pace where it
    differs (else []).  Simulated, each rank's send pays ois, then its message crosses the
    route, each way on a link of its own: an exchange takes ois + the route's time, so the
    measured time T gives ois = T - route.  On the testbed an exchange of 8 B measured 10.1 us
    against a one-way 7.3 us: the two ranks' sends and receives cost their hosts more at once
    than one after another, and a collective's exchanges pay that (allreduce of 8 B 9.2 us,
    alltoall 9.9 us).  Where the link's sustained rate paces the exchange, as in from_stream."""
    sizes = [p.size for p in pts]
    share = [max(p.median - route_us(net, p.size), 1e-3) for p in pts]
    return _host_and_pace(net, pts, sizes, share)


def _host_and_pace(
    net: Calibration, pts: list[Point], sizes: list[int], share: list[float]
) -> tuple[list[Overhead], list[Overhead]]:
    """The shares fitted as the host's time of a send, with a blocking send's (o) where the
    link's sustained rate paces the measurement (within PACED of its bytes' time at the route's
    rate), and as the measurement's own pace where that differs (else [])."""
    host = [
        min(y, max(net.host_us, 1e-3)) if p.median <= (1 + PACED) * (p.size + ENVELOPE) / net.rate_MBps else y
        for p, y in zip(pts, share)
    ]
    pace = _fitted(sizes, share)
    return (_fitted(sizes, host), pace) if host != share else (pace, [])


PACED = 0.15  # a stream within this of its bytes' time at the route's rate is paced by the link


def _fitted(sizes: list[int], share: list[float]) -> list[Overhead]:
    """Shares of a send's time, per size, as SMPI's piecewise setting: a line a range of the
    piecewise fit, or the sizes interpolated where no line holds them."""
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
