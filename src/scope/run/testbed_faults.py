"""Faults planted in a testbed, the ground truth that cluster screening must find (issue 43):

- a slow link: `--link-rate I-J=RATE` shapes the traffic between hosts I and J, both ways, to
  RATE (tc: an htb root on each of the two hosts' eth0, a u32 filter on the other's address
  sending it to a class whose tbf has RATE; everything else to a class whose tbf has the
  testbed's --rate, or is not shaped);
- a slow host: `--throttle I=SHARE` gives every process of host I at most SHARE of one core
  (a cgroup's CFS quota: cgroup v2's cpu.max or v1's cpu.cfs_quota_us; SHARE x 100 ms of each
  100 ms period), as a node whose CPU runs slow: each of the host's ranks is started in it.

What is planted is recorded in the testbed's state, and so in every run across it."""

from __future__ import annotations

import os
import re
from pathlib import Path

from scope.errors import USAGE, ScopeError

CGROUP_ROOTS = (Path("/sys/fs/cgroup"), Path("/sys/fs/cgroup/cpu"))  # v2 (unified), v1's cpu controller
PERIOD_US = 100_000
# ASCII digits only (re.ASCII): '０-1' read as host 0 where every other option refuses it (issue 58)
LINK = re.compile(r"^(\d+)-(\d+)=(\S+)$", re.ASCII)
THROTTLE = re.compile(r"^(\d+)=(0(?:\.\d+)?|1(?:\.0+)?)$", re.ASCII)


def parse_links(specs: list[str] | None, hosts: int, parse_rate) -> dict[tuple[int, int], str]:
    out: dict[tuple[int, int], str] = {}
    for spec in specs or []:
        m = LINK.match(spec)
        i, j = (int(m.group(1)), int(m.group(2))) if m else (-1, -1)
        if not m or i == j or max(i, j) >= hosts:
            raise ScopeError(
                f"--link-rate '{spec}' is not I-J=RATE with two hosts of the {hosts}",
                "e.g. --link-rate 0-1=25mbit (hosts count from 0)",
                USAGE,
            )
        parse_rate(m.group(3), "--link-rate")  # refused there when it is no rate
        key = (min(i, j), max(i, j))
        if key in out and out[key] != m.group(3):
            raise ScopeError(
                f"--link-rate gives the link {key[0]}-{key[1]} two rates ({out[key]}, {m.group(3)})",
                "give each link one rate",
                USAGE,
            )
        out[key] = m.group(3)
    return out


def parse_throttles(specs: list[str] | None, hosts: int) -> dict[int, float]:
    out: dict[int, float] = {}
    for spec in specs or []:
        m = THROTTLE.match(spec)
        if not m or int(m.group(1)) >= hosts or not 0.01 <= float(m.group(2)) <= 1:
            raise ScopeError(
                f"--throttle '{spec}' is not I=SHARE with a host of the {hosts} and a share of a core in 0.01..1",
                "e.g. --throttle 2=0.25 (host 2 gets a quarter of one core)",
                USAGE,
            )
        host, share = int(m.group(1)), float(m.group(2))
        if host in out and out[host] != share:
            raise ScopeError(
                f"--throttle gives host {host} two shares ({out[host]:g}, {share:g})", "give each host one share", USAGE
            )
        out[host] = share
    return out


def shape_links(hosts: list[dict], links: dict[tuple[int, int], str], rate: str | None, burst: str, run) -> None:
    """On each host with a slow link: htb at the root, class 1:1 for the rest (tbf at the
    testbed's rate, or none), 1:2 + k for each slow link (tbf at its rate), u32 filters by the
    peer's address.  `run` runs one command (the testbed's, raising on failure)."""
    per_host: dict[int, list[tuple[int, str]]] = {}
    for (i, j), r in links.items():
        per_host.setdefault(i, []).append((j, r))
        per_host.setdefault(j, []).append((i, r))
    for h, peers in sorted(per_host.items()):
        tc = ["tc", "-n", hosts[h]["ns"]]
        run([*tc, "qdisc", "del", "dev", "eth0", "root"], check=False)  # the plain tbf, if any
        run([*tc, "qdisc", "add", "dev", "eth0", "root", "handle", "1:", "htb", "default", "1", "r2q", "100000"])
        classes = [(1, rate)] + [(2 + k, r) for k, (_, r) in enumerate(peers)]
        for cls, r in classes:
            # htb itself only forwards (a ceiling far above any veth); the class's tbf shapes
            run([*tc, "class", "add", "dev", "eth0", "parent", "1:", "classid", f"1:{cls}", "htb", "rate", "100gbit"])
            if r:
                tbf = ["tbf", "rate", r, "burst", burst, "latency", "50ms"]
                run([*tc, "qdisc", "add", "dev", "eth0", "parent", f"1:{cls}", "handle", f"{10 + cls}:", *tbf])
        for k, (peer, _) in enumerate(peers):
            match = ["u32", "match", "ip", "dst", f"{hosts[peer]['ip']}/32", "flowid", f"1:{2 + k}"]
            run([*tc, "filter", "add", "dev", "eth0", "parent", "1:", "protocol", "ip", "prio", "1", *match])


def cgroup_dir(name: str, host: int) -> Path | None:
    """Where host `host`'s throttle lives: under cgroup v2 when it has the cpu controller, else v1's."""
    v2, v1 = CGROUP_ROOTS
    if (v2 / "cgroup.controllers").exists() and "cpu" in (v2 / "cgroup.controllers").read_text().split():
        return v2 / f"scope-{name}-h{host}"
    if (v1 / "cpu.cfs_quota_us").exists():
        return v1 / f"scope-{name}-h{host}"
    return None


def throttle(name: str, throttles: dict[int, float]) -> dict[str, str]:
    """Creates the cgroups; returns {host index: its cgroup.procs path} for launch_segments."""
    out: dict[str, str] = {}
    for h, share in sorted(throttles.items()):
        d = cgroup_dir(name, h)
        if d is None:
            raise ScopeError(
                "this machine offers no cgroup with a CPU quota (cgroup v2 cpu.max or v1 cpu.cfs_quota_us)",
                "leave --throttle out here",
            )
        d.mkdir(exist_ok=True)
        quota = int(share * PERIOD_US)
        if (d / "cpu.max").exists():
            (d / "cpu.max").write_text(f"{quota} {PERIOD_US}\n")
        else:
            (d / "cpu.cfs_period_us").write_text(f"{PERIOD_US}\n")
            (d / "cpu.cfs_quota_us").write_text(f"{quota}\n")
        out[str(h)] = str(d / "cgroup.procs")
    return out


def release(name: str) -> list[str]:
    """Removes testbed `name`'s cgroups (their processes, if any are left, go back to the root)."""
    removed = []
    for root in CGROUP_ROOTS:
        for d in root.glob(f"scope-{name}-h*") if root.exists() else []:
            try:
                for pid in (d / "cgroup.procs").read_text().split():
                    with open(root / "cgroup.procs", "w") as f:
                        f.write(pid)
                os.rmdir(d)
                removed.append(str(d))
            except OSError:
                continue
    return removed


def segment_command(state: dict, host: int, command: list[str]) -> list[str]:
    """The command that starts one rank on `host`: in its throttle's cgroup first, if it has one."""
    procs = (state.get("throttle_procs") or {}).get(str(host))
    if not procs:
        return command
    return ["sh", "-c", 'echo $$ > "$0" && exec "$@"', procs, *command]


def describe(state: dict) -> list[str]:
    lines = []
    hosts = state["hosts"]
    for key, r in sorted((state.get("link_rates") or {}).items()):
        i, j = (int(x) for x in key.split("-"))
        lines.append(f"  slow link: {hosts[i]['ns']} <-> {hosts[j]['ns']} shaped to {r} both ways")
    for h, share in sorted((state.get("throttles") or {}).items()):
        lines.append(f"  throttled host: {hosts[int(h)]['ns']} gets {share:g} of one core (CFS quota)")
    return lines
