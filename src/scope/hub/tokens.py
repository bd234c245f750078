"""Who may do what on a hub: push tokens (one cluster each) and read tokens, kept as their
SHA-256 only, made, revoked, listed and looked up; and a browser's reading sessions, which a
read token opens at /login (the cookie holds the session's id, never the token), which expire
and end with their token (hub/db.py has the tables)."""

from __future__ import annotations

import hashlib
import secrets
from datetime import datetime, timedelta, timezone

from sqlalchemy import func, select, update

from scope.errors import USAGE, ScopeError
from scope.hub.db import check_name, now_utc, writing
from scope.hub.tables import clusters, sessions, tokens

SESSION_HOURS = 12


def hashed(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def add_token(eng, cluster: str | None, admin: bool = False) -> tuple[int, str]:
    """A new token, (its id, the token): a push token of `cluster` (made if new), a read token
    (cluster None), or an admin token (`admin`: alert rules and events of every cluster, and
    reading).  Only its hash is kept: the token is shown once."""
    token = "scope_" + secrets.token_urlsafe(32)
    with writing(eng) as conn:
        cid = None
        if cluster is not None:
            cid = cluster_id(conn, check_name(cluster), create=True)
        kind = "push" if cid else "admin" if admin else "read"
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
    """A cluster's id (made when `create`); names are unique regardless of case, so `Frontier`
    is refused where `frontier` exists (two clusters a reader cannot tell apart)."""
    cid = conn.execute(select(clusters.c.id).where(clusters.c.name == name)).scalar()
    if cid is None and create:
        other = conn.execute(select(clusters.c.name).where(func.lower(clusters.c.name) == name.lower())).scalar()
        if other is not None:
            raise ScopeError(
                f"the hub has a cluster {other!r}; names are unique regardless of case", f"use {other!r}", USAGE
            )
        cid = conn.execute(clusters.insert().values(name=name, created_utc=now_utc())).inserted_primary_key[0]
    return cid


def reader(eng, token: str | None) -> bool:
    """Whether a request's token may read a private hub: a live read or admin token (a push token pushes
    its cluster's runs and reads nothing: a machine's token in a batch script opens no pages)."""
    tok = token_of(eng, token)
    return tok is not None and tok["kind"] in ("read", "admin")


def open_session(eng, token: str) -> str | None:
    """A reading session for a live read token: the id the cookie holds (None: not a read token)."""
    if not token or len(token) > 200:
        return None
    with writing(eng) as conn:
        tid = conn.execute(
            select(tokens.c.id).where(
                tokens.c.hash == hashed(token), tokens.c.kind == "read", tokens.c.revoked_utc.is_(None)
            )
        ).scalar()
        if tid is None:
            return None
        sid = "scope_session_" + secrets.token_urlsafe(32)
        ends = (datetime.now(timezone.utc) + timedelta(hours=SESSION_HOURS)).strftime("%Y-%m-%dT%H:%M:%SZ")
        conn.execute(sessions.delete().where(sessions.c.expires_utc < now_utc()))  # the expired, swept
        conn.execute(sessions.insert().values(hash=hashed(sid), token_id=tid, created_utc=now_utc(), expires_utc=ends))
    return sid


def in_session(eng, sid: str | None) -> bool:
    """Whether a cookie's session is live: not expired, its read token not revoked."""
    if not sid or len(sid) > 200:
        return False
    q = (
        select(sessions.c.id)
        .select_from(sessions.join(tokens, tokens.c.id == sessions.c.token_id))
        .where(sessions.c.hash == hashed(sid), sessions.c.expires_utc > now_utc(), tokens.c.revoked_utc.is_(None))
    )
    with eng.connect() as conn:
        return conn.execute(q).first() is not None


def close_session(eng, sid: str | None) -> None:
    if sid and len(sid) <= 200:
        with writing(eng) as conn:
            conn.execute(sessions.delete().where(sessions.c.hash == hashed(sid)))
