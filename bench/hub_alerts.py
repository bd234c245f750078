"""An alert's receiver down for 10 minutes (issue 71): the pushes made meanwhile are stored at
their usual speed, and the alert is delivered once the receiver is back.

A live hub (`scope hub serve`, SQLite) with a webhook rule to a port nothing listens on.  A
recorded run (tests/fixtures/launches, 3 launches) is pushed as a nightly history: 6 quiet
nights, then a night 25 % slower, which raises the alert whose delivery fails.  For --down
seconds (default 600) the script pushes every few seconds, alternating a push to the cluster whose
receiver is down and one to a cluster with no rule; before the outage it pushed the same way
with the receiver up.  Then a receiver listens on the port, and the script waits for the alert.
Retries back off from SCOPE_HUB_RETRY_S (here --retry, default 10 s) doubling to an hour, so
the wait after the return is at most one back-off step.

    .venv/bin/python bench/hub_alerts.py [--down 600] [--retry 10] [--every 5]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import statistics
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from common import ROOT, write

sys.path.insert(0, str(ROOT))
from scope.hub import tokens  # noqa: E402
from scope.hub.db import migrate, open_engine  # noqa: E402
from scope.store import Store  # noqa: E402
from scope.store.bundle import dump, encode  # noqa: E402
from tests.conftest import replay  # noqa: E402 - the recorded fixture, stored as `scope import` stores it
from tests.hub_server import Hub, night  # noqa: E402
from tests.pg_server import free_port  # noqa: E402


def listen(port: int, got: list):
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            n = int(self.headers.get("content-length") or 0)
            got.append((time.monotonic(), json.loads(self.rfile.read(n))))
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--down", type=float, default=600, help="seconds the receiver is down (default 600)")
    ap.add_argument("--retry", type=float, default=10, help="SCOPE_HUB_RETRY_S: the first back-off, s (default 10)")
    ap.add_argument("--every", type=float, default=5, help="seconds between pushes (default 5)")
    ap.add_argument("--control", action="store_true",
                    help="the same schedule, the receiver up throughout: push times as the history grows")  # fmt: skip
    a = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="scope-alerts-bench-"))
    local = tmp / "local.db"
    rid = replay("launches", local)
    store = Store(local)
    base = json.loads(gzip.decompress(encode(dump(store, rid))))
    store.close()
    url = str(tmp / "hub.db")
    eng = open_engine(url, pool=1)
    migrate(eng)
    tok = {n: tokens.add_token(eng, n)[1] for n in ("down", "steady")}
    port = free_port()
    os.environ["SCOPE_HUB_RETRY_S"] = str(a.retry)
    os.environ["SCOPE_HUB_ALERT_POLL_S"] = "1"
    from scope.hub import alerts, db

    with db.writing(eng) as conn:
        alerts.add_rule(conn, tokens.cluster_id(conn, "down"), "webhook", f"http://127.0.0.1:{port}/hook", 0.05, [],
                        db.now_utc())  # fmt: skip
    got: list = []
    day = {"down": 0, "steady": 0}
    early = listen(port, got) if a.control else None

    def one(cluster: str, factor: float) -> tuple[int, float]:
        day[cluster] += 1
        k = day[cluster]
        data = night(base, 1, factor).replace(
            b"2026-11-01T10:00:00Z", f"2026-{1 + k // 28:02d}-{1 + k % 28:02d}T10:00:00Z".encode()
        )
        t0 = time.perf_counter()
        code = hub.push(data, tok[cluster])[0]
        return code, time.perf_counter() - t0

    def quiet(k: int) -> float:
        return 1 + 0.003 * ((k * 7) % 5)

    with Hub(url) as hub:
        for k in range(1, 7):
            assert one("down", quiet(k))[0] == 201 and one("steady", quiet(k))[0] == 201
        up = []  # the receiver up (nothing to send yet): the usual push time
        for k in range(20):
            up += [one("steady", quiet(k))[1], one("down", quiet(k))[1]]
            time.sleep(a.every / 4)
        code, _ = one("down", 1.25)  # the step: its alert cannot be delivered
        assert code == 201
        t_down = time.monotonic()
        during, stored, k = [], 0, 0
        while time.monotonic() - t_down < a.down:
            for cluster, factor in (("down", 1.25), ("steady", quiet(k))):
                code, dt = one(cluster, factor)
                stored += code == 201
                during.append(dt)
            k += 1
            time.sleep(a.every)
        state = hub.get_json("/api/clusters/down/alerts")["alerts"]
        tries = max((d["attempts"] for x in state for d in x["deliveries"]), default=0)
        failing = sum(1 for x in state for d in x["deliveries"] if d["delivered_utc"] is None)
        server = early or listen(port, got)
        t_back = time.monotonic()
        while not got and time.monotonic() - t_back < 3600:
            time.sleep(0.5)
        deadline = time.monotonic() + 3 * a.retry + 30  # every delivery of the outage, not only the first
        while time.monotonic() < deadline:
            delivered = hub.get_json("/api/clusters/down/alerts")["alerts"]
            if all(d["delivered_utc"] for x in delivered for d in x["deliveries"]):
                break
            time.sleep(0.5)
        server.shutdown()
        for x in delivered:
            print(f"alert {x['id']}: {x['kind']} {x['step'] * 100:+.1f} % at run {x['run_id']} (raised by "
                  f"{x['raised_by']}), {x['test']} {x['size']} B")  # fmt: skip
    wait = max(0.0, got[0][0] - t_back) if got else float("nan")
    med_up, med_down = statistics.median(up), statistics.median(during)
    p95 = lambda xs: sorted(xs)[int(0.95 * (len(xs) - 1))]  # noqa: E731
    rows = [
        ("receiver down", f"{a.down:.0f} s"),
        ("pushes during the outage", f"{len(during)}, stored {stored}"),
        ("push time, receiver up: median / p95", f"{med_up * 1e3:.1f} / {p95(up) * 1e3:.1f} ms ({len(up)} pushes)"),
        ("push time, receiver down: median / p95", f"{med_down * 1e3:.1f} / {p95(during) * 1e3:.1f} ms"),
        ("down / up (medians)", f"{med_down / med_up:.2f}"),
        ("alerts, undelivered when it came back", f"{len(state)} alerts, {failing} deliveries, {tries} tries each"),
        ("delivered after it came back", f"{wait:.1f} s (back-off from {a.retry:g} s)"),
        ("messages received", f"{len(got)}, {sum(len(b['alerts']) for _, b in got)} alerts in them"),
        ("deliveries marked delivered", f"{sum(1 for x in delivered for d in x['deliveries'] if d['delivered_utc'])}"),
    ]
    argv = f"--down {a.down:g} --retry {a.retry:g} --every {a.every:g}"
    lines = [f"`.venv/bin/python bench/hub_alerts.py {argv}`: SQLite, one worker.", "", "| what | measured |",
             "|---|---|", *(f"| {k} | {v} |" for k, v in rows)]  # fmt: skip
    data = {"down_s": a.down, "retry_s": a.retry, "push_up_s": up, "push_down_s": during, "stored": stored,
            "delivered_after_s": wait, "messages": len(got)}  # fmt: skip
    if a.control:
        lines += ["", "Control: the receiver was up throughout (the alert delivered at once); the 'down' rows are "
                  "the same schedule's push times with it up."]  # fmt: skip
    name = "hub_alerts_control" if a.control else "hub_alerts"
    write(name, "An alert's receiver down (bench/hub_alerts.py)" + (", control" if a.control else ""), lines, data)


if __name__ == "__main__":
    main()
