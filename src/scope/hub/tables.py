"""The hub's tables (SQLAlchemy Core) as the queries (hub/db.py) read them: what a cluster, a
token, a pushed run, its bundle and report, and a drawn page are.  The migrations that make them
are frozen apart (hub/migrations.py); a test holds the two equal."""

from __future__ import annotations

import re

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
)

CLUSTER_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
NAME_HINT = "1-64 letters, digits, '.', '_' or '-', starting with a letter or digit (e.g. frontier-gpu)"


def as_dict(row) -> dict:
    """A result row as a plain dict (SQLAlchemy's keys are str subclasses, which strict encoders refuse)."""
    return {str(k): v for k, v in row._mapping.items()}


meta = MetaData()
schema = Table("hub_schema", meta, Column("version", Integer, nullable=False))
clusters = Table(
    "clusters",
    meta,
    Column("id", Integer, primary_key=True),
    Column("name", String(64), nullable=False, unique=True),
    Column("created_utc", String(20), nullable=False),
    Column("runs", Integer, nullable=False, server_default="0"),
    Column("last_push_utc", String(20)),
    Column("latest_run_id", Integer),  # the run started last: its figures head the cluster list
    Column("latest_started_utc", String(20)),
)
tokens = Table(
    "tokens",
    meta,
    Column("id", Integer, primary_key=True),
    Column("cluster_id", Integer, ForeignKey("clusters.id")),  # NULL: a read token
    Column("kind", String(8), nullable=False),  # push | read
    Column("hash", String(64), nullable=False, unique=True),  # SHA-256 of the token: never the token
    Column("created_utc", String(20), nullable=False),
    Column("revoked_utc", String(20)),
)
FIGURES = ("latency", "bandwidth", "allreduce")
runs = Table(
    "runs",
    meta,
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
    *(
        c
        for f in FIGURES
        for c in (Column(f, Float), Column(f"{f}_lo", Float), Column(f"{f}_hi", Float), Column(f"{f}_at", Text))
    ),
    Column("collectives", Text),  # JSON [[test, procs, size, median us], ...]
    Column("provenance", Text),  # JSON {name: value}: what a change in its history is explained by
    Column("nodes", Integer),  # shared-memory domains (or testbed hosts) the run used (analysis/headline.py)
    Column("interconnect", Text),  # what carried its messages, as the MPI and its context say
    Column("crossed", Integer),  # 1: the ping-pong's ranks 0 and 1 on different nodes; 0: one node
    Column("series", Integer),  # its points kept as series (NULL: not yet read; hub/series.py)
    Column("judged", Integer),  # 1: judged for alerts (hub/alerts.py); NULL: not yet
    UniqueConstraint("cluster_id", "digest", name="one_run_once"),
    Index("runs_by_cluster", "cluster_id", "started_utc"),
)
bundles = Table(
    "bundles",
    meta,
    Column("run_id", Integer, ForeignKey("runs.id"), primary_key=True),
    Column("data", LargeBinary, nullable=False),  # gzip'd JSON (store/bundle.py)
)
reports = Table(  # a run's HTML report, drawn once when first asked for
    "reports",
    meta,
    Column("run_id", Integer, ForeignKey("runs.id"), primary_key=True),
    Column("html", LargeBinary, nullable=False),
    Column("scope", String(64)),  # the scope that drew it: another draws it again
)

drawn = Table(  # a cluster's page and JSON as last drawn, for the version they show (one row each)
    "drawn",
    meta,
    Column("cluster_id", Integer, ForeignKey("clusters.id"), primary_key=True),
    Column("kind", String(8), primary_key=True),  # page | json
    Column("version", String(64), nullable=False),
    Column("body", LargeBinary, nullable=False),
)
sessions = Table(  # a browser's reading session: its cookie holds the id, the hub its SHA-256
    "sessions",
    meta,
    Column("id", Integer, primary_key=True),
    Column("hash", String(64), nullable=False, unique=True),
    Column("token_id", Integer, ForeignKey("tokens.id"), nullable=False),
    Column("created_utc", String(20), nullable=False),
    Column("expires_utc", String(20), nullable=False),
)
series = Table(  # every series a cluster measured (issue 70): a test, its parameters, size, ranks, kind
    "series",
    meta,
    Column("id", Integer, primary_key=True),
    Column("cluster_id", Integer, ForeignKey("clusters.id"), nullable=False),
    Column("key", String(64), nullable=False),  # SHA-256 of the fields below: one row a series
    Column("kind", Text, nullable=False),  # measured | imported osu | simulated <digest> ...
    Column("test", Text, nullable=False),
    Column("params", Text, nullable=False),  # JSON [[name, value as written], ...] sorted by name
    Column("size", BigInteger),  # bytes; NULL: the test has no size
    Column("ranks", Integer),
    Column("unit", String(16)),
    UniqueConstraint("cluster_id", "key", name="one_series_once"),
)
observations = Table(  # each run's point of a series: its median, interval and launch medians
    "observations",
    meta,
    Column("series_id", Integer, ForeignKey("series.id"), primary_key=True),
    Column("run_id", Integer, ForeignKey("runs.id"), primary_key=True),
    Column("median", Float, nullable=False),
    Column("lo", Float),
    Column("hi", Float),
    Column("launches", Text),  # JSON [median of each launch]: the replicates the detector judges
    Index("observations_by_run", "run_id"),
)
alert_rules = Table(  # where a cluster's alerts go, and past what slowdown (issue 71)
    "alert_rules",
    meta,
    Column("id", Integer, primary_key=True),
    Column("cluster_id", Integer, ForeignKey("clusters.id"), nullable=False),
    Column("channel", String(8), nullable=False),  # webhook | slack | email
    Column("target", Text, nullable=False),  # a URL or an address; a secret in it only as ${VAR}
    Column("max_slowdown", Float, nullable=False),  # relative: 0.05 alerts past 5 % slower
    Column("tests", Text),  # JSON [test name prefix, ...]; NULL: every test
    Column("created_utc", String(20), nullable=False),
    Column("removed_utc", String(20)),
    Column("quiet", String(11)),  # "HH:MM-HH:MM" UTC: its deliveries wait for the end; NULL: none
)
alerts = Table(  # a change a push raised in one series: thin, the series and runs hold the rest
    "alerts",
    meta,
    Column("id", Integer, primary_key=True),
    Column("cluster_id", Integer, ForeignKey("clusters.id"), nullable=False),
    Column("series_id", Integer, ForeignKey("series.id"), nullable=False),
    Column("run_id", Integer, ForeignKey("runs.id"), nullable=False),  # the first run after the change
    Column("raised_by", Integer, nullable=False),  # the pushed run that raised it (or confirmed it)
    Column("kind", String(8), nullable=False),  # alarm | step
    Column("step", Float, nullable=False),
    Column("lo", Float),
    Column("hi", Float),
    Column("changed", Text),  # JSON {provenance name: [before, after]}
    Column("status", String(12), nullable=False),  # open | acknowledged | expected | false
    Column("note", Text),
    Column("created_utc", String(20), nullable=False),
    Column("updated_utc", String(20), nullable=False),
    Column("event_id", Integer),  # the announced event between its run and the one before (events)
    UniqueConstraint("series_id", "run_id", name="one_alert_a_change"),
)
deliveries = Table(  # an alert to one rule's channel: sent once, retried with back-off until then
    "deliveries",
    meta,
    Column("id", Integer, primary_key=True),
    Column("alert_id", Integer, ForeignKey("alerts.id"), nullable=False),
    Column("rule_id", Integer, ForeignKey("alert_rules.id"), nullable=False),
    Column("attempts", Integer, nullable=False),
    Column("next_utc", String(20), nullable=False),
    Column("delivered_utc", String(20)),
    Column("last_error", Text),
    UniqueConstraint("alert_id", "rule_id", name="one_delivery_a_rule"),
)
events = Table(  # a cluster's announced change: maintenance, an upgrade, a swap (issue 71)
    "events",
    meta,
    Column("id", Integer, primary_key=True),
    Column("cluster_id", Integer, ForeignKey("clusters.id"), nullable=False),
    Column("at_utc", String(20), nullable=False),
    Column("text", Text, nullable=False),
    Column("bound", Float),  # the slowdown it may cause (0.3: 30 %); past it an alert stays open; NULL: any
    Column("created_utc", String(20), nullable=False),
    Column("removed_utc", String(20)),
    Index("events_by_cluster", "cluster_id", "at_utc"),
)
