"""The cluster a run ran on, from the engine's per-node description (each node described by its
own first rank, not assumed from rank 0's): nodes grouped into kinds, so a heterogeneous
cluster reads as what it is.  Two nodes are of one kind when their processor, core count,
memory (to the GiB: kernels reserve slightly different amounts), caches and network link
speeds agree."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class NodeKind:
    label: str
    hosts: list[str] = field(default_factory=list)


def _size(n: int) -> str:
    return f"{n >> 20} MiB" if n >= 1 << 20 else f"{n >> 10} KiB"


def node_kinds(nodes: list[dict]) -> list[NodeKind]:
    kinds: dict[tuple, NodeKind] = {}
    for n in nodes:
        caches = n.get("cache_bytes") or {}
        speeds = sorted({x["speed_mbps"] for x in n.get("nics") or () if x.get("speed_mbps")})
        gib = round((n.get("memory_bytes") or 0) / 2**30)
        key = (n.get("cpu_model"), n.get("cores"), gib, tuple(sorted(caches.items())), tuple(speeds))
        if key not in kinds:
            parts = [n.get("cpu_model") or "unknown processor", f"{n.get('cores')} cores", f"{gib} GiB"]
            parts += [f"L3 {_size(caches['l3'])}"] if caches.get("l3") else []
            parts += [f"links {', '.join(f'{s / 1000:g} Gbit/s' for s in speeds)}"] if speeds else []
            kinds[key] = NodeKind(", ".join(parts))
        kinds[key].hosts.append(n.get("host") or "?")
    return list(kinds.values())


def cluster_text(nodes: list[dict]) -> str | None:
    """One line: each kind of node, how many and which."""
    kinds = node_kinds(nodes)
    if not kinds:
        return None
    many = "" if len(kinds) == 1 else f"{len(kinds)} kinds of node: "
    return many + "; ".join(
        f"{len(k.hosts)} x {k.label} ({', '.join(k.hosts[:4])}{'...' if len(k.hosts) > 4 else ''})" for k in kinds
    )
