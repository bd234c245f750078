"""Instrumentation overhead: SCOPE's 8-byte ping-pong median against a bare ping-pong loop in
C on the same MPI, launched alternately in one run.  Target: ratio <= 1.02.

The bare loop reports the median of block means (10,000 iterations per block), as OSU-style
tools do; SCOPE reports the median of per-iteration samples of the slowest rank.

    .venv/bin/python bench/overhead.py [--rounds 9]"""

import argparse

from common import build_bare, median, mpirun, toolchain, write


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--size", type=int, default=8)
    a = ap.parse_args()
    tc, engine = toolchain()
    bare = build_bare(tc)
    scope_m, scope_mean, bare_m = [], [], []
    for r in range(a.rounds):
        order = ("scope", "bare") if r % 2 == 0 else ("bare", "scope")
        for who in order:
            if who == "scope":
                recs, _ = mpirun(
                    tc,
                    2,
                    [engine, "--tests", "p2p.pingpong", "--sizes", a.size, "--no-samples", "--budget", "2"],
                )
                st = next(x for x in recs if x["type"] == "point")["stats"]
                scope_m.append(st["median"])
                scope_mean.append(st["mean"])
            else:
                recs, _ = mpirun(tc, 2, [bare, "loop", a.size, 10000, 20])
                bare_m.append(median(recs[0]["blocks"]))
    ratio = median(scope_m) / median(bare_m)
    per_round = [s / b for s, b in zip(scope_m, bare_m)]
    lines = [
        f"{a.rounds} alternating rounds, {a.size}-byte ping-pong, 2 ranks, one-way time (RTT/2)",
        "",
        "| | median of rounds (us) | min (us) | max (us) |",
        "|---|---:|---:|---:|",
        f"| SCOPE p2p.pingpong (median of samples) | {median(scope_m):.4f} | {min(scope_m):.4f} | {max(scope_m):.4f} |",
        f"| SCOPE p2p.pingpong (mean of samples) | {median(scope_mean):.4f} | {min(scope_mean):.4f} | "
        f"{max(scope_mean):.4f} |",
        f"| bare C loop (median of 10k-iteration block means) | {median(bare_m):.4f} | {min(bare_m):.4f} | "
        f"{max(bare_m):.4f} |",
        "",
        f"**ratio SCOPE / bare = {ratio:.4f}** (target <= 1.02: {'met' if ratio <= 1.02 else 'NOT met'}); "
        f"per-round ratios {min(per_round):.3f} .. {max(per_round):.3f}; "
        f"mean-to-mean ratio {median(scope_mean) / median(bare_m):.4f}",
    ]
    write(
        "overhead",
        "Instrumentation overhead: SCOPE vs a bare ping-pong",
        lines,
        {"scope_us": scope_m, "scope_mean_us": scope_mean, "bare_us": bare_m, "ratio": ratio, "target": 1.02},
    )


if __name__ == "__main__":
    main()
