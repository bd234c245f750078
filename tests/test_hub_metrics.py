"""The hub's /metrics (issue 71) against real parts: a live hub holding a recorded history, its
text parsed by prometheus_client's own parser, and Debian's Prometheus scraping it and answering
PromQL, the Grafana dashboard's queries among them."""

from __future__ import annotations

import gzip
import json
import os
import re
import shutil
import subprocess
import time
import urllib.parse
import urllib.request

import pytest

from tests.conftest import ROOT
from tests.hub_server import Hub, night
from tests.pg_server import free_port
from tests.test_hub import token

pytestmark = pytest.mark.service
DASHBOARD = ROOT / "contrib" / "grafana" / "scope-hub.json"


def families(text: str) -> dict:
    from prometheus_client.parser import text_string_to_metric_families

    return {f.name: f for f in text_string_to_metric_families(text)}


def value(fams: dict, name: str, **labels) -> float | None:
    """The value of sample `name` with `labels` (a counter's family is named without _total)."""
    for f in fams.values():
        for s in f.samples:
            if s.name == name and all(s.labels.get(k) == v for k, v in labels.items()):
                return s.value
    return None


class Prometheus:
    """Debian's Prometheus scraping one target every second, its HTTP API on a port of its own."""

    def __init__(self, tmp_path, target: str):
        exe = shutil.which("prometheus")
        if exe is None:
            if os.environ.get("CI"):
                pytest.fail("Prometheus is required in CI (.ci/run installs Debian's)")
            pytest.skip("Prometheus is not installed (apt-get install prometheus)")
        self.port = free_port()
        cfg = tmp_path / "prometheus.yml"
        cfg.write_text(f"global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nscrape_configs:\n"
                       f"  - job_name: scope-hub\n    static_configs:\n      - targets: ['{target}']\n")  # fmt: skip
        argv = [exe, f"--config.file={cfg}", f"--storage.tsdb.path={tmp_path / 'tsdb'}",
                f"--web.listen-address=127.0.0.1:{self.port}"]  # fmt: skip
        self.log = open(tmp_path / "prometheus.log", "w+")  # noqa: SIM115
        self.proc = subprocess.Popen(argv, stdout=self.log, stderr=subprocess.STDOUT)

    def query(self, expr: str) -> dict:
        url = f"http://127.0.0.1:{self.port}/api/v1/query?" + urllib.parse.urlencode({"query": expr})
        try:
            with urllib.request.urlopen(url, timeout=5) as r:
                return json.loads(r.read())
        except OSError as e:
            return {"status": "down", "error": str(e)}

    def until(self, expr: str, seconds: float = 60) -> list:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            got = self.query(expr)
            if got.get("status") == "success" and got["data"]["result"]:
                return got["data"]["result"]
            time.sleep(0.5)
        self.log.seek(0)
        raise AssertionError(f"Prometheus never answered {expr}: {self.query(expr)}\n{self.log.read()[-2000:]}")

    def close(self):
        self.proc.terminate()
        self.proc.wait(10)


def test_prometheus_scrapes_the_hub_and_the_dashboard_reads_it(tmp_path, local, monkeypatch):
    monkeypatch.setenv("SCOPE_HUB_ALERT_POLL_S", "0.2")
    url = str(tmp_path / "hub.db")
    alpha = token(url, "alpha")
    base = json.loads(gzip.decompress(local[2]["launches"]))
    with Hub(url) as hub:
        for k in range(1, 8):  # a history whose 7th night is 25 % slower: two open alerts
            assert hub.push(night(base, k, 1.25 if k == 7 else 1 + 0.003 * ((k * 7) % 5)), alpha)[0] == 201
        deadline = time.monotonic() + 20
        while not hub.get_json("/api/clusters/alpha/alerts")["alerts"] and time.monotonic() < deadline:
            time.sleep(0.2)
        listed = hub.get_json("/api/clusters")["clusters"][0]
        code, body, _ = hub.get("/metrics")
        assert code == 200
        fams = families(body.decode())
        # the figures as the cluster list shows them, in base units
        assert value(fams, "scope_latency_seconds", cluster="alpha", stat="median") == pytest.approx(
            listed["latency"] * 1e-6, rel=1e-12
        )
        assert value(fams, "scope_latency_seconds", cluster="alpha", stat="ci_high") == pytest.approx(
            listed["latency_hi"] * 1e-6, rel=1e-12
        )
        at = [s.labels["at"] for s in fams["scope_latency_seconds"].samples][0]
        assert at == listed["latency_at"]
        assert value(fams, "scope_latency_change_ratio", cluster="alpha") == pytest.approx(listed["latency_change"])
        assert listed["latency_change"] > 0.2  # the 7th night's 25 %
        assert value(fams, "scope_hub_runs_stored_total", cluster="alpha") == 7
        opened = len(hub.get_json("/api/clusters/alpha/alerts")["alerts"])
        assert opened >= 1 and value(fams, "scope_hub_alerts_open", cluster="alpha") == opened
        pushes = value(fams, "scope_hub_request_duration_seconds_count", method="POST", route="/api/runs")
        assert pushes == 7
        assert (
            value(fams, "scope_latest_run_start_timestamp_seconds", cluster="alpha") == 1794045600.0
        )  # 2026-11-07T10:00Z
        # a fuzzer's path is one series, "other", not a series a path
        for p in ("/nothing/1", "/nothing/2"):
            hub.get(p)
        again = families(hub.get("/metrics")[1].decode())
        routes = {s.labels["route"] for s in again["scope_hub_request_duration_seconds"].samples}
        assert "other" in routes and not any(r.startswith("/nothing") for r in routes)

        prom = Prometheus(tmp_path, f"127.0.0.1:{hub.port}")
        try:
            got = prom.until('scope_latency_seconds{cluster="alpha",stat="median"}')
            assert float(got[0]["value"][1]) == pytest.approx(listed["latency"] * 1e-6, rel=1e-12)
            # every query of the Grafana dashboard is PromQL Prometheus takes, over metrics the hub serves
            dash = json.loads(DASHBOARD.read_text())
            exprs = [t["expr"] for p in dash["panels"] for t in p["targets"]]
            assert len(exprs) >= 9
            served = set(again)
            for e in exprs:
                for m in re.findall(r"\b(scope_[a-z_]+)", e):
                    assert re.sub(r"_(total|bucket|count|sum)$", "", m) in served, (m, sorted(served))
                q = e.replace("$cluster", "alpha").replace("$__rate_interval", "1m")
                answer = prom.query(q)
                assert answer.get("status") == "success", (q, answer)
            prom.until('scope_hub_alerts_open{cluster="alpha"}')
        finally:
            prom.close()


def test_a_private_hub_asks_a_read_token_for_its_metrics(tmp_path):
    url = str(tmp_path / "hub.db")
    reader = token(url, "--read")
    with Hub(url, "--private") as hub:
        assert hub.get("/metrics")[0] == 401
        code, body, _ = hub.get("/metrics", reader)
        assert code == 200 and b"scope_hub_request_duration_seconds" in body
