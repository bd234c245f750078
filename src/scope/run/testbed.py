"""A multi-host testbed on one machine: N network namespaces ("hosts") joined by veth pairs
to a bridge, each host's egress optionally rate-limited with tc tbf, for running SCOPE across
a real (if virtual) network with MPI over TCP.

Addresses come from 198.18.0.0/15, the range RFC 2544 reserves for benchmarking.  Everything
created is recorded in a state file and removed by `down`; a failure half-way through `up`
removes what it had made."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from scope.errors import ENVIRONMENT, USAGE, ScopeError
from scope.run import testbed_faults as faults
from scope.store import now_utc

STATE_DIR = Path(os.environ.get("SCOPE_TESTBED_DIR", "/run/scope"))
NAME = re.compile(r"^[a-z][a-z0-9]{0,7}$")
MAX_HOSTS = 64


@dataclass
class Host:
    ns: str
    ip: str
    veth: str  # the root-side end, on the bridge


def _run(cmd: list[str], check: bool = True) -> subprocess.CompletedProcess:
    p = subprocess.run(cmd, capture_output=True, text=True)
    if check and p.returncode != 0:
        raise subprocess.CalledProcessError(p.returncode, cmd, p.stdout, p.stderr)
    return p


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    return _run(["ip", *args], check)


def require_root() -> None:
    if os.geteuid() != 0:
        raise ScopeError(
            "the testbed needs root (it creates network namespaces and qdiscs)",
            "run 'scope testbed' as root or with sudo; tests that need it are skipped",
            ENVIRONMENT,
        )
    for tool in ("ip", "tc"):
        if not shutil.which(tool):
            raise ScopeError(f"'{tool}' is not installed", "install iproute2", ENVIRONMENT)


def state_path(name: str) -> Path:
    return STATE_DIR / f"testbed-{name}.json"


def load(name: str) -> dict:
    p = state_path(name)
    if not p.exists():
        raise ScopeError(f"no testbed named '{name}' is up", "start one with 'scope testbed up --hosts 2'", USAGE)
    return json.loads(p.read_text())


def namespaces() -> list[str]:
    p = _ip("netns", "list", check=False)
    return [line.split()[0] for line in p.stdout.splitlines() if line.strip()]


def payload_rate_MBps(rate_bits: float | None, mtu: int) -> float | None:
    """TCP payload rate on a link shaped to rate_bits (SCOPE App. A): tbf counts whole
    Ethernet frames (MTU + 14 bytes of header); TCP with timestamps carries MTU - 52 bytes."""
    if not rate_bits:
        return None
    return rate_bits / 8 / 1e6 * (mtu - 52) / (mtu + 14)


def payload_ceiling_MBps(rate_bits: float, mtu: int, burst_bytes: float, payload_bytes: float) -> float:
    """The fastest payload rate a sample of payload_bytes can show on a tbf link: a bucket
    filled while the link idled (between samples, or while a loaded CPU ran something else)
    lets up to burst_bytes of frames through at once, so a sample is credited at most
    W / ((W_frames - burst) / rate), not the sustained payload rate.  A rate above this did
    not cross the link."""
    frames = payload_bytes * (mtu + 14) / (mtu - 52)
    return payload_bytes / max(frames - burst_bytes, 1.0) * rate_bits / 8 / 1e6


def parse_size(text: str) -> float:
    """A tc size (16kb, 1mb, 1500b, 32k): bytes, with tc's binary prefixes."""
    m = re.fullmatch(r"(\d+(?:\.\d+)?)\s*(k|m|g)?b?", text.strip().lower(), re.ASCII)
    if not m:
        raise ScopeError(f"'{text}' is not a size", "e.g. --burst 16kb")
    return float(m.group(1)) * {None: 1, "k": 1024, "m": 1024**2, "g": 1024**3}[m.group(2)]


def parse_rate(text: str, flag: str = "--rate") -> float:
    """A tc rate (100mbit, 1gbit, 12.5mbps): bits/s; `flag` is the option it came with."""
    m = re.fullmatch(r"(\d+(?:\.\d+)?)\s*(k|m|g)?(bit|bps)?", text.strip().lower(), re.ASCII)
    example = "e.g. --link-rate 0-1=25mbit" if flag == "--link-rate" else f"e.g. {flag} 100mbit or {flag} 1gbit"
    if not m:
        raise ScopeError(f"{flag}: '{text}' is not a rate", example)
    v = float(m.group(1)) * {None: 1, "k": 1e3, "m": 1e6, "g": 1e9}[m.group(2)]
    v = v * 8 if m.group(3) == "bps" else v
    if not 8000 <= v <= 1e12:  # tc's tbf needs a rate; below 1 kB/s a packet takes seconds
        raise ScopeError(f"{flag} {text} is outside 8kbit .. 1000gbit", example)
    return v


def up(
    name: str,
    hosts: int,
    rate: str | None = None,
    burst: str = "16kb",
    mtu: int = 1500,
    link_rates: list[str] | None = None,
    throttles: list[str] | None = None,
) -> dict:
    """N hosts on a bridge; `link_rates` (I-J=RATE) and `throttles` (I=SHARE) plant a slow link
    and a slow host (run/testbed_faults.py)."""
    if not NAME.match(name):
        raise ScopeError(f"testbed name '{name}' is not allowed", "use 1-8 lowercase letters and digits, e.g. scope")
    if not 2 <= hosts <= MAX_HOSTS:
        raise ScopeError(f"a testbed needs 2 to {MAX_HOSTS} hosts, not {hosts}", "e.g. --hosts 2")
    if not 576 <= mtu <= 9000:
        raise ScopeError(f"MTU {mtu} is out of range", "use 576 to 9000")
    rate_bits = parse_rate(rate) if rate else None
    slow_links = faults.parse_links(link_rates, hosts, parse_rate)
    slow_hosts = faults.parse_throttles(throttles, hosts)
    require_root()
    bridge = f"{name}-br"
    _refuse_taken(name, hosts, bridge)
    made: list[Host] = []
    created: list[tuple[str, str]] = []  # what this call made, in order: only that is undone

    def make(kind: str, obj: str, *cmd: str) -> None:
        # noted before it is made: a Ctrl-C during the command may still let it finish, and
        # undoing what does not exist is harmless (the checks above rule out foreign names)
        created.append((kind, obj))
        _ip(*cmd)

    try:
        make("link", bridge, "link", "add", bridge, "type", "bridge")
        _ip("link", "set", bridge, "up")
        for i in range(hosts):
            h = Host(f"{name}-h{i}", f"198.18.0.{i + 1}", f"{name}-v{i}")
            make("netns", h.ns, "netns", "add", h.ns)
            made.append(h)
            _plug(h, bridge, mtu, (rate, burst), make)
        faults.shape_links([h.__dict__ for h in made], slow_links, rate, burst, _run)
        procs = faults.throttle(name, slow_hosts)
    except subprocess.CalledProcessError as e:
        _undo(created)
        faults.release(name)
        # tc follows its complaint with a usage screen: quote the complaint
        text = [ln.strip() for ln in ((e.stderr or "") + "\n" + (e.stdout or "")).splitlines() if ln.strip()]
        detail = [ln for ln in text if re.match(r"^(\w+: |Error|RTNETLINK|Cannot|Illegal|illegal)", ln)] or text
        what = " ".join(e.cmd[:6])
        raise ScopeError(
            f"could not build the testbed: '{what} ...' said: {detail[0] if detail else e}",
            "check --rate/--burst (e.g. 100mbit, 16kb); what this command made was removed",
        ) from None
    except BaseException:  # Ctrl-C or SIGTERM half-way (or a refused throttle): take back what was made
        _undo(created)
        faults.release(name)
        raise
    state = {
        "name": name,
        "hosts": [h.__dict__ for h in made],
        "bridge": bridge,
        "rate": rate,
        "rate_bits": rate_bits,
        "burst": burst,
        "mtu": mtu,
        "payload_MBps": payload_rate_MBps(rate_bits, mtu),
        "link_rates": {f"{i}-{j}": r for (i, j), r in slow_links.items()},
        "throttles": {str(h): share for h, share in slow_hosts.items()},
        "throttle_procs": procs,
        "created_utc": now_utc(),
    }
    STATE_DIR.mkdir(parents=True, exist_ok=True)
    state_path(name).write_text(json.dumps(state, indent=1))
    return state


def _refuse_taken(name: str, hosts: int, bridge: str) -> None:
    """Refuses a name whose testbed, bridge or links exist already (a testbed is never built
    over one, nor over links this tool did not make)."""
    taken = [ns for ns in namespaces() if ns.startswith(f"{name}-h")]
    if taken or state_path(name).exists() or _ip("link", "show", bridge, check=False).returncode == 0:
        raise ScopeError(
            f"a testbed named '{name}' already exists ({', '.join(taken) or bridge})",
            f"take it down with 'scope testbed down --name {name}' or choose another --name",
        )
    wanted = {f"{name}-v{i}" for i in range(hosts)}
    foreign = sorted(wanted & set(_links()))
    if foreign:
        raise ScopeError(
            f"link {foreign[0]} exists and is not part of a testbed this tool made",
            f"remove it yourself, or choose another --name than '{name}'",
        )


def _plug(h: Host, bridge: str, mtu: int, shaping: tuple[str | None, str], make) -> None:
    """Host h's veth pair onto the bridge, its end in h's namespace addressed and up, shaped at
    its egress when a rate is given (`shaping`: rate, burst); `make` notes what it creates."""
    rate, burst = shaping
    make("link", h.veth, "link", "add", h.veth, "mtu", str(mtu), "type", "veth", "peer", "name", "eth0", "netns", h.ns)
    _ip("link", "set", h.veth, "master", bridge)
    _ip("link", "set", h.veth, "up")
    _ip("-n", h.ns, "link", "set", "lo", "up")
    _ip("-n", h.ns, "link", "set", "eth0", "mtu", str(mtu))
    _ip("-n", h.ns, "addr", "add", f"{h.ip}/24", "dev", "eth0")
    _ip("-n", h.ns, "link", "set", "eth0", "up")
    if rate:
        # shaped at each host's egress: every direction of every path passes one shaper
        tbf = ["qdisc", "add", "dev", "eth0", "root", "tbf", "rate", rate, "burst", burst, "latency", "50ms"]
        _run(["tc", "-n", h.ns, *tbf])


def _links() -> list[str]:
    return re.findall(r"^\d+: ([^:@\s]+)[@:]", _ip("-o", "link", "show", check=False).stdout, re.M)


def _undo(created: list[tuple[str, str]]) -> None:
    """Remove, newest first, exactly the objects one `up` made (a namespace takes its veth)."""
    for kind, obj in reversed(created):
        if kind == "netns":
            _ip("netns", "del", obj, check=False)
        else:
            _ip("link", "del", obj, check=False)


def _remove(name: str) -> list[str]:
    """Remove every namespace and root-side link of testbed `name`; returns what went."""
    removed = []
    for ns in namespaces():
        if re.fullmatch(rf"{re.escape(name)}-h\d+", ns):
            _ip("netns", "del", ns, check=False)  # takes the veth pair with it
            removed.append(ns)
    for link in (x for x in _links() if re.fullmatch(rf"{re.escape(name)}-(?:v\d+|br)", x)):
        if _ip("link", "del", link, check=False).returncode == 0:
            removed.append(link)
    return removed


def down(name: str) -> list[str]:
    require_root()
    removed = _remove(name) + faults.release(name)
    had_state = state_path(name).exists()
    state_path(name).unlink(missing_ok=True)
    if not removed and not had_state:
        raise ScopeError(f"no testbed named '{name}' to take down", "see 'scope testbed status'")
    return removed


def status(name: str) -> str:
    live = [ns for ns in namespaces() if ns.startswith(f"{name}-h")]
    if not state_path(name).exists():
        return f"no testbed '{name}' is up" + (f" (but namespaces {', '.join(live)} exist: run down)" if live else "")
    st = load(name)
    lines = [
        f"testbed '{name}': {len(st['hosts'])} hosts on bridge {st['bridge']}, MTU {st['mtu']}, "
        + (
            f"egress shaped to {st['rate']} (burst {st['burst']}): TCP payload ground truth "
            f"{st['payload_MBps']:.2f} MB/s"
            if st["rate"]
            else "unshaped"
        )
        + f"; up since {st['created_utc']}"
    ]
    lines += faults.describe(st)
    for h in st["hosts"]:
        ok = h["ns"] in live
        lines.append(f"  {h['ns']:<12} {h['ip']:<14} {'up' if ok else 'MISSING'}")
    return "\n".join(lines)


def fits(ranks: int, ppn: int, hosts: int) -> bool:
    """Whether `ranks` can be placed `ppn` to a host on `hosts` hosts: whole hosts only."""
    return ranks % ppn == 0 and ranks // ppn <= hosts


def hosts_used(state: dict, ranks: int) -> int:
    """How many of the testbed's hosts a job of `ranks` uses: all of them, or ranks / ppn when
    the run asks for a number of processes per host (state["ppn"])."""
    ppn, hosts = state.get("ppn"), len(state["hosts"])
    if not ppn:
        return hosts
    if not fits(ranks, ppn, hosts):
        raise ScopeError(
            f"{ranks} ranks cannot be placed {ppn} per host on testbed '{state['name']}' ({hosts} hosts)",
            f"use a rank count that is a multiple of {ppn}, at most {ppn * hosts}",
            USAGE,
        )
    return ranks // ppn


def launch_segments(state: dict, ranks: int, exe: str, args: list[str]) -> list[str]:
    """An MPMD command line for hydra: rank i runs in host i mod N, through `ip netns exec`
    (N: the hosts used), the round-robin MPICH's own clique map assumes (testbed_env)."""
    argv: list[str] = []
    hosts = state["hosts"][: hosts_used(state, ranks)]
    for r in range(ranks):
        if argv:
            argv.append(":")
        h = r % len(hosts)
        argv += ["-n", "1", *faults.segment_command(state, h, ["ip", "netns", "exec", hosts[h]["ns"], exe, *args])]
    return argv


def testbed_env(state: dict, ranks: int) -> dict[str, str]:
    """MPICH crosses namespaces over TCP only when UCX is told to use TCP and MPICH does not
    take ranks on one machine for neighbours over /dev/shm.  By default every rank is its own
    node (MPIR_CVAR_NOLOCAL).  With processes per host, ranks sharing a host share memory as on
    a real node, and MPICH is told the true layout: MPIR_CVAR_NUM_CLIQUES=N puts rank i on node
    i mod N (MPICH's nodemap), as launch_segments places it, so its hierarchy and
    comm_avg_ppn see what the hardware does."""
    env = {"UCX_TLS": "tcp,self"}
    if not state.get("ppn"):
        return {**env, "MPIR_CVAR_NOLOCAL": "1"}
    return {**env, "MPIR_CVAR_NOLOCAL": "0", "MPIR_CVAR_NUM_CLIQUES": str(hosts_used(state, ranks))}
