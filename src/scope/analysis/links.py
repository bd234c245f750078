"""The physical limit a network test's bandwidth lives under: the payload rate of the link its
traffic crosses.  A Hockney r_inf above it is a fit outside what the link can carry (a curve
that still bends at its largest size, or noise): flagged, and never shown as a rate."""

from __future__ import annotations

from scope.model import Run

# Beyond the link's payload rate by more than this, a fitted rate is not the link's: tbf lets
# a burst through above the rate, and a fit's r_inf is an extrapolation.
SLACK = 1.05


def link_limit_MBps(run: Run) -> float | None:
    """The payload rate of the link between ranks 0 and 1, MB/s: a shaped testbed's (its
    payload_MBps, after framing), or, between two hosts, the slower host's fastest NIC
    (speed_mbps / 8).  None when they share a host outside a testbed: no link is crossed."""
    ctx = run.context
    if ctx is None:
        return None
    if ctx.testbed and ctx.testbed.get("payload_MBps"):
        return float(ctx.testbed["payload_MBps"])
    place = {p.rank: p for p in ctx.placement}
    if 0 not in place or 1 not in place or place[0].host == place[1].host:
        return None
    fastest = {}
    for node in ctx.nodes:
        speeds = [n.get("speed_mbps") for n in node.get("nics") or () if n.get("speed_mbps") and n.get("name") != "lo"]
        if speeds:
            fastest[node.get("host")] = max(fastest.get(node.get("host"), 0), max(speeds))
    hosts = [fastest.get(place[r].host) for r in (0, 1)]
    return min(hosts) / 8.0 if all(hosts) else None


def beyond_link(rinf_MBps: float | None, crossings: int, limit_MBps: float | None) -> bool:
    """Whether a fitted r_inf is more than the link can carry (per crossing, with SLACK)."""
    if rinf_MBps is None or limit_MBps is None or crossings < 1:
        return False
    return rinf_MBps / crossings > SLACK * limit_MBps
