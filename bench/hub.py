"""What the results hub costs at a site's scale (issue 53): a hub holding 1,000 clusters and
100,000 runs serves the cluster list and a cluster's history to 20 concurrent readers (latency
percentiles on loopback), stores a 10 MB push, and stays within its memory.

The database is filled through the hub's own tables (hub/db.py), as 100,000 pushes would leave
it (each run a row with its figures and collectives, each with a bundle, the cluster counters
kept), without spending an hour pushing them one by one; the pushes timed are real ones, through
`scope push`'s client to the live server.  The load generator is this script: 20 threads, each a
keep-alive HTTP connection, asking in turn for the list and for a random cluster's page.

    .venv/bin/python bench/hub.py [--clusters 1000] [--runs 100000] [--seconds 20] [--db URL]
"""

from __future__ import annotations

import argparse
import gzip
import http.client
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from common import ROOT, write

from scope.hub import db, tokens
from scope.hub.app import Config, Hub
from scope.hub.client import push

COLL = ["coll.allreduce", "coll.bcast", "coll.alltoall"]


def seed(url: str, clusters: int, runs: int) -> None:
    eng = db.open_engine(url, pool=1)
    db.migrate(eng)
    rng = random.Random(7)
    blob = gzip.compress(b'{"format":"scope-run"}')  # never opened by the pages timed
    per = runs // clusters
    with db.writing(eng) as conn:
        conn.execute(
            db.clusters.insert(),
            [{"id": c + 1, "name": f"cluster-{c:04d}", "created_utc": "2026-01-01T00:00:00Z"} for c in range(clusters)],
        )
    rid = 0
    for c in range(clusters):
        rows, bundles = [], []
        lat, bw = rng.uniform(0.8, 3.0), rng.uniform(5e3, 25e3)
        for k in range(per):
            rid += 1
            day = f"2026-{1 + k * 11 // per:02d}-{1 + k % 28:02d}T{k % 24:02d}:00:00Z"
            x = lat * rng.lognormvariate(0, 0.03)
            cells = [
                [t, p, s, x * (1 + s / 4096) * p / 2] for t in COLL for p in (2, 4, 8, 16) for s in (8, 1024, 65536)
            ]
            rows.append({
                "id": rid, "cluster_id": c + 1, "digest": f"{rid:064x}", "pushed_utc": day, "started_utc": day,
                "status": "complete", "label": f"nightly {k}", "origin": "scope", "ranks": 16, "mpi": "MPICH 5.0.2",
                "launches": 3, "points": 180, "bytes": 300_000,
                "series": 0, "judged": 1,  # its bundle a stand-in: no series; judged, as a push to this hub is
                "latency": x, "latency_lo": x * 0.98, "latency_hi": x * 1.02, "latency_at": "8 B, 2 procs",
                "bandwidth": bw, "bandwidth_lo": bw * 0.97, "bandwidth_hi": bw * 1.02, "bandwidth_at": "4 MiB",
                "allreduce": 3 * x, "allreduce_lo": 2.9 * x, "allreduce_hi": 3.1 * x, "allreduce_at": "8 B, 16 procs",
                "collectives": json.dumps(cells),
            })  # fmt: skip
            bundles.append({"run_id": rid, "data": blob})
        with db.writing(eng) as conn:
            conn.execute(db.runs.insert(), rows)
            conn.execute(db.bundles.insert(), bundles)
            last = rows[-1]
            conn.execute(
                db.clusters.update()
                .where(db.clusters.c.id == c + 1)
                .values(runs=per, last_push_utc=last["pushed_utc"], latest_run_id=last["id"],
                        latest_started_utc=last["started_utc"])
            )  # fmt: skip
    eng.dispose()


def serve(url: str, port: int, workers: int) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    argv = [sys.executable, "-m", "scope", "hub", "serve", "--db", url, "--port", str(port), "--workers", str(workers)]
    p = subprocess.Popen(argv, env=env, stderr=subprocess.DEVNULL, start_new_session=True)
    for _ in range(300):
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            c.request("GET", "/api/health")
            if c.getresponse().status == 200:
                return p
        except OSError:
            time.sleep(0.1)
    raise SystemExit("the hub did not start")


def load(port: int, clusters: int, readers: int, seconds: float) -> dict[str, list[float]]:
    """`readers` threads, each one keep-alive connection, asking in turn for the list and a
    random cluster (HTML), then the same as JSON: each request's wall time, ms."""
    paths = {
        "list": "/",
        "cluster": "/clusters/{}",
        "list (JSON)": "/api/clusters",
        "cluster (JSON)": "/api/clusters/{}",
    }
    out: dict[str, list[float]] = {k: [] for k in paths}
    errors: list[str] = []
    end = time.monotonic() + seconds

    def reader(seed: int) -> None:
        rng = random.Random(seed)
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        while time.monotonic() < end:
            for name, path in paths.items():
                t0 = time.perf_counter()
                conn.request("GET", path.format(f"cluster-{rng.randrange(clusters):04d}"))
                r = conn.getresponse()
                r.read()
                out[name].append((time.perf_counter() - t0) * 1e3)
                if r.status != 200:
                    errors.append(f"{path} {r.status}")

    threads = [threading.Thread(target=reader, args=(k,)) for k in range(readers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise SystemExit(f"{len(errors)} requests failed, e.g. {errors[0]}")
    return out


def big_bundle(tmp: Path, rows: int) -> bytes:
    """A run of `rows` imported points with times of full precision (they compress as measured
    times do): its bundle, ~10 MB for 1.3 million rows."""
    rng = random.Random(3)
    csv = tmp / "big.csv"
    with open(csv, "w") as f:
        f.write("size,time_us\n")
        f.writelines(f"{8 * (k % 4096 + 1)},{1 + k / 5e4 + rng.random():.9f}\n" for k in range(rows))
    store = tmp / "big.db"
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    subprocess.run([sys.executable, "-m", "scope", "--db", str(store), "import", str(csv)], env=env, check=True,
                   capture_output=True)  # fmt: skip
    out = tmp / "big.gz"
    subprocess.run([sys.executable, "-m", "scope", "--db", str(store), "export", "last", "--format", "bundle", "-o",
                    str(out)], env=env, check=True, capture_output=True)  # fmt: skip
    return out.read_bytes()


def pct(xs: list[float], q: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, int(q * len(s)))]


def rss_mb(pid: int) -> float:
    """The largest resident set of the hub's processes (the server and its workers), MB."""
    pids = [pid] + [
        int(p) for p in subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout.split()
    ]
    peak = 0.0
    for p in pids:
        for line in Path(f"/proc/{p}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                peak = max(peak, int(line.split()[1]) / 1024)
    return peak


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--clusters", type=int, default=1000)
    ap.add_argument("--runs", type=int, default=100_000)
    ap.add_argument("--readers", type=int, default=20)
    ap.add_argument("--seconds", type=float, default=20)
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--big-rows", type=int, default=1_300_000)  # ~10 MB on the wire
    ap.add_argument("--db", help="a PostgreSQL URL (default: a SQLite file in a temporary folder)")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        url = a.db or str(tmp / "hub.db")
        t0 = time.monotonic()
        seed(url, a.clusters, a.runs)
        seeded = time.monotonic() - t0
        # what each cluster's last push did after storing: its page and JSON drawn and kept
        hub = Hub(Config(url))
        t0 = time.monotonic()
        for c in range(a.clusters):
            hub.draw_cluster(f"cluster-{c:04d}")
        drawing = (time.monotonic() - t0) / a.clusters
        hub.engine.dispose()
        eng = db.open_engine(url, pool=1)
        _, token = tokens.add_token(eng, "cluster-0000")
        eng.dispose()
        port = 18470 + os.getpid() % 1000
        server = serve(url, port, a.workers)
        try:
            load(port, a.clusters, 2, 2)  # warm: the first requests compile templates
            lat = load(port, a.clusters, a.readers, a.seconds)
            data = big_bundle(tmp, a.big_rows)
            pushes = []
            for k in range(3):
                doc = json.loads(gzip.decompress(data))
                doc["run"]["label"] = f"big {k}"
                body = gzip.compress(json.dumps(doc).encode(), compresslevel=6)
                t = time.perf_counter()
                answer = push(f"http://127.0.0.1:{port}", token, body)
                pushes.append(time.perf_counter() - t)
                assert answer["stored"], answer
            peak = rss_mb(server.pid)
        finally:
            server.terminate()
            server.wait(30)
    rows = [
        f"Hub: {a.clusters:,} clusters, {a.runs:,} runs ({'PostgreSQL' if a.db else 'SQLite'}, {a.workers} worker); "
        f"database filled in {seeded:.0f} s, and each cluster's page and JSON drawn as its last push draws them "
        f"({drawing * 1e3:.0f} ms a cluster). {a.readers} readers on loopback for {a.seconds:g} s, each a keep-alive "
        "connection asking in turn for the list and a random cluster, as HTML and as JSON.",
        "",
        "| request | requests | p50 (ms) | p95 (ms) | p99 (ms) | goal p95 |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for name, xs in lat.items():
        rows.append(f"| {name} | {len(xs)} | {statistics.median(xs):.1f} | {pct(xs, 0.95):.1f} | {pct(xs, 0.99):.1f} "
                    "| < 300 |")  # fmt: skip
    rows += [
        "",
        f"Push of a run of {a.big_rows:,} imported points, {len(body) / 1e6:.1f} MB on the wire: "
        + ", ".join(f"{t:.2f}" for t in pushes)
        + " s (goal < 2 s), from the client's send to the hub's answer "
        "(read, checked through, summarised, stored).",
        f"Hub process peak resident memory: {peak:.0f} MB (goal < 500 MB).",
    ]
    write("hub", "The results hub at a site's scale", rows, {
        "clusters": a.clusters, "runs": a.runs, "readers": a.readers, "seconds": a.seconds, "workers": a.workers,
        "backend": "postgresql" if a.db else "sqlite",
        "latency_ms": {k: {"n": len(v), "p50": statistics.median(v), "p95": pct(v, 0.95), "p99": pct(v, 0.99)}
                       for k, v in lat.items()},
        "push_s": pushes, "draw_ms_per_cluster": drawing * 1e3, "push_MB": len(body) / 1e6, "peak_rss_MB": peak,
    })  # fmt: skip


if __name__ == "__main__":
    main()
