"""Adaptive repetition against a fixed count: the default ping-pong sweep (0 B .. 4 MiB) at
±1 % against OSU's habit of 10,000 iterations below 8 KiB and 1,000 above (warm-up 1,000 /
100), launched alternately.  Precision of the fixed sweep is computed the same way as SCOPE's
(95 % CI of the median of its per-iteration samples).  Target: not slower at equal or better
precision.

    .venv/bin/python bench/adaptive.py [--rounds 3]"""

import argparse

from common import build_bare, median, mpirun, toolchain, write


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    tc, engine = toolchain()
    bare = build_bare(tc)
    rows = []
    for r in range(a.rounds):
        order = ("scope", "fixed") if r % 2 == 0 else ("fixed", "scope")
        for who in order:
            if who == "scope":
                recs, wall = mpirun(tc, 2, [engine, "--tests", "p2p.pingpong", "--sizes", "0-4M", "--no-samples"])
                pts = [x for x in recs if x["type"] == "point"]
                ci = [p["stats"]["ci_rel"] for p in pts]
                end = next(x for x in recs if x["type"] == "end")
                rows.append(("scope", end["seconds"], wall, ci, sum(p["count"] for p in pts)))
            else:
                recs, wall = mpirun(tc, 2, [bare, "fixed"])
                ci = [s["ci_rel"] for s in recs[0]["sizes"]]
                rows.append(("fixed", recs[0]["seconds"], wall, ci, sum(s["count"] for s in recs[0]["sizes"])))

    def agg(who):
        rs = [x for x in rows if x[0] == who]
        cis = [c for x in rs for c in x[3]]
        return {
            "sweep_s": median([x[1] for x in rs]),
            "launch_s": median([x[2] for x in rs]),
            "ci_median": median(cis),
            "ci_max": max(cis),
            "within_1pct": sum(c <= 0.01 for c in cis) / len(cis),
            "samples": median([x[4] for x in rs]),
        }

    s, f = agg("scope"), agg("fixed")
    speed = f["sweep_s"] / s["sweep_s"]
    lines = [
        f"{a.rounds} alternating rounds; 2 ranks; 24 sizes 0 B .. 4 MiB; medians over rounds",
        "",
        "| sweep | time (s) | with launch (s) | samples | CI half-width, median | worst | points within ±1 % |",
        "|---|---:|---:|---:|---:|---:|---:|",
        f"| SCOPE adaptive (±1 %) | {s['sweep_s']:.2f} | {s['launch_s']:.2f} | {s['samples']:.0f} | "
        f"{s['ci_median'] * 100:.2f} % | {s['ci_max'] * 100:.2f} % | {s['within_1pct'] * 100:.0f} % |",
        f"| fixed 10,000 / 1,000 | {f['sweep_s']:.2f} | {f['launch_s']:.2f} | {f['samples']:.0f} | "
        f"{f['ci_median'] * 100:.2f} % | {f['ci_max'] * 100:.2f} % | {f['within_1pct'] * 100:.0f} % |",
        "",
        f"**fixed / adaptive time = {speed:.2f}x** (target >= 1: {'met' if speed >= 1 else 'NOT met'}); "
        f"precision: adaptive worst {s['ci_max'] * 100:.2f} % vs fixed worst {f['ci_max'] * 100:.2f} %",
    ]
    write(
        "adaptive",
        "Adaptive repetition vs a fixed-count sweep",
        lines,
        {"rows": rows, "scope": s, "fixed": f},
    )


if __name__ == "__main__":
    main()
