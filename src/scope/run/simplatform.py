"""A SimGrid platform file read before anything is built or launched (`scope run --sim`): its
hosts with their cores, and every value SimGrid would abort on in the middle of a simulation
checked first (issue 69).  SimGrid reads a platform at start but finds a negative or infinite
rate, or two hosts with no route between them, only when a message crosses it: by then a run
exists and the job ends with a bare "Aborted".

What is checked, each with the line to fix:
- the DOCTYPE: SimGrid's own DTD, named by its address (a DOCTYPE naming a file, an inline
  subset or none at all makes SimGrid's parser refuse or read another file);
- host ids: unique, no whitespace or control character (the hostfile is one host a line);
- rates (bandwidth, bw, bb_bw, speed) finite and above zero; latencies finite and not negative;
- a cluster's radical: ranges `A-B` or numbers, at most MAX_HOSTS hosts in all, counted
  before any is named;
- routes: in a zone routed Full, Floyd or Dijkstra that holds hosts only, every pair of its
  hosts has a path (SimGrid: "no connecting path between these two hosts").

What only SimGrid can judge (its settings, a zone it routes itself) is asked of SimGrid in a
pre-flight (run/sim.py, preflight) before the run is stored."""

from __future__ import annotations

import functools
import hashlib
import json
import math
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

from scope.errors import USAGE, ScopeError

MAX_PLATFORM_BYTES = 64 << 20
MAX_HOSTS = 1 << 18  # 262,144 hosts: past SimGrid's largest published runs, and a bound on memory here
MAX_ROUTED_PAIRS = 1 << 22  # a Full zone's pairs checked (2,048 hosts); larger zones are SimGrid's to judge
HINT = "write one with 'scope sim platform', or fix the line named"
# SimGrid's DTD, by the addresses SimGrid itself accepts (it never fetches them)
DOCTYPE = re.compile(
    rb"<!DOCTYPE\s+platform\s+SYSTEM\s+[\"'](?:https?://simgrid\.org/simgrid\.dtd|"
    rb"https?://simgrid\.gforge\.inria\.fr/simgrid/simgrid\.dtd)[\"']\s*>"
)
ANY_DOCTYPE = re.compile(rb"<!DOCTYPE", re.IGNORECASE)
HOST_ID = re.compile(r"[A-Za-z0-9_.:@+\-]{1,255}")
NUMBER = re.compile(r"\s*([+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|[+-]?(?:inf|infinity|nan))\s*([A-Za-z]*)\s*")
PREFIX = ("", "k", "K", "M", "G", "T", "P", "E", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei")
UNITS = {
    "rate": {p + u for p in PREFIX for u in ("Bps", "bps")},
    "speed": {p + u for p in PREFIX for u in ("f", "flops")},
    "time": {"s", "ms", "us", "ns", "ps", "m", "h", "d", "w"},
}
# (element, attribute) -> the kind of value it holds
VALUES = {
    ("link", "bandwidth"): "rate", ("cluster", "bw"): "rate", ("cluster", "bb_bw"): "rate",
    ("cluster", "loopback_bw"): "rate", ("backbone", "bandwidth"): "rate", ("host", "speed"): "speed",
    ("cluster", "speed"): "speed", ("link", "latency"): "time", ("cluster", "lat"): "time",
    ("cluster", "bb_lat"): "time", ("cluster", "loopback_lat"): "time", ("backbone", "latency"): "time",
}  # fmt: skip
MARK = "scope-calibration"  # the comment a calibrated platform carries its calibration in (run/simcal.py)
CALIBRATION = re.compile(rb"<!-- " + MARK.encode() + rb" (\{.*?\}) -->", re.DOTALL)
ROUTED = {"Full", "Floyd", "Dijkstra", "DijkstraCache"}


@dataclass(frozen=True)
class Platform:
    path: str
    sha256: str
    hosts: list[str]  # in the file's order
    cores: list[int]  # each host's cores
    calibration: dict | None = None  # where its values came from (scope sim platform --from: run/simcal.py)


def refuse(path: str, what: str, hint: str = HINT) -> ScopeError:
    return ScopeError(f"--sim {path}: {what}", hint, USAGE)


def read_platform(path: str) -> Platform:
    """The platform at `path`, checked; refused with the reason and the fix otherwise."""
    p = Path(path)
    try:
        data = p.read_bytes() if p.is_file() and p.stat().st_size <= MAX_PLATFORM_BYTES else None
    except OSError as e:
        raise ScopeError(f"cannot read --sim {path}: {e.strerror}", "give a SimGrid platform file", USAGE) from None
    if data is None:
        raise ScopeError(f"--sim {path} is not a regular file of at most 64 MiB", "give a SimGrid platform file", USAGE)
    return _checked(path, data)


@functools.lru_cache(maxsize=2)
def _checked(path: str, data: bytes) -> Platform:
    """The checks of read_platform, once a content: a run reads its platform before it builds
    and again when it launches, and a 64 MiB platform's XML is parsed once."""
    head = data[: data.find(b"<platform")] if b"<platform" in data else data
    if not DOCTYPE.search(head) or len(ANY_DOCTYPE.findall(head)) != 1:
        raise refuse(
            path,
            "its DOCTYPE is not SimGrid's (SimGrid reads the platform only under "
            '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">, with no inline declarations)',
            "put that line after the XML declaration",
        )
    try:
        root = ET.fromstring(data)
    except ET.ParseError as e:
        raise ScopeError(f"--sim {path} is not XML ({e})", "write one with 'scope sim platform'", USAGE) from None
    if root.tag != "platform":
        raise refuse(path, f"no SimGrid platform (<{root.tag}>)")
    _check_values(path, root)
    hosts, cores = _hosts(path, root)
    if not hosts:
        raise ScopeError(f"--sim {path} declares no host", "write one with 'scope sim platform'", USAGE)
    _check_routes(path, root)
    return Platform(path, hashlib.sha256(data).hexdigest(), hosts, cores, calibration_of(data))


def value_of(text: str, kind: str) -> float | None:
    """A SimGrid quantity's value in its base unit's scale (only its sign and finiteness are
    judged here), or None when it is no number with a unit of that kind."""
    m = NUMBER.fullmatch(text)
    if not m or (m.group(2) and m.group(2) not in UNITS[kind]):
        return None
    return float(m.group(1))


def _check_values(path: str, root: ET.Element) -> None:
    for el in root.iter():
        for attr, raw in el.attrib.items():
            kind = VALUES.get((el.tag, attr))
            if kind is None:
                continue
            for part in raw.split(","):  # a host's speeds per power state, a wifi link's rates
                v = value_of(part, kind)
                where = f"<{el.tag} id={el.get('id', '?')!r}> {attr}={raw[:40]!r}"
                if v is None:
                    units = (
                        "e.g. 10Gbps or 1.25GBps" if kind == "rate" else "e.g. 1Gf" if kind == "speed" else "e.g. 1us"
                    )
                    raise refuse(path, f"{where} is not a {kind} ({units})")
                if not math.isfinite(v) or v < 0 or (v == 0 and kind != "time"):
                    need = "finite and not negative" if kind == "time" else "finite and above zero"
                    raise refuse(path, f"{where}: a {kind} must be {need}")


def _radical(path: str, c: ET.Element) -> list[tuple[int, int]]:
    """A cluster's radical as (first, last) ranges, refused unless each is `N` or `A-B`, A <= B."""
    out = []
    for part in (c.get("radical") or "").split(","):
        m = re.fullmatch(r"\s*(\d{1,12})\s*(?:-\s*(\d{1,12})\s*)?", part)
        if not m or (m.group(2) and int(m.group(2)) < int(m.group(1))):
            raise refuse(path, f"<cluster id={c.get('id', '?')!r}> radical={part[:40]!r} is no range",
                         "e.g. radical=\"0-63\" or \"0-3,8-11\"")  # fmt: skip
        out.append((int(m.group(1)), int(m.group(2) or m.group(1))))
    return out


def _hosts(path: str, root: ET.Element) -> tuple[list[str], list[int]]:
    """Every host, explicit or a cluster's, with its cores; counted before a cluster's are named."""
    clusters = [(c, _radical(path, c)) for c in root.iter("cluster")]
    count = sum(1 for _ in root.iter("host")) + sum(b - a + 1 for _, r in clusters for a, b in r)
    if count > MAX_HOSTS:
        raise refuse(path, f"declares {count:,} hosts, more than SCOPE simulates ({MAX_HOSTS:,})",
                     "describe fewer hosts")  # fmt: skip
    hosts, cores = [], []
    for h in root.iter("host"):
        hosts.append(h.get("id") or "")
        cores.append(_cores(path, h))
    for c, ranges in clusters:
        n = _cores(path, c)
        for a, b in ranges:
            for i in range(a, b + 1):
                hosts.append(f"{c.get('prefix', '')}{i}{c.get('suffix', '')}")
                cores.append(n)
    seen: set[str] = set()
    for h in hosts:
        if not HOST_ID.fullmatch(h):
            raise refuse(path, f"host id {h[:40]!r} is empty, too long, or holds a space or control character",
                         "name hosts with letters, digits and . _ - : @ +")  # fmt: skip
        if h in seen:
            raise refuse(path, f"two hosts are named {h!r}", "give every host its own id")
        seen.add(h)
    return hosts, cores


def _cores(path: str, el: ET.Element) -> int:
    raw = el.get("core", "1")
    if not re.fullmatch(r"\s*\d{1,6}\s*", raw) or int(raw) < 1:
        raise refuse(path, f"<{el.tag} id={el.get('id', '?')!r}> core={raw[:20]!r} is not a count of cores (1 or more)")
    return int(raw)


def _check_routes(path: str, root: ET.Element) -> None:
    """In a zone SimGrid routes from its <route>s (Full, Floyd, Dijkstra) holding hosts and
    no sub-zones, every ordered pair of hosts needs a path; a route is symmetrical unless it
    says otherwise."""
    for z in [*root.iter("zone"), *root.iter("AS")]:
        hosts = [h.get("id") for h in z.findall("host")]
        if z.get("routing") not in ROUTED or len(hosts) < 2 or z.findall("zone") or z.findall("cluster"):
            continue
        if len(hosts) ** 2 > MAX_ROUTED_PAIRS:
            continue
        edges: dict[str, set[str]] = {}
        for r in z.findall("route"):
            a, b = r.get("src"), r.get("dst")
            edges.setdefault(a, set()).add(b)
            if r.get("symmetrical", "YES").upper() != "NO":
                edges.setdefault(b, set()).add(a)
        full = z.get("routing") == "Full"
        for a in hosts:
            reach = edges.get(a, set()) if full else _reachable(a, edges)
            missing = next((b for b in hosts if b != a and b not in reach), None)
            if missing is not None:
                raise refuse(
                    path,
                    f"zone {z.get('id', '?')!r} has no route from host {a!r} to host {missing!r}",
                    "add a <route src=... dst=...> between them",
                )


def _reachable(a: str, edges: dict[str, set[str]]) -> set[str]:
    seen, todo = {a}, [a]
    while todo:
        for b in edges.get(todo.pop(), ()):
            if b not in seen:
                seen.add(b)
                todo.append(b)
    return seen


def calibration_of(data: bytes) -> dict | None:
    """The calibration a platform file carries (run/simcal.py writes it in a comment), or None."""
    m = CALIBRATION.search(data[: 1 << 20])
    if not m:
        return None
    try:
        value = json.loads(m.group(1))
    except ValueError:
        return None
    return value if isinstance(value, dict) else None
