"""Which host each rank of a run is on, as the screens group ranks (analysis/screen.py,
analysis/node_screen.py): the MPI's shared-memory node on a cluster, the network namespace on
a testbed (docs/modules.md, "Which host a rank is on")."""

from __future__ import annotations

from scope.model import Run


def _count(v) -> int | None:
    """A count a stored context gives (it may be hand-edited: issue 58), or None."""
    return v if isinstance(v, int) and not isinstance(v, bool) and v > 0 else None


def host_names(run: Run) -> tuple[list[str], list[int]]:
    """Each rank's host: its shared-memory node, named by its host name; on a testbed, its
    network namespace, named by the testbed host (issue 58: without --ppn, MPI takes every rank
    for a node of its own, so rank 3 of 4 on 3 hosts, back on host 0, was screened as a fourth
    host and host 2 was blamed for the slow link 0-2).  Hosts ordered by their first rank."""
    ctx = run.context
    n = run.ranks or (len(ctx.placement) if ctx else 0)
    if not ctx or not ctx.placement:
        return [f"rank {r}" for r in range(n)], list(range(n))
    tb = (run.context_record or {}).get("testbed") or {}
    tb = tb if isinstance(tb, dict) else {}
    listed = tb.get("hosts") if isinstance(tb.get("hosts"), list) else []
    tb_hosts = [str(h.get("ns")) if isinstance(h, dict) else str(h) for h in listed]
    ppn = _count(tb.get("ppn"))
    used = min(len(tb_hosts), _count(tb.get("hosts_used")) or (n // ppn if ppn else 0) or len(tb_hosts))
    placed = sorted(ctx.placement, key=lambda p: p.rank)

    def where(pl) -> tuple[object, str]:
        if used:  # rank r runs in testbed host r mod N (run/testbed.py launch_segments)
            return (pl.netns or pl.rank % used), tb_hosts[pl.rank % used]
        return pl.node, pl.host

    order: dict[object, int] = {}
    names: list[str] = []
    of_rank: list[int] = []
    for pl in placed:
        key, name = where(pl)
        if key not in order:
            order[key] = len(names)
            names.append(name if name not in names else f"{name}#{pl.node}")
        of_rank.append(order[key])
    return names, of_rank
