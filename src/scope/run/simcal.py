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

from scope.analysis.simcal import Calibration, finite_calibration, smpi_config
from scope.errors import USAGE, ScopeError
from scope.run.sim import explicit_flat, rate_bps, time_s
from scope.run.simplatform import MARK

SCALE = re.compile(r"x(\d+(?:\.\d+)?(?:e-?\d+)?)")


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
    whole rate); measured between hosts, it is the hosts' links. --rate and --latency change
    the links, so both kinds of route."""
    lat_s, rate_Bps = cal.latency_us * 1e-6, cal.rate_MBps * 1e6
    return _scaled(w.latency, lat_s, time_s, "latency") / 2, _scaled(w.rate, rate_Bps, rate_bps, "rate")


def calibrated_xml(cal: Calibration, w: WhatIf) -> str:
    """The platform: hosts of the calibration's (or the what-if's) count and cores, links and
    loopback as link_values says, SMPI's factors in its <config>, the calibration in a comment."""
    why = finite_calibration(cal)
    if why:
        raise ScopeError(f"cannot calibrate: {why}", "measure p2p.pingpong again, with more sizes", USAGE)
    hosts = w.hosts or max(cal.hosts, 2)
    cores = w.cores or cal.cores
    if w.topology not in ("flat", "fattree"):
        raise ScopeError(f"--topology {w.topology!r} is not known", "flat or fattree", USAGE)
    if w.topology == "fattree" and hosts > 16 and hosts % 16:
        raise ScopeError(
            f"a two-level fat tree of {hosts} hosts", "give a multiple of 16 hosts (or fewer than 16)", USAGE
        )
    link_lat, link_rate = link_values(cal, w)
    speed = f"{cal.flops_per_core:.6g}f" if cal.flops_per_core else "1Gf"
    config = "".join(f'    <prop id="{k}" value="{v}"/>\n' for k, v in smpi_config(cal).items())
    record = {**cal.record(), "what_if": {k: v for k, v in vars(w).items() if v is not None}}
    # JSON never holds "--" outside a string; inside one it is escaped, so the comment stays XML
    text = json.dumps(record, sort_keys=True, allow_nan=False).replace("--", "-\\u002d")
    common = (
        f'prefix="node-" suffix="" radical="0-{hosts - 1}" speed="{speed}" core="{cores}" '
        f'bw="{link_rate:.9g}Bps" lat="{link_lat:.9g}s"'
    )
    shares = {h: v for h, v in cal.host_shares.items() if h < hosts}
    if shares and w.topology == "flat":  # the screen's slow hosts: each host's own link
        body = explicit_flat(hosts, cores, speed, link_rate, link_lat, shares)
    elif w.topology == "flat":
        backbone = f'bb_bw="{link_rate * hosts:.9g}Bps" bb_lat="0s" sharing_policy="SPLITDUPLEX"'
        body = f'  <cluster id="cluster" {common} {backbone}/>\n'
    else:
        per = min(hosts, 16)
        body = (
            f'  <cluster id="cluster" {common} topology="FAT_TREE" '
            f'topo_parameters="2;{per},{hosts // per};1,{hosts // per};1,1"/>\n'
        )
    return (
        "<?xml version='1.0'?>\n"
        '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">\n'
        '<platform version="4.1">\n'
        f"  <!-- {MARK} {text} -->\n"
        f"  <config>\n{config}  </config>\n"
        f"{body}"
        "</platform>\n"
    )
