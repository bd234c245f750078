"""Time to build an HTML report for a run of 1 million samples; target under 10 s.

The run is synthetic (stored through the normal store API): 5 tests x 2 parameter sets x 20
sizes x 5,000 samples = 1,000,000 samples, with lognormal times following a Hockney curve.

    .venv/bin/python bench/report_speed.py [--rounds 3]"""

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np
from common import median, write

from scope.fetch.facts import derive_stored
from scope.store import Store
from scope.views.report import build


def synthetic_run(store: Store, samples_per_point: int) -> int:
    rng = np.random.default_rng(1)
    rid = store.begin_run(["synthetic"], "bench", 2, "1M samples")
    i = 0
    for t, test in enumerate(["p2p.pingpong", "p2p.pingping", "p2p.stream", "p2p.bistream", "p2p.exchange"]):
        for mode in ("standard", "sync"):
            for k in range(20):
                size = 0 if k == 0 else 2 ** (k + 2)
                med = (1.0 + 0.2 * t) + size / 8000.0
                x = rng.lognormal(np.log(med), 0.08, samples_per_point)
                xs = np.sort(x)
                store.add_point(
                    rid,
                    {
                        "type": "point",
                        "test": test,
                        "index": i,
                        "params": {"size": size, "mode": mode},
                        "unit": "us",
                        "count": len(x),
                        "bytes_per_op": size,
                        "ops_per_iter": 1,
                        "batch": 1,
                        "warmup": {"iterations": 24, "seconds": 0.01, "converged": True},
                        "stop": "precision",
                        "stats": {
                            "median": float(np.median(x)),
                            "min": float(xs[0]),
                            "max": float(xs[-1]),
                            "ci_lo": float(xs[len(x) // 2 - 70]),
                            "ci_hi": float(xs[len(x) // 2 + 70]),
                            "p5": float(xs[len(x) // 20]),
                            "p95": float(xs[-len(x) // 20]),
                        },
                        "bandwidth_MBps": {"median": size / float(np.median(x))},
                        "samples": x.tolist(),
                    },
                )
                i += 1
    store.finish_run(rid, "complete")
    return rid


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        store = Store(Path(d) / "r.db")
        rid = synthetic_run(store, 5000)
        n = sum(p["count"] for p in store.points(rid))
        times, size = [], 0
        for _ in range(a.rounds):
            t0 = time.perf_counter()
            out = build([derive_stored(store, rid)], Path(d) / "report.html")
            times.append(time.perf_counter() - t0)
            size = out.stat().st_size
    m = median(times)
    lines = [
        f"{a.rounds} builds of one report; {n:,} samples in 200 points (5 tests x 2 modes x 20 sizes)",
        "",
        "| builds | median (s) | min (s) | max (s) | HTML size |",
        "|---:|---:|---:|---:|---:|",
        f"| {a.rounds} | {m:.2f} | {min(times):.2f} | {max(times):.2f} | {size / 1e6:.1f} MB |",
        "",
        f"**median {m:.2f} s** (target < 10 s: {'met' if m < 10 else 'NOT met'})",
    ]
    write(
        "report_speed",
        "Report build time for a run of 1 million samples",
        lines,
        {"samples": n, "seconds": times, "bytes": size},
    )


if __name__ == "__main__":
    main()
