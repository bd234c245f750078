"""A SimGrid platform calibrated from stored runs (`scope sim platform --from RUN`, issue 73):
the calibration (analysis/simcal.py) written as a `<cluster>` whose links, loopback and host
speed are the measured ones, with SMPI's factors in the platform's own `<config>` (SimGrid
applies it when it reads the file; a --sim-cfg of the same key overrides it), and the
calibration itself, with the runs and fits it came from, in a comment SCOPE reads back so a
run on the platform records where its figures came from (run/simplatform.py)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from scope.analysis.simcal import DEFAULT_FLOPS
from scope.analysis.simnet import Calibration, finite_calibration, smpi_config
from scope.errors import USAGE, ScopeError
from scope.run.simplatform import MARK
from scope.run.simxml import ROUTED_HOSTS, Cluster, cluster_xml, rate_bps, time_s

SCALE = re.compile(r"x(\d+(?:\.\d+)?(?:e-?\d+)?)")
CPU_THRESHOLD_S = 5e-6  # a computation burst shorter than this is not simulated (computation_config)


@dataclass(frozen=True)
class WhatIf:
    """What a calibrated platform is asked to be instead of the measured cluster."""

    hosts: int | None = None  # None: the measured run's hosts (at least 2, so links exist)
    cores: int | None = None
    rate: str | None = None  # 'xK' scales the calibrated rate; a rate replaces it
    latency: str | None = None  # 'xK' scales the calibrated latency; a time replaces it
    topology: str = "flat"


def _scaled(given: str | None, measured: float, parse, what: str) -> float:
    """`given` applied to a measured value: None keeps it, 'xK' scales it, else parse(given)."""
    if given is None:
        return measured
    m = SCALE.fullmatch(given)
    if m:
        k = float(m.group(1))
        if not 0 < k <= 1e6:
            raise ScopeError(f"--{what} {given}: a scale must be above 0 and at most 1e6", f"e.g. --{what} x2", USAGE)
        return measured * k
    return parse(given)


def link_values(cal: Calibration, w: WhatIf) -> tuple[float, float]:
    """(each host link's latency s, its rate B/s).

    Every route, within a host too, crosses the sender's host link up and the receiver's down
    (the cluster has no loopback): the backbone adds no latency, so each link has half the
    route's latency. A calibration measured within a host so shares its rate among the host's
    concurrent messages, as memory bandwidth is shared (a loopback would give each message the
    whole rate), where ranks share a simulated host (`sim check` gives each rank of a run
    measured within one host a host of its own: two copies at once each keep the whole rate
    there, measured); measured between hosts, it is the hosts' links. --rate and --latency change
    the links, so both kinds of route."""
    lat_s, rate_Bps = cal.latency_us * 1e-6, cal.rate_MBps * 1e6
    return _scaled(w.latency, lat_s, time_s, "latency") / 2, _scaled(w.rate, rate_Bps, rate_bps, "rate")


def calibrated_xml(cal: Calibration, w: WhatIf) -> str:
    """The platform: hosts of the calibration's (or the what-if's) count and cores, links as
    link_values says (the screen's slow hosts each on its own link, its slow links between two
    hosts on their route: flat only), SMPI's factors in its <config>, the calibration in a
    comment."""
    why = finite_calibration(cal)
    if why:
        raise ScopeError(f"cannot calibrate: {why}", "measure p2p.pingpong again, with more sizes", USAGE)
    hosts = w.hosts or max(cal.hosts, 2)
    link_lat, link_rate = link_values(cal, w)
    config = "".join(f'    <prop id="{k}" value="{v}"/>\n' for k, v in smpi_config(cal).items())
    record = {**cal.record(), "what_if": {k: v for k, v in vars(w).items() if v is not None}}
    # JSON never holds "--" outside a string; inside one it is escaped, so the comment stays XML
    text = json.dumps(record, sort_keys=True, allow_nan=False).replace("--", "-\\u002d")
    head = f"  <!-- {MARK} {text} -->\n  <config>\n{config}  </config>\n"
    flat = w.topology == "flat"
    shares = {h: v for h, v in cal.host_shares.items() if h < hosts} if flat else None
    # each route written: beyond ROUTED_HOSTS the slow links are said (scope sim platform), not planted
    pairs = {(a, b): v for a, b, v in cal.link_shares if b < hosts} if flat and hosts <= ROUTED_HOSTS else None
    speed = f"{cal.flops_per_core:.6g}f" if cal.flops_per_core else "1Gf"  # DEFAULT_FLOPS
    cluster = Cluster(hosts, w.cores or cal.cores, link_rate, link_lat, w.topology, speed, shares, pairs)
    return cluster_xml(cluster, head, digits=9)


def computation_config(cal: dict | None) -> list[str]:
    """SMPI's settings that simulate a program's computation (kernels, applications): each burst
    between MPI calls timed on this host and run on a simulated host, this host's speed
    (smpi/host-speed) the platform's, so a burst takes as long as here. `cal`: the calibration a
    platform carries (its record), or None (a platform by hand: DEFAULT_FLOPS).

    A burst under CPU_THRESHOLD_S is not simulated: SMPI's own work and the engine's around a
    rank's wait for a window's start took 1.3-1.7 us of this host (SMPI's default threshold is
    1 us), so every window-timed start of app.ft came that late, past the 0.5 us a start may be,
    and no repetition was kept."""
    flops = (cal or {}).get("flops_per_core") or DEFAULT_FLOPS
    return ["smpi/simulate-computation:yes", f"smpi/host-speed:{float(flops):.0f}f",
            f"smpi/cpu-threshold:{CPU_THRESHOLD_S:g}"]  # fmt: skip
