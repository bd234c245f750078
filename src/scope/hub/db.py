"""The hub's database: SQLAlchemy Core over SQLite (the default, nothing to set up) or PostgreSQL
(psycopg 3) through one code path; the schema versioned by ordered migrations, as the local
store's is (append only; never edit a shipped one).

A pushed run is its row (the figures the lists show, so no page decodes a run to list it) and
its bundle (store/bundle.py), written in one transaction with its cluster's counters: a push is
stored whole or not at all, and a crash between two pushes loses only the unacknowledged one."""

from __future__ import annotations

import contextlib
import os
from datetime import datetime, timezone
from pathlib import Path

import msgspec
from sqlalchemy import (
    create_engine,
    event,
    exc,
    func,
    inspect,
    select,
    text,
    update,
)

from scope.errors import USAGE, ScopeError
from scope.hub import series
from scope.hub.migrations import MIGRATIONS
from scope.hub.tables import (
    CLUSTER_NAME,
    FIGURES,
    NAME_HINT,
    as_dict,
    bundles,
    clusters,
    drawn,
    events,
    meta,
    reports,
    runs,
    schema,
)
from scope.version import __version__


def now_utc() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def default_url() -> str:
    base = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share") / "scope"
    return f"sqlite:///{base / 'hub.db'}"


def engine_url(url: str | None) -> str:
    """A database URL as SQLAlchemy takes it: a path or sqlite:///PATH, or postgresql://...
    (run through psycopg 3)."""
    url = url or os.environ.get("SCOPE_HUB_DB") or default_url()
    if url.startswith(("postgresql://", "postgres://")):
        return "postgresql+psycopg://" + url.split("://", 1)[1]
    if url.startswith(("postgresql+psycopg://", "sqlite:///")):
        return url
    if "://" in url:
        raise ScopeError(f"--db {url.split('://')[0]}://... is neither SQLite nor PostgreSQL", _URL_HINT, USAGE)
    return f"sqlite:///{Path(url).resolve()}"


_URL_HINT = "give a file path, sqlite:///PATH or postgresql://USER@HOST/DB"


def open_engine(url: str | None, pool: int = 10):
    """The database's engine. SQLite waits for a writer (busy timeout) and writes in WAL mode,
    each writer with BEGIN IMMEDIATE (writing), so two pushes never deadlock on upgrading a read
    lock and readers never wait."""
    u = engine_url(url)
    if u.startswith("sqlite"):
        path = Path(u[len("sqlite:///") :])
        path.parent.mkdir(parents=True, exist_ok=True)
        eng = create_engine(
            u, connect_args={"timeout": 60, "check_same_thread": False}, pool_size=pool, max_overflow=4 * pool
        )

        @event.listens_for(eng, "connect")
        def _sqlite(dbapi, _record):
            dbapi.isolation_level = None  # SQLAlchemy says BEGIN itself (below)
            dbapi.execute("PRAGMA journal_mode=WAL")
            dbapi.execute("PRAGMA synchronous=FULL")  # an acknowledged push survives a power cut
            dbapi.execute("PRAGMA foreign_keys=ON")

        @event.listens_for(eng, "begin")
        def _begin(conn):
            # a writer takes the write lock at once; a reader, in WAL mode, takes none
            conn.exec_driver_sql("BEGIN IMMEDIATE" if conn.get_execution_options().get("writes") else "BEGIN")

        return eng
    return create_engine(u, pool_size=pool, max_overflow=pool, pool_pre_ping=True)


@contextlib.contextmanager
def writing(eng):
    """A transaction that writes: committed whole or rolled back whole (on SQLite it holds the
    write lock from its start, so two writers queue instead of deadlocking)."""
    with eng.connect() as conn:
        conn.execution_options(writes=True)
        with conn.begin():
            yield conn


def migrate(eng) -> int:
    """The schema brought up to date (a newer one is refused, never altered): its version.  A
    database already up to date is only read (a read-only one serves)."""
    with eng.connect() as conn:
        have = conn.execute(select(schema.c.version)).scalar() if inspect(conn).has_table("hub_schema") else None
    if have == len(MIGRATIONS):
        return have
    with writing(eng) as conn:
        if eng.dialect.name == "postgresql":  # workers starting together migrate one at a time
            conn.execute(text("SELECT pg_advisory_xact_lock(4615)"))
        meta.create_all(conn, tables=[schema])
        have = conn.execute(select(schema.c.version)).scalar()
        if have is None:
            conn.execute(schema.insert().values(version=0))
            have = 0
        if have > len(MIGRATIONS):
            raise ScopeError(
                f"the hub database is at schema {have}, newer than this scope ({len(MIGRATIONS)})",
                "upgrade scope on this host",
                USAGE,
            )
        for step in MIGRATIONS[have:]:
            step(conn)
        conn.execute(update(schema).values(version=len(MIGRATIONS)))
    return len(MIGRATIONS)


def check_writable(eng) -> None:
    """Raises a storage error when the database cannot be written (read-only, full, a read-only
    replica): a write that changes nothing, rolled back."""
    with eng.connect() as conn:
        conn.execution_options(writes=True)
        with conn.begin() as tx:
            conn.execute(update(schema).values(version=schema.c.version))
            tx.rollback()


STORAGE_ERRORS = (exc.OperationalError, exc.InterfaceError, exc.InternalError)  # disk full, read-only, gone


def storage_reason(e: Exception) -> str:
    """What a storage fault says, in one line, without the SQL it was running."""
    orig = getattr(e, "orig", None) or e
    return str(orig).strip().splitlines()[0][:200] if str(orig).strip() else type(orig).__name__


def check_name(name: str) -> str:
    if not isinstance(name, str) or not CLUSTER_NAME.fullmatch(name):
        raise ScopeError(f"{name!r} is not a cluster name", NAME_HINT, USAGE)
    return name


def store_run(eng, cluster_id: int, digest: str, row: dict, data: bytes, points=()) -> tuple[int, bool]:
    """A pushed run stored with its cluster's counters and its points as series (hub/series.py)
    in one transaction: (its id, whether it is new).  The same content pushed again (its
    digest) is the run already stored."""
    for _ in range(3):  # a push racing the same push: the loser finds the winner's row
        try:
            with writing(eng) as conn:
                old = conn.execute(
                    select(runs.c.id).where(runs.c.cluster_id == cluster_id, runs.c.digest == digest)
                ).scalar()
                if old is not None:
                    return int(old), False
                when = now_utc()
                rid = int(
                    conn.execute(
                        runs.insert().values(cluster_id=cluster_id, digest=digest, pushed_utc=when, **row)
                    ).inserted_primary_key[0]
                )
                conn.execute(bundles.insert().values(run_id=rid, data=data))
                series.keep(conn, cluster_id, rid, list(points))
                conn.execute(
                    update(clusters)
                    .where(clusters.c.id == cluster_id)
                    .values(runs=clusters.c.runs + 1, last_push_utc=when)
                )
                conn.execute(
                    update(clusters)
                    .where(
                        clusters.c.id == cluster_id,
                        (clusters.c.latest_started_utc.is_(None))
                        | (clusters.c.latest_started_utc <= row["started_utc"]),
                    )
                    .values(latest_run_id=rid, latest_started_utc=row["started_utc"])
                )
            return rid, True
        except exc.IntegrityError:
            continue
    raise ScopeError("the run could not be stored (three conflicting pushes at once)", "push it again")


FIGURE_COLUMNS = [c for f in FIGURES for c in (f, f"{f}_lo", f"{f}_hi", f"{f}_at")]
RUN_LIST = ["id", "started_utc", "pushed_utc", "status", "label", "origin", "ranks", "mpi", "launches", "points"]


def list_version(eng) -> tuple:
    """What changes whenever the cluster list would: its clusters, runs and last push."""
    q = select(func.count(), func.sum(clusters.c.runs), func.max(clusters.c.last_push_utc))
    with eng.connect() as conn:
        return tuple(conn.execute(q).first())


def cluster_version(eng, name: str) -> tuple | None:
    """What changes whenever a cluster's page would (None: no such cluster)."""
    q = select(clusters.c.id, clusters.c.runs, clusters.c.last_push_utc).where(clusters.c.name == name)
    with eng.connect() as conn:
        row = conn.execute(q).first()
        if row is None:
            return None
        said = select(func.count(events.c.removed_utc), func.count(events.c.id), func.max(events.c.id))
        announced = conn.execute(said.where(events.c.cluster_id == row[0])).first()  # an event added or removed
    return (*row, *announced)


def drawn_body(eng, cluster_id: int, kind: str, version: str) -> bytes | None:
    q = select(drawn.c.body).where(drawn.c.cluster_id == cluster_id, drawn.c.kind == kind, drawn.c.version == version)
    with eng.connect() as conn:
        return conn.execute(q).scalar()


def keep_drawn(eng, cluster_id: int, kind: str, version: str, body: bytes) -> None:
    """A cluster's page or JSON kept for every worker, replacing what an older version drew."""
    try:
        with writing(eng) as conn:
            conn.execute(drawn.delete().where(drawn.c.cluster_id == cluster_id, drawn.c.kind == kind))
            conn.execute(drawn.insert().values(cluster_id=cluster_id, kind=kind, version=version, body=body))
    except exc.IntegrityError:
        pass  # another worker kept the same at the same time
    except STORAGE_ERRORS:
        pass  # a full disk or a read-only database: the reader is served it all the same


def cluster(eng, name: str, limit: int = 500) -> dict | None:
    """One cluster and its runs in time order (the newest `limit`), each with its figures."""
    with eng.connect() as conn:
        c = conn.execute(select(clusters).where(clusters.c.name == name)).first()
        if c is None:
            return None
        cols = [runs.c[k] for k in RUN_LIST + FIGURE_COLUMNS] + [runs.c.collectives, runs.c.provenance]
        q = select(*cols).where(runs.c.cluster_id == c.id).order_by(runs.c.started_utc.desc(), runs.c.id.desc())
        rows = [as_dict(r) for r in conn.execute(q.limit(limit))]
    rows.reverse()
    for r in rows:
        r["collectives"] = msgspec.json.decode(r["collectives"] or "[]")
        r["provenance"] = msgspec.json.decode(r["provenance"] or "{}")
    return {
        "name": c.name,
        "created_utc": c.created_utc,
        "runs": c.runs,
        "last_push_utc": c.last_push_utc,
        "history": rows,
    }


def run_row(eng, run_id: int) -> dict | None:
    q = select(runs, clusters.c.name.label("cluster")).join(clusters, clusters.c.id == runs.c.cluster_id)
    with eng.connect() as conn:
        r = conn.execute(q.where(runs.c.id == run_id)).first()
    return as_dict(r) if r else None


def bundle_of(eng, run_id: int) -> bytes | None:
    with eng.connect() as conn:
        return conn.execute(select(bundles.c.data).where(bundles.c.run_id == run_id)).scalar()


def report_of(eng, run_id: int) -> bytes | None:
    """A run's report as this scope drew it (one an older scope drew is drawn again)."""
    q = select(reports.c.html).where(reports.c.run_id == run_id, reports.c.scope == __version__)
    with eng.connect() as conn:
        return conn.execute(q).scalar()


def keep_report(eng, run_id: int, html: bytes) -> None:
    try:
        with writing(eng) as conn:
            conn.execute(reports.delete().where(reports.c.run_id == run_id))
            conn.execute(reports.insert().values(run_id=run_id, html=html, scope=__version__))
    except exc.IntegrityError:
        pass  # drawn by another request at the same time: the first is kept
    except STORAGE_ERRORS:
        pass  # not kept (a full disk, a read-only database): served all the same, drawn again later


def latest_run(eng, name: str) -> int | None:
    with eng.connect() as conn:
        return conn.execute(select(clusters.c.latest_run_id).where(clusters.c.name == name)).scalar()


def counts(eng) -> dict:
    with eng.connect() as conn:
        return {
            "clusters": conn.execute(select(func.count()).select_from(clusters)).scalar(),
            "runs": conn.execute(select(func.count()).select_from(runs)).scalar(),
        }
