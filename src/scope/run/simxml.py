"""SimGrid platform files for described clusters (`scope sim platform`, and the calibrated ones
of run/simcal.py): a `<cluster>` (a star of host links, or a two-level fat tree), written host by
host where one host's link differs, or route by route where the route between two hosts does."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from scope.errors import USAGE, ScopeError

RATE = re.compile(r"(\d+(?:\.\d+)?)(G|M|K)?(bps|Bps)")
TIME = re.compile(r"(\d+(?:\.\d+)?)(s|ms|us|ns)")


def rate_bps(rate: str) -> float:
    m = RATE.fullmatch(rate)
    if not m:
        raise ScopeError(f"--rate {rate!r} is not a rate", "e.g. --rate 100Gbps or 12.5GBps (b: bits, B: bytes)", USAGE)
    v = float(m.group(1)) * {"G": 1e9, "M": 1e6, "K": 1e3, None: 1}[m.group(2)]
    v = v / 8 if m.group(3) == "bps" else v
    if not math.isfinite(v) or v <= 0 or v > 1e18:
        raise ScopeError(
            f"--rate {rate[:40]!r} is no rate a link can have", "above zero and at most 8 EBps, e.g. 100Gbps", USAGE
        )
    return v


def time_s(t: str) -> float:
    m = TIME.fullmatch(t)
    if not m:
        raise ScopeError(f"--latency {t!r} is not a time", "e.g. --latency 1us", USAGE)
    v = float(m.group(1)) * {"s": 1, "ms": 1e-3, "us": 1e-6, "ns": 1e-9}[m.group(2)]
    if not math.isfinite(v) or v > 3600:
        raise ScopeError(f"--latency {t[:40]!r} is no latency a link can have", "at most an hour, e.g. 1us", USAGE)
    return v


@dataclass(frozen=True)
class Cluster:
    """A cluster a platform file describes: `hosts` hosts of `cores` cores (of `speed`), each
    with its own link of `bw` B/s and `lat` s to a switch (flat) or in a two-level fat tree;
    `slow`: host index -> share of `bw` its link carries; `pairs`: (host, host) -> share of `bw`
    the route between the two carries, both ways (a slow link between them; flat only)."""

    hosts: int
    cores: int
    bw: float
    lat: float
    topology: str = "flat"
    speed: str = "1Gf"
    slow: dict[int, float] | None = None
    pairs: dict[tuple[int, int], float] | None = None


def platform_xml(
    hosts: int,
    cores: int,
    rate: str,
    latency: str,
    topology: str = "flat",
    speed: str = "1Gf",
    slow: dict[int, float] | None = None,
    pairs: dict[tuple[int, int], float] | None = None,
) -> str:
    """A SimGrid platform for a described cluster: `hosts` hosts of `cores` cores, each with its
    own link (`rate`, `latency`) to a switch (flat), or a two-level fat tree of such links
    (fattree: hosts in pods of up to 16 under one leaf, the leaves under as many spines as
    there are pods' up-links, a link's rate each).  `slow`: host index -> share of `rate` its
    link carries; `pairs`: (host, host) -> share of `rate` the route between them carries (a
    planted slow host or link, flat only: the ground truth a screen is checked on)."""
    c = Cluster(hosts, cores, rate_bps(rate), time_s(latency), topology, speed, slow, pairs or None)
    said = f"  <!-- scope sim platform: {hosts} hosts x {cores} cores, {topology}, links {rate}, {latency} -->\n"
    return cluster_xml(c, said)


def cluster_xml(c: Cluster, head: str = "", digits: int = 6) -> str:
    """The platform file of a cluster, `head` (the lines that say what it is: a comment, a
    <config>) after the platform's opening; its links' rates and times written to `digits`
    significant digits."""
    for h, share in (c.slow or {}).items():
        if not 0 <= h < c.hosts or not 0 < share <= 1e3:
            raise ScopeError(
                f"--slow {h}:{share:g} names no host of 0..{c.hosts - 1}, or a share of the rate out of (0, 1000]",
                "e.g. --slow 17:0.25 (host 17's link at a quarter of --rate)",
                USAGE,
            )
    for (a, b), share in (c.pairs or {}).items():
        if not (0 <= min(a, b) and max(a, b) < c.hosts and a != b and 0 < share <= 1e3):
            raise ScopeError(
                f"--slow-link {a}-{b}:{share:g} names no two hosts of 0..{c.hosts - 1}, or a share out of (0, 1000]",
                "e.g. --slow-link 3-7:0.25 (the route between hosts 3 and 7 at a quarter of --rate)",
                USAGE,
            )
    if (c.slow or c.pairs) and c.topology != "flat":
        raise ScopeError("--slow and --slow-link plant a slow link in a flat platform", "leave out --topology fattree",
                         USAGE)  # fmt: skip
    if c.hosts < 1 or c.cores < 1:
        raise ScopeError("a platform needs a host and a core at least", "e.g. --hosts 64 --cores 16", USAGE)
    common = f'prefix="node-" suffix="" radical="0-{c.hosts - 1}" speed="{c.speed}" core="{c.cores}"'
    common += f' bw="{c.bw:.{digits}g}Bps" lat="{c.lat:.{digits}g}s"'
    if c.topology == "flat" and c.pairs:
        body = routed_flat(c)
    elif c.topology == "flat" and c.slow:
        body = explicit_flat(c)
    elif c.topology == "flat":
        backbone = f'bb_bw="{c.bw * c.hosts:.{digits}g}Bps" bb_lat="0s" sharing_policy="SPLITDUPLEX"'
        body = f'  <cluster id="cluster" {common} {backbone}/>\n'
    elif c.topology == "fattree":
        per = min(c.hosts, 16)
        if c.hosts % per:
            raise ScopeError(
                f"a two-level fat tree of {c.hosts} hosts", "give a multiple of 16 hosts (or fewer than 16)", USAGE
            )
        leaves = c.hosts // per  # SimGrid's FAT_TREE: levels; down-links; up-links; parallel links
        params = f"2;{per},{leaves};1,{leaves};1,1"
        body = f'  <cluster id="cluster" {common} topology="FAT_TREE" topo_parameters="{params}"/>\n'
    else:
        raise ScopeError(f"--topology {c.topology!r} is not known", "flat or fattree", USAGE)
    return (
        "<?xml version='1.0'?>\n"
        '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">\n'
        '<platform version="4.1">\n' + head + body + "</platform>\n"
    )


def explicit_flat(c: Cluster) -> str:
    """The flat cluster written host by host (a Cluster-routed zone: each host's own link to the
    backbone), so one host's link can differ from the others'."""
    out = [
        '  <zone id="cluster" routing="Cluster">\n',
        f'    <backbone id="backbone" bandwidth="{c.bw * c.hosts:.6g}Bps" latency="0s"/>\n',
    ]
    for h in range(c.hosts):
        out += [_host(c, h), _link(c, h), f'    <host_link id="node-{h}" up="link-{h}_UP" down="link-{h}_DOWN"/>\n']
    out.append("  </zone>\n")
    return "".join(out)


def _host(c: Cluster, h: int) -> str:
    return f'    <host id="node-{h}" speed="{c.speed}" core="{c.cores}"/>\n'


def _link(c: Cluster, h: int) -> str:
    """Host h's own link: the cluster's rate, or its share of it where the host is slow."""
    rate = c.bw * (c.slow or {}).get(h, 1.0)
    return f'    <link id="link-{h}" bandwidth="{rate:.6g}Bps" latency="{c.lat:.6g}s" sharing_policy="SPLITDUPLEX"/>\n'


ROUTED_HOSTS = 256  # a platform whose routes are each written: 65,536 routes, 10 MB of XML


def routed_flat(c: Cluster) -> str:
    """The flat cluster with every route written (a Full-routed zone), so the route between two
    hosts can cross a link of its own: a slow link between them (`c.pairs`), at its share of
    the rate each way, after the sender's link up and before the receiver's down. Every other
    route is the star's (explicit_flat): the sender's link up, the receiver's down, a host's
    route to itself too. At most ROUTED_HOSTS hosts (a route a pair)."""
    if c.hosts > ROUTED_HOSTS:
        raise ScopeError(
            f"a slow link between two hosts is planted in platforms of at most {ROUTED_HOSTS} hosts (each route "
            f"written), not {c.hosts}",
            f"give --hosts {ROUTED_HOSTS} or fewer",
            USAGE,
        )
    out = ['  <zone id="cluster" routing="Full">\n']
    out += [_host(c, h) for h in range(c.hosts)] + [_link(c, h) for h in range(c.hosts)]  # the DTD: hosts first
    pairs = {(min(a, b), max(a, b)): share for (a, b), share in (c.pairs or {}).items()}
    for (a, b), share in sorted(pairs.items()):
        out.append(f'    <link id="pair-{a}-{b}" bandwidth="{c.bw * share:.6g}Bps" latency="0s" '
                   'sharing_policy="SPLITDUPLEX"/>\n')  # fmt: skip
    for a in range(c.hosts):
        for b in range(c.hosts):
            lo, hi = min(a, b), max(a, b)
            pair = (
                f'<link_ctn id="pair-{lo}-{hi}" direction="{"UP" if a < b else "DOWN"}"/>' if (lo, hi) in pairs else ""
            )
            up, down = f'<link_ctn id="link-{a}" direction="UP"/>', f'<link_ctn id="link-{b}" direction="DOWN"/>'
            out.append(f'    <route src="node-{a}" dst="node-{b}" symmetrical="NO">{up}{pair}{down}</route>\n')
    out.append("  </zone>\n")
    return "".join(out)
