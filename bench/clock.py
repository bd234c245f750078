"""The global-clock method against barrier-based timing, alternated in one run: time for
allreduce (8 B and 64 KiB, 2 ranks) to reach a ±2 % confidence interval of its median, the
medians themselves, and the clock's residual error (on one host the true offset is known,
so the estimate's distance from it is the measured error).

    .venv/bin/python bench/clock.py [--rounds 5]"""

import argparse

from common import median, mpirun, toolchain, write


def run(tc, engine, timing):
    recs, wall = mpirun(
        tc,
        2,
        [
            engine,
            "--tests",
            "coll.allreduce",
            "--sizes",
            "8,64K",
            "--precision",
            "0.02",
            "--budget",
            "5",
            "--no-samples",
            "--timing",
            timing,
        ],
    )
    pts = {r["params"]["size"]: r for r in recs if r["type"] == "point"}
    clock = next((r for r in recs if r["type"] == "clock"), None)
    end = next(r for r in recs if r["type"] == "end")
    return pts, clock, end["seconds"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    a = ap.parse_args()
    tc, engine = toolchain()
    rows = {
        k: []
        for k in (
            "w8_s",
            "w64_s",
            "b8_s",
            "b64_s",
            "w8_med",
            "w64_med",
            "b8_med",
            "b64_med",
            "w_total",
            "b_total",
            "err",
            "pred",
            "invalid",
        )
    }
    for r in range(a.rounds):
        for timing in ("window", "barrier") if r % 2 == 0 else ("barrier", "window"):
            pts, clock, total = run(tc, engine, timing)
            k = timing[0]
            rows[f"{k}8_s"].append(pts[8]["seconds"])
            rows[f"{k}64_s"].append(pts[65536]["seconds"])
            rows[f"{k}8_med"].append(pts[8]["stats"]["median"])
            rows[f"{k}64_med"].append(pts[65536]["stats"]["median"])
            rows[f"{k}_total"].append(total)
            if clock:
                rows["err"].append(clock["max_error_ns"])
                rows["pred"].append(clock["max_predicted_error_ns"])
                w = pts[8]["window"]
                rows["invalid"].append(w["invalid"] / max(w["repetitions"], 1))
    m = {k: median(v) for k, v in rows.items() if v}
    lines = [
        f"{a.rounds} alternating rounds; coll.allreduce, 2 ranks, target ±2 % CI of the median; medians over rounds",
        "",
        "| | window (global clock) | barrier |",
        "|---|---:|---:|",
        f"| time to ±2 %, 8 B (s) | {m['w8_s']:.3f} | {m['b8_s']:.3f} |",
        f"| time to ±2 %, 64 KiB (s) | {m['w64_s']:.3f} | {m['b64_s']:.3f} |",
        f"| median, 8 B (µs) | {m['w8_med']:.3f} | {m['b8_med']:.3f} |",
        f"| median, 64 KiB (µs) | {m['w64_med']:.2f} | {m['b64_med']:.2f} |",
        f"| whole run incl. clock synchronisation (s) | {m['w_total']:.2f} | {m['b_total']:.2f} |",
        "",
        f"Clock: measured residual error {m['err']:.0f} ns (max over rounds {max(rows['err']):.0f} ns), "
        f"fit-predicted {m['pred']:.0f} ns; invalid (late-start) repetitions at 8 B: {m['invalid'] * 100:.1f} %.",
        "Window times are global completion (last exit - common start); barrier times are the slowest rank's "
        "own time after a barrier, which leaves out the arrival skew a barrier's exit creates.",
    ]
    write("clock", "Global-clock (window) timing against barrier timing", lines, rows)


if __name__ == "__main__":
    main()
