"""The cluster a run ran on, from the engine's per-node description (each node described by its
own first rank, not assumed from rank 0's): nodes grouped into kinds, so a heterogeneous
cluster reads as what it is.  Two nodes are of one kind when their processor, core count,
memory (to the GiB: kernels reserve slightly different amounts), caches and network link
speeds agree."""

from __future__ import annotations

from dataclasses import dataclass, field

from scope.analysis.kernels import rate_of
from scope.model import Context, Point


@dataclass
class NodeKind:
    label: str
    hosts: list[str] = field(default_factory=list)
    nodes: list[int] = field(default_factory=list)  # the engine's node ids (a node's first rank)


def _key(n: dict) -> tuple:
    caches = n.get("cache_bytes") or {}
    speeds = sorted({x["speed_mbps"] for x in n.get("nics") or () if x.get("speed_mbps")})
    gib = round((n.get("memory_bytes") or 0) / 2**30)
    return (n.get("cpu_model"), n.get("cores"), gib, tuple(sorted(caches.items())), tuple(speeds))


def _size(n: int) -> str:
    return f"{n >> 20} MiB" if n >= 1 << 20 else f"{n >> 10} KiB"


def node_kinds(nodes: list[dict]) -> list[NodeKind]:
    kinds: dict[tuple, NodeKind] = {}
    for n in nodes:
        key = _key(n)
        caches, gib, speeds = n.get("cache_bytes") or {}, key[2], key[4]
        if key not in kinds:
            parts = [n.get("cpu_model") or "unknown processor", f"{n.get('cores')} cores", f"{gib} GiB"]
            parts += [f"L3 {_size(caches['l3'])}"] if caches.get("l3") else []
            parts += [f"links {', '.join(f'{s / 1000:g} Gbit/s' for s in speeds)}"] if speeds else []
            kinds[key] = NodeKind(", ".join(parts))
        kinds[key].hosts.append(n.get("host") or "?")
        kinds[key].nodes.append(n.get("node"))
    return list(kinds.values())


def _by_node(kinds: list[NodeKind]) -> dict[int, int]:
    """Node id -> the index of its kind."""
    return {node: i for i, k in enumerate(kinds) for node in k.nodes}


def cluster_text(nodes: list[dict]) -> str | None:
    """One line: each kind of node, how many and which."""
    kinds = node_kinds(nodes)
    if not kinds:
        return None
    many = "" if len(kinds) == 1 else f"{len(kinds)} kinds of node: "
    return many + "; ".join(
        f"{len(k.hosts)} x {k.label} ({', '.join(k.hosts[:4])}{'...' if len(k.hosts) > 4 else ''})" for k in kinds
    )


@dataclass
class KindFigure:
    kind: str
    nodes: int
    per_node: float  # the figure per node of this kind
    unit: str


def per_kind(p: Point, ctx: Context | None) -> list[KindFigure]:
    """A node-level point of a run across nodes of different kinds, per kind: each rank's own
    rate (its share of the bytes, or of the flops, over its own time), summed over the kind's
    ranks and divided by its nodes.  Empty when the run's nodes are of one kind."""
    own = (p.record.get("per_rank") or {}).get("own_us_median") or []
    kinds = node_kinds(ctx.nodes) if ctx else []
    if not own or len(kinds) < 2:
        return []
    procs, kind_of = len(own), _by_node(kinds)
    rate = rate_of(p)
    total, unit = (rate[0] * p.median, rate[1]) if rate else ((p.bytes_per_op or 0), "MB/s")
    share = total / procs  # per rank, in the unit's numerator per us
    sums: dict[int, float] = {}
    nodes: dict[int, set] = {}
    for pl in ctx.placement:
        if pl.rank < procs and own[pl.rank] and pl.node in kind_of:
            k = kind_of[pl.node]
            sums[k] = sums.get(k, 0.0) + share / own[pl.rank]
            nodes.setdefault(k, set()).add(pl.node)
    return [KindFigure(kinds[k].label, len(nodes[k]), sums[k] / len(nodes[k]), unit) for k in sums]


def pair_kinds(ctx: Context | None, always: bool = False) -> str | None:
    """The kind(s) of node ranks 0 and 1 ran on: the layers and other two-rank figures are of
    those nodes.  Unless `always`, only on a run across kinds (else there is nothing to say)."""
    kinds = node_kinds(ctx.nodes) if ctx else []
    if not kinds or (not always and len(kinds) < 2):
        return None
    kind_of = _by_node(kinds)
    on = [
        kinds[kind_of[pl.node]].label if pl.node in kind_of else "?"
        for pl in sorted(ctx.placement, key=lambda p: p.rank)[:2]
    ]
    return on[0] if len(set(on)) == 1 else f"{on[0]} and {on[1]}"


def by_pair_kind(runs: list) -> dict[str | None, list]:
    """Runs grouped by the kind of node their ranks 0 and 1 ran on (the layer table per kind)."""
    out: dict[str | None, list] = {}
    for r in runs:
        out.setdefault(pair_kinds(r.context, always=True), []).append(r)
    return out
