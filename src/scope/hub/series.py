"""Every series a cluster measured, kept as rows at the push (issue 70): one row a series (a
test, its parameters, size, rank count and kind) and one a run's point of it, so the cluster
page can draw any series' history from SQL instead of opening every bundle again.  A run's
points are kept when it has at most SERIES_LIMIT of them (a million-row import is kept for its
headline tests and collectives only, and its row says how many were kept)."""

from __future__ import annotations

import hashlib
import json

from sqlalchemy import func, select, update

from scope.hub.tables import as_dict, observations, runs, series
from scope.sizes import format_size

SERIES_LIMIT = 20_000  # points of one run kept as series rows: more is an import or a sweep


def params_of(text: str) -> dict[str, str]:
    """A series' parameters as kept (JSON [[name, value], ...]) as a dict."""
    return dict(map(tuple, json.loads(text)))


def where(s: dict) -> list[str]:
    """Where a series measured, as its picker and its alerts say it: size, ranks, parameters."""
    bits = [format_size(s["size"])] if s["size"] is not None else []
    bits += [f"{s['ranks']} ranks"] if s["ranks"] else []
    return bits + [f"{k}={v}" for k, v in sorted(s["params"].items()) if k != "size"]


def _key(key: tuple) -> str:
    test, params, size, ranks, kind = key
    return hashlib.sha256(json.dumps([kind, test, params, size, ranks]).encode()).hexdigest()


def keep(conn, cluster_id: int, run_id: int, points: list) -> int:
    """A run's points (analysis/history.observed: (key, unit, Obs) each) kept as its series'
    rows, in the caller's transaction; a series seen first is made.  Returns how many were kept
    (a second point of one series in one run is the first's twin: left out)."""
    wanted = {_key(k): (k, unit, o) for k, unit, o in reversed(points)}  # the first of twins wins
    if not wanted:
        conn.execute(update(runs).where(runs.c.id == run_id).values(series=0))
        return 0
    ids = {}
    keys = list(wanted)
    for i in range(0, len(keys), 500):  # a bounded IN list
        q = select(series.c.key, series.c.id).where(
            series.c.cluster_id == cluster_id, series.c.key.in_(keys[i : i + 500])
        )
        ids.update(dict(conn.execute(q).all()))
    new = [
        {"cluster_id": cluster_id, "key": h, "kind": k[4], "test": k[0], "params": json.dumps(k[1]),
         "size": k[2], "ranks": k[3], "unit": unit}
        for h, (k, unit, _) in wanted.items() if h not in ids
    ]  # fmt: skip
    if new:
        conn.execute(series.insert(), new)
        q = select(series.c.key, series.c.id).where(
            series.c.cluster_id == cluster_id, series.c.key.in_([n["key"] for n in new])
        )
        ids.update(dict(conn.execute(q).all()))
    rows = [
        {"series_id": ids[h], "run_id": run_id, "median": o.median, "lo": o.ci_lo, "hi": o.ci_hi,
         "launches": json.dumps(list(o.launches))}
        for h, (_, _, o) in wanted.items()
    ]  # fmt: skip
    conn.execute(observations.insert(), rows)
    conn.execute(update(runs).where(runs.c.id == run_id).values(series=len(rows)))
    return len(rows)


def unread(conn, cluster_id: int) -> list[int]:
    """The cluster's runs stored before series were kept (their points not yet read)."""
    q = select(runs.c.id).where(runs.c.cluster_id == cluster_id, runs.c.series.is_(None)).order_by(runs.c.id)
    return [r for (r,) in conn.execute(q)]


def listed(conn, cluster_id: int) -> list[dict]:
    """Every series of a cluster with how many runs measured it: tests in name order, then
    kind, parameters, ranks and size."""
    n = func.count(observations.c.run_id).label("runs")
    q = (
        select(series.c.id, series.c.kind, series.c.test, series.c.params, series.c.size, series.c.ranks,
               series.c.unit, n)
        .join(observations, observations.c.series_id == series.c.id)
        .where(series.c.cluster_id == cluster_id)
        .group_by(series.c.id)
    )  # fmt: skip
    out = [as_dict(r) for r in conn.execute(q)]
    for r in out:
        r["params"] = params_of(r["params"])
    out.sort(key=lambda r: (r["test"], r["kind"], sorted(r["params"].items()), r["ranks"] or 0, r["size"] or 0))
    return out


def history(conn, cluster_id: int, series_id: int, provenance: bool = True) -> tuple[dict, list[dict]] | None:
    """One series of a cluster and its runs' points in the order they started, each with its
    run's id, start, label and (`provenance`) provenance as JSON; None when the cluster has no
    such series."""
    s = conn.execute(select(series).where(series.c.id == series_id, series.c.cluster_id == cluster_id)).first()
    if s is None:
        return None
    q = (
        select(observations.c.median, observations.c.lo, observations.c.hi, observations.c.launches,
               runs.c.id, runs.c.started_utc, runs.c.label, *([runs.c.provenance] if provenance else []))
        .join(runs, runs.c.id == observations.c.run_id)
        .where(observations.c.series_id == series_id)
        .order_by(runs.c.started_utc, runs.c.id)
    )  # fmt: skip
    head = as_dict(s)
    head["params"] = params_of(head["params"])
    return head, [as_dict(r) for r in conn.execute(q)]


def partial(conn, cluster_id: int) -> int:
    """How many of a cluster's runs keep fewer of their points as series than they have."""
    q = select(func.count()).where(runs.c.cluster_id == cluster_id, runs.c.series < runs.c.points)
    return int(conn.execute(q).scalar() or 0)
