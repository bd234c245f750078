"""Who may do what on a hub: push tokens (one cluster each) and read tokens, kept as their
SHA-256 only, made, revoked, listed and looked up (hub/db.py has the tables)."""

from __future__ import annotations

import hashlib
import secrets

from sqlalchemy import select, update

from scope.hub.db import check_name, now_utc, writing
from scope.hub.tables import clusters, tokens


def hashed(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def add_token(eng, cluster: str | None) -> tuple[int, str]:
    """A new token, (its id, the token): a push token of `cluster` (made if new), or a read token
    (cluster None).  Only its hash is kept: the token is shown once."""
    token = "scope_" + secrets.token_urlsafe(32)
    with writing(eng) as conn:
        cid = None
        if cluster is not None:
            cid = cluster_id(conn, check_name(cluster), create=True)
        kind = "push" if cid else "read"
        tid = conn.execute(
            tokens.insert().values(cluster_id=cid, kind=kind, hash=hashed(token), created_utc=now_utc())
        ).inserted_primary_key[0]
    return int(tid), token


def revoke_token(eng, token_id: int) -> bool:
    with writing(eng) as conn:
        res = conn.execute(
            update(tokens).where(tokens.c.id == token_id, tokens.c.revoked_utc.is_(None)).values(revoked_utc=now_utc())
        )
    return res.rowcount == 1


def list_tokens(eng) -> list[dict]:
    q = select(tokens.c.id, tokens.c.kind, clusters.c.name, tokens.c.created_utc, tokens.c.revoked_utc).select_from(
        tokens.outerjoin(clusters, tokens.c.cluster_id == clusters.c.id)
    )
    with eng.connect() as conn:
        return [dict(r._mapping) for r in conn.execute(q.order_by(tokens.c.id))]


def token_of(eng, token: str | None) -> dict | None:
    """The live token a request carries: {kind, cluster_id, cluster}, or None."""
    if not token or len(token) > 200:
        return None
    q = (
        select(tokens.c.kind, tokens.c.cluster_id, clusters.c.name.label("cluster"))
        .select_from(tokens.outerjoin(clusters, tokens.c.cluster_id == clusters.c.id))
        .where(tokens.c.hash == hashed(token), tokens.c.revoked_utc.is_(None))
    )
    with eng.connect() as conn:
        row = conn.execute(q).first()
    return dict(row._mapping) if row else None


def cluster_id(conn, name: str, create: bool = False) -> int | None:
    cid = conn.execute(select(clusters.c.id).where(clusters.c.name == name)).scalar()
    if cid is None and create:
        cid = conn.execute(clusters.insert().values(name=name, created_utc=now_utc())).inserted_primary_key[0]
    return cid
