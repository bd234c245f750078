"""The hub at /metrics in the Prometheus text format (issue 71), so a site's Prometheus and Grafana
read SCOPE's figures beside the rest of the machine room.  A collector reads the hub's state at
scrape time (prometheus_client's custom-collector pattern): each cluster's headline figures from
the runs the cluster list shows (cached once a push), its stored runs, open alerts and failing
deliveries; a histogram times the requests of this worker.  Units are Prometheus's base units
(seconds, bytes per second), named in each metric's name."""

from __future__ import annotations

import calendar
import time

from prometheus_client import CollectorRegistry, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from sqlalchemy import func, select
from starlette.routing import Match

from scope.hub.tables import FIGURES, alerts, clusters, deliveries

# figure -> (metric, help, factor from the hub's unit: µs -> s, MB/s -> bytes/s)
HEADLINES = {
    "latency": ("scope_latency_seconds", "p2p.pingpong's one-way latency at the smallest size (median, 95 % CI)", 1e-6),
    "bandwidth": ("scope_bandwidth_bytes_per_second", "p2p.stream's bandwidth at the largest size", 1e6),
    "allreduce": ("scope_allreduce_seconds", "coll.allreduce's time at its headline size and process count", 1e-6),
}
STATS = (("median", ""), ("ci_low", "_lo"), ("ci_high", "_hi"))
# request times: a millisecond page from cache to a push of a large run
BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
MEDIA = "text/plain; version=0.0.4; charset=utf-8"  # what generate_latest writes, and every Prometheus reads


def _to_unix(utc: str | None) -> float | None:
    if not utc:
        return None
    return float(calendar.timegm(time.strptime(utc, "%Y-%m-%dT%H:%M:%SZ")))


class HubCollector:
    """What the hub holds, read when Prometheus scrapes (never kept in the worker)."""

    def __init__(self, hub):
        self.hub = hub

    def collect(self):
        listed = self.hub._list()  # the cluster list's rows: drawn once a push, cached
        for f in FIGURES:
            name, said, factor = HEADLINES[f]
            g = GaugeMetricFamily(
                name, said + "; from the newest run that measured it", labels=["cluster", "at", "stat"]
            )
            change = GaugeMetricFamily(
                f"scope_{f}_change_ratio",
                f"the newest {f} against the median of the runs of its origin before it (0.05: 5 % higher)",
                labels=["cluster"],
            )
            for r in listed:
                for stat, suffix in STATS:
                    v = r.get(f + suffix)
                    if v is not None:
                        g.add_metric([r["name"], r.get(f"{f}_at") or "", stat], v * factor)
                if r.get(f"{f}_change") is not None:
                    change.add_metric([r["name"]], r[f"{f}_change"])
            yield g
            yield change
        runs = CounterMetricFamily("scope_hub_runs_stored", "runs pushed and stored", labels=["cluster"])
        started = GaugeMetricFamily(
            "scope_latest_run_start_timestamp_seconds", "when the cluster's newest run started (Unix time)",
            labels=["cluster"],
        )  # fmt: skip
        for r in listed:
            runs.add_metric([r["name"]], r["runs"])
            t = _to_unix(r.get("started_utc"))
            if t is not None:
                started.add_metric([r["name"]], t)
        yield runs
        yield started
        yield from self._alerts([r["name"] for r in listed])

    def _alerts(self, names: list[str]):
        open_q = (
            select(clusters.c.name, func.count())
            .join(alerts, alerts.c.cluster_id == clusters.c.id)
            .where(alerts.c.status == "open")
            .group_by(clusters.c.name)
        )
        failing_q = (
            select(clusters.c.name, func.count())
            .join(alerts, alerts.c.cluster_id == clusters.c.id)
            .join(deliveries, deliveries.c.alert_id == alerts.c.id)
            .where(deliveries.c.delivered_utc.is_(None), deliveries.c.last_error.is_not(None))
            .group_by(clusters.c.name)
        )
        with self.hub.engine.connect() as conn:
            opened, failing = dict(conn.execute(open_q).all()), dict(conn.execute(failing_q).all())
        a = GaugeMetricFamily("scope_hub_alerts_open", "alerts not yet triaged", labels=["cluster"])
        d = GaugeMetricFamily(
            "scope_hub_alert_deliveries_failing", "alert deliveries that failed and are retried", labels=["cluster"]
        )
        for n in names:
            a.add_metric([n], opened.get(n, 0))
            d.add_metric([n], failing.get(n, 0))
        yield a
        yield d


class Metrics:
    """A hub's registry: the collector above and this worker's request times, by route."""

    def __init__(self, hub):
        self.registry = CollectorRegistry(auto_describe=False)
        self.registry.register(HubCollector(hub))
        self.requests = Histogram(
            "scope_hub_request_duration_seconds",
            "time from a request's arrival to its answer's last byte, this worker (by route template)",
            ["method", "route"],
            buckets=BUCKETS,
            registry=self.registry,
        )

    def text(self) -> bytes:
        return generate_latest(self.registry)


class Timed:
    """ASGI middleware: each HTTP request's time, labelled by its route's template (a path no
    route takes is "other", so a fuzzer's paths do not become series)."""

    def __init__(self, app, metrics: Metrics, routes):
        self.app, self.metrics, self.routes = app, metrics, routes

    def _route(self, scope) -> str:
        for r in self.routes:
            if r.matches(scope)[0] != Match.NONE:
                return r.path
        return "other"

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        t0 = time.perf_counter()
        try:
            await self.app(scope, receive, send)
        finally:
            method = scope["method"] if scope["method"] in ("GET", "POST", "DELETE", "HEAD") else "other"
            self.metrics.requests.labels(method, self._route(scope)).observe(time.perf_counter() - t0)
