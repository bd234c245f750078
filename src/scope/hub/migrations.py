"""The hub database's migrations, each frozen as it shipped (issue 67: step 1 was built from
today's table definitions, so adding a column would have changed what an old step creates).
A step names its own tables on a MetaData of its own and never imports hub/tables.py; the
tables the queries use (hub/tables.py) are what all the steps together make.  Append only."""

from __future__ import annotations

import gzip
import hashlib

from sqlalchemy import (
    BigInteger,
    Column,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
    select,
    text,
    update,
)

from scope.store.bundle import read, scrubbed


def _step1_tables() -> tuple[MetaData, list[Table]]:
    """Clusters, tokens, pushed runs, their bundles and reports, and drawn pages, as shipped."""
    m = MetaData()
    Table(
        "clusters",
        m,
        Column("id", Integer, primary_key=True),
        Column("name", String(64), nullable=False, unique=True),
        Column("created_utc", String(20), nullable=False),
        Column("runs", Integer, nullable=False, server_default="0"),
        Column("last_push_utc", String(20)),
        Column("latest_run_id", Integer),
        Column("latest_started_utc", String(20)),
    )
    Table(
        "tokens",
        m,
        Column("id", Integer, primary_key=True),
        Column("cluster_id", Integer, ForeignKey("clusters.id")),
        Column("kind", String(8), nullable=False),
        Column("hash", String(64), nullable=False, unique=True),
        Column("created_utc", String(20), nullable=False),
        Column("revoked_utc", String(20)),
    )
    figures = [
        c
        for f in ("latency", "bandwidth", "allreduce")
        for c in (Column(f, Float), Column(f"{f}_lo", Float), Column(f"{f}_hi", Float), Column(f"{f}_at", Text))
    ]
    Table(
        "runs",
        m,
        Column("id", Integer, primary_key=True),
        Column("cluster_id", Integer, ForeignKey("clusters.id"), nullable=False),
        Column("digest", String(64), nullable=False),
        Column("pushed_utc", String(20), nullable=False),
        Column("started_utc", String(20), nullable=False),
        Column("status", String(16), nullable=False),
        Column("label", Text),
        Column("origin", String(64)),
        Column("ranks", Integer),
        Column("mpi", Text),
        Column("launches", Integer),
        Column("points", Integer, nullable=False),
        Column("bytes", Integer, nullable=False),
        *figures,
        Column("collectives", Text),
        Column("provenance", Text),
        UniqueConstraint("cluster_id", "digest", name="one_run_once"),
        Index("runs_by_cluster", "cluster_id", "started_utc"),
    )
    Table("bundles", m, Column("run_id", Integer, ForeignKey("runs.id"), primary_key=True),
          Column("data", LargeBinary, nullable=False))  # fmt: skip
    Table("reports", m, Column("run_id", Integer, ForeignKey("runs.id"), primary_key=True),
          Column("html", LargeBinary, nullable=False))  # fmt: skip
    Table(
        "drawn",
        m,
        Column("cluster_id", Integer, ForeignKey("clusters.id"), primary_key=True),
        Column("kind", String(8), primary_key=True),
        Column("version", String(64), nullable=False),
        Column("body", LargeBinary, nullable=False),
    )
    return m, list(m.sorted_tables)


def step1(conn) -> None:
    m, tables = _step1_tables()
    m.create_all(conn, tables=tables)


INFLATED_LIMIT = 512 << 20  # what a stored bundle is read with (hub/runs.py)


def step2(conn) -> None:
    """No credential in a stored run (issue 67): each bundle brought under secrets.py's rule
    (its digest the SHA-256 of its new JSON), and every drawn page and report dropped, to be
    drawn again from the clean bundles when first asked for."""
    m = MetaData()
    runs = Table("runs", m, Column("id", Integer, primary_key=True), Column("digest", String(64)))
    bundles = Table("bundles", m, Column("run_id", Integer, primary_key=True), Column("data", LargeBinary))
    ids = [r for (r,) in conn.execute(select(bundles.c.run_id).order_by(bundles.c.run_id))]
    for rid in ids:  # one at a time: a hub's bundles may not fit in memory together
        data = conn.execute(select(bundles.c.data).where(bundles.c.run_id == rid)).scalar()
        body = scrubbed(read(data, INFLATED_LIMIT))
        conn.execute(update(bundles).where(bundles.c.run_id == rid).values(data=gzip.compress(body, 6, mtime=0)))
        conn.execute(update(runs).where(runs.c.id == rid).values(digest=hashlib.sha256(body).hexdigest()))
    conn.execute(text("DELETE FROM reports"))
    conn.execute(text("DELETE FROM drawn"))


def step3(conn) -> None:
    """A report remembers the scope that drew it, so an upgrade draws it again (issue 67)."""
    conn.execute(text("ALTER TABLE reports ADD COLUMN scope VARCHAR(64)"))


def step4(conn) -> None:
    """Browser sessions: the cookie holds a session id that expires, never the token (issue 67)."""
    m = MetaData()
    Table("tokens", m, Column("id", Integer, primary_key=True))
    sessions = Table(
        "sessions",
        m,
        Column("id", Integer, primary_key=True),
        Column("hash", String(64), nullable=False, unique=True),
        Column("token_id", Integer, ForeignKey("tokens.id"), nullable=False),
        Column("created_utc", String(20), nullable=False),
        Column("expires_utc", String(20), nullable=False),
    )
    m.create_all(conn, tables=[sessions])


def step5(conn) -> None:
    """Where a run was measured (issue 70): its nodes, its interconnect, whether the latency's
    pair crossed nodes.  Runs stored before are left unknown (NULL), said so on the list."""
    for column, kind in (("nodes", "INTEGER"), ("interconnect", "TEXT"), ("crossed", "INTEGER")):
        conn.execute(text(f"ALTER TABLE runs ADD COLUMN {column} {kind}"))


def step6(conn) -> None:
    """Every series a cluster measured, each run's point of it (issue 70), and how many of a
    run's points were kept so (NULL for the runs stored before: read from their bundles once)."""
    conn.execute(text("ALTER TABLE runs ADD COLUMN series INTEGER"))
    m = MetaData()
    Table("clusters", m, Column("id", Integer, primary_key=True))
    Table("runs", m, Column("id", Integer, primary_key=True))
    series = Table(
        "series",
        m,
        Column("id", Integer, primary_key=True),
        Column("cluster_id", Integer, ForeignKey("clusters.id"), nullable=False),
        Column("key", String(64), nullable=False),
        Column("kind", Text, nullable=False),
        Column("test", Text, nullable=False),
        Column("params", Text, nullable=False),
        Column("size", BigInteger),
        Column("ranks", Integer),
        Column("unit", String(16)),
        UniqueConstraint("cluster_id", "key", name="one_series_once"),
    )
    observations = Table(
        "observations",
        m,
        Column("series_id", Integer, ForeignKey("series.id"), primary_key=True),
        Column("run_id", Integer, ForeignKey("runs.id"), primary_key=True),
        Column("median", Float, nullable=False),
        Column("lo", Float),
        Column("hi", Float),
        Column("launches", Text),
        Index("observations_by_run", "run_id"),
    )
    m.create_all(conn, tables=[series, observations])


def step7(conn) -> None:
    """Alerts (issue 71): where a cluster's go (rules), what pushes raised, each delivery; and
    whether a run was judged (the runs stored before are: no alert is raised for the past)."""
    conn.execute(text("ALTER TABLE runs ADD COLUMN judged INTEGER"))
    conn.execute(text("UPDATE runs SET judged = 1"))
    m = MetaData()
    Table("clusters", m, Column("id", Integer, primary_key=True))
    Table("runs", m, Column("id", Integer, primary_key=True))
    Table("series", m, Column("id", Integer, primary_key=True))
    rules = Table(
        "alert_rules",
        m,
        Column("id", Integer, primary_key=True),
        Column("cluster_id", Integer, ForeignKey("clusters.id"), nullable=False),
        Column("channel", String(8), nullable=False),
        Column("target", Text, nullable=False),
        Column("max_slowdown", Float, nullable=False),
        Column("tests", Text),
        Column("created_utc", String(20), nullable=False),
        Column("removed_utc", String(20)),
    )
    alerts = Table(
        "alerts",
        m,
        Column("id", Integer, primary_key=True),
        Column("cluster_id", Integer, ForeignKey("clusters.id"), nullable=False),
        Column("series_id", Integer, ForeignKey("series.id"), nullable=False),
        Column("run_id", Integer, ForeignKey("runs.id"), nullable=False),
        Column("raised_by", Integer, nullable=False),
        Column("kind", String(8), nullable=False),
        Column("step", Float, nullable=False),
        Column("lo", Float),
        Column("hi", Float),
        Column("changed", Text),
        Column("status", String(12), nullable=False),
        Column("note", Text),
        Column("created_utc", String(20), nullable=False),
        Column("updated_utc", String(20), nullable=False),
        UniqueConstraint("series_id", "run_id", name="one_alert_a_change"),
    )
    deliveries = Table(
        "deliveries",
        m,
        Column("id", Integer, primary_key=True),
        Column("alert_id", Integer, ForeignKey("alerts.id"), nullable=False),
        Column("rule_id", Integer, ForeignKey("alert_rules.id"), nullable=False),
        Column("attempts", Integer, nullable=False),
        Column("next_utc", String(20), nullable=False),
        Column("delivered_utc", String(20)),
        Column("last_error", Text),
        UniqueConstraint("alert_id", "rule_id", name="one_delivery_a_rule"),
    )
    m.create_all(conn, tables=[rules, alerts, deliveries])


def step8(conn) -> None:
    """Known events (issue 71): a cluster's announced maintenance, upgrades and swaps, an alert's
    event (which files it as expected), and a rule's quiet hours."""
    conn.execute(text("ALTER TABLE alert_rules ADD COLUMN quiet VARCHAR(11)"))
    conn.execute(text("ALTER TABLE alerts ADD COLUMN event_id INTEGER"))
    m = MetaData()
    Table("clusters", m, Column("id", Integer, primary_key=True))
    events = Table(
        "events",
        m,
        Column("id", Integer, primary_key=True),
        Column("cluster_id", Integer, ForeignKey("clusters.id"), nullable=False),
        Column("at_utc", String(20), nullable=False),
        Column("text", Text, nullable=False),
        Column("bound", Float),
        Column("created_utc", String(20), nullable=False),
        Column("removed_utc", String(20)),
        Index("events_by_cluster", "cluster_id", "at_utc"),
    )
    m.create_all(conn, tables=[events])


# Each entry takes the schema from version i to i + 1.  Append only; never edit a shipped one.
MIGRATIONS = [step1, step2, step3, step4, step5, step6, step7, step8]
