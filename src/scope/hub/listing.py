"""The cluster list as the hub's front page and `/api/clusters` read it: each cluster with the
run it started last and each headline figure from the latest run that measured it, and that
figure's trend over the cluster's own runs (hub/db.py keeps the rest of the queries)."""

from __future__ import annotations

from sqlalchemy import func, select

from scope.hub.tables import FIGURES, as_dict, clusters, runs


def cluster_list(eng) -> list[dict]:
    """Every cluster: its runs, last push, the run it started last, and each headline figure
    from the latest run that measured it (issue 70: a cluster whose last run was an allreduce
    import showed no latency), with that run's id (FIGURE_run)."""
    cols = [clusters.c.id, clusters.c.name, clusters.c.runs, clusters.c.last_push_utc, clusters.c.latest_run_id]
    cols += [runs.c.started_utc, runs.c.mpi, runs.c.origin, runs.c.ranks, runs.c.nodes, runs.c.interconnect]
    q = select(*cols).select_from(clusters.outerjoin(runs, runs.c.id == clusters.c.latest_run_id))
    with eng.connect() as conn:
        out = [as_dict(r) for r in conn.execute(q.order_by(clusters.c.name))]
        by_id = {r["id"]: r for r in out}
        for f in FIGURES:  # one query a figure: each cluster's newest run with it
            newest = (
                select(runs.c.cluster_id, func.max(runs.c.started_utc).label("at"))
                .where(runs.c[f].is_not(None))
                .group_by(runs.c.cluster_id)
                .subquery()
            )
            picked = [runs.c.cluster_id, runs.c.id, runs.c[f], runs.c[f"{f}_lo"], runs.c[f"{f}_hi"], runs.c[f"{f}_at"],
                      runs.c.crossed]  # fmt: skip
            on = (runs.c.cluster_id == newest.c.cluster_id) & (runs.c.started_utc == newest.c.at)
            rows = conn.execute(select(*picked).join(newest, on).where(runs.c[f].is_not(None)).order_by(runs.c.id))
            for r in rows:  # ties at one instant: the higher id, pushed later, wins
                row = by_id[r.cluster_id]
                row.update({f: r[2], f"{f}_lo": r[3], f"{f}_hi": r[4], f"{f}_at": r[5], f"{f}_run": r.id})
                if f == "latency":
                    row["latency_crossed"] = None if r.crossed is None else bool(r.crossed)
        _trends(conn, by_id)
    for r in out:
        r.pop("id")
        for f in FIGURES:
            for c in (f, f"{f}_lo", f"{f}_hi", f"{f}_at", f"{f}_run"):
                r.setdefault(c, None)
            r.setdefault(f"{f}_trend", [])
        r.setdefault("latency_crossed", None)
    return out


TREND_RUNS = 12  # a list figure's trend: its value in this many runs at most, its own the last


def _trends(conn, by_id: dict[int, dict]) -> None:
    """Each listed figure's trend: its values in the newest TREND_RUNS runs of the same origin
    that measured it (the run it comes from is the newest of them), oldest first: read with a
    window a (cluster, origin), so a hub of 10^5 runs sends back 12 rows a group, not 10^5."""
    for f in FIGURES:
        newest = func.row_number().over(
            partition_by=(runs.c.cluster_id, runs.c.origin), order_by=(runs.c.started_utc.desc(), runs.c.id.desc())
        )
        inner = (
            select(runs.c.cluster_id, runs.c.id, runs.c.origin, runs.c.started_utc, runs.c[f].label("v"),
                   newest.label("k"))
            .where(runs.c[f].is_not(None))
            .subquery()
        )  # fmt: skip
        q = select(inner.c.cluster_id, inner.c.id, inner.c.origin, inner.c.v).where(inner.c.k <= TREND_RUNS)
        seen: dict[tuple, list[float]] = {}
        group: dict[int, tuple] = {}  # a run -> its (cluster, origin)
        for r in conn.execute(q.order_by(inner.c.started_utc, inner.c.id)):
            seen.setdefault((r.cluster_id, r.origin), []).append(r.v)
            group[r.id] = (r.cluster_id, r.origin)
        for row in by_id.values():
            key = group.get(row.get(f"{f}_run"))
            row[f"{f}_trend"] = seen[key] if key else []
