"""A live hub for the tests: `scope hub serve` in a process of its own on a free port, as a site
runs it, stopped (or killed) by the test; and the HTTP a client speaks to it."""

from __future__ import annotations

import contextlib
import gzip
import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

from tests.pg_server import free_port

ROOT = Path(__file__).resolve().parent.parent


class Hub:
    def __init__(self, url: str, *flags: str, workers: int = 1):
        self.db, self.flags, self.workers = url, flags, workers
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen | None = None

    def start(self) -> Hub:
        argv = [sys.executable, "-m", "scope", "hub", "serve", "--db", self.db, "--port", str(self.port)]
        argv += ["--workers", str(self.workers), *self.flags]
        env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
        self.log = open(Path(os.environ.get("TMPDIR", "/tmp")) / f"scope-hub-{self.port}.log", "w+")  # noqa: SIM115
        self.proc = subprocess.Popen(argv, stdout=self.log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            with contextlib.suppress(OSError, ValueError):
                if self.get("/api/health")[0] == 200:
                    return self
            if self.proc.poll() is not None:
                self.log.seek(0)
                raise RuntimeError(f"the hub ended: {self.log.read()[-2000:]}")
            time.sleep(0.1)
        raise RuntimeError("the hub did not answer in 60 s")

    def stop(self, sig=signal.SIGTERM) -> None:
        if self.proc and self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, sig)
            self.proc.wait(30)
        self.log.close()

    def __enter__(self) -> Hub:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def request(self, method: str, path: str, data: bytes | None = None, headers: dict | None = None):
        """(status, body, headers) of one request; a redirect is returned, not followed."""
        req = urllib.request.Request(self.base + path, data=data, headers=headers or {}, method=method)
        try:
            with NO_REDIRECTS.open(req, timeout=60) as r:
                return r.status, r.read(), dict(r.headers)
        except urllib.error.HTTPError as e:
            return e.code, e.read(), dict(e.headers)

    def get(self, path: str, token: str | None = None):
        return self.request("GET", path, headers={"Authorization": f"Bearer {token}"} if token else {})

    def get_json(self, path: str, token: str | None = None):
        code, body, _ = self.get(path, token)
        assert code == 200, (code, body[:300])
        return json.loads(body)

    def push(self, data: bytes, token: str | None, cluster: str | None = None):
        headers = {"Content-Type": "application/gzip"}
        if token is not None:
            headers["Authorization"] = f"Bearer {token}"
        if cluster is not None:
            headers["X-Scope-Cluster"] = cluster
        code, body, _ = self.request("POST", "/api/runs", data, headers)
        with contextlib.suppress(ValueError):
            return code, json.loads(body)
        return code, body


class _Stay(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None  # the 3xx comes back as an HTTPError with its headers


NO_REDIRECTS = urllib.request.build_opener(_Stay)


def relabelled(data: bytes, label: str) -> bytes:
    """A bundle of another run: the same measurements under another label (its own digest)."""
    doc = json.loads(gzip.decompress(data))
    doc["run"]["label"] = label
    return gzip.compress(json.dumps(doc).encode())


def night(base: dict, day: int, factor: float, mpi: str | None = None, cvars: dict | None = None) -> bytes:
    """One night's run of a recorded history: the recorded run (its decoded bundle) started on
    2026-11-DAY with every point's statistics and launch medians scaled by `factor`, its MPI
    named `mpi` and its MPI_T control variables read as `cvars` where given."""
    doc = json.loads(json.dumps(base))
    doc["run"]["started_utc"] = f"2026-11-{day:02d}T10:00:00Z"
    for p in doc["points"]:
        stats = p["record"].get("stats") or {}
        for key in ("median", "ci_lo", "ci_hi", "min", "max", "mean"):
            if isinstance(stats.get(key), (int, float)):
                stats[key] *= factor
        launches = p["record"].get("launches") or {}  # the launch medians: the detector's replicates
        launches["medians"] = [m * factor for m in launches.get("medians") or ()]
    if mpi:
        doc["context"]["mpi"]["library"] = mpi
    if cvars:
        transport = doc["context"]["mpi"].setdefault("transport", None) or {}
        doc["context"]["mpi"]["transport"] = {**transport, "cvars": {**(transport.get("cvars") or {}), **cvars}}
    return json.dumps(doc).encode()


def watched_page(browser, width: int):
    """A Chromium page `width` px wide (CSP bypassed: the tests read the pages, not the policy)
    and the list its console errors, page errors and failed responses are collected into."""
    ctx = browser.new_context(viewport={"width": width, "height": 900}, bypass_csp=True)
    page = ctx.new_page()
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("response", lambda r: r.status < 400 or errors.append(f"{r.status} {r.url}"))
    return ctx, page, errors
