"""Point-to-point latency against OMB 7.4 by name (issue 31), side by side in one script:
osu_latency and osu_latency_persistent against the SCOPE settings `scope list --osu` gives them
(p2p.pingpong, and with -p api=persistent), at 8 B and 64 KiB, launches alternating: OMB;
SCOPE's default (the median); SCOPE with OMB's definition (`--loop osu`, OMB's 10,000
iterations, read as the mean, what OMB prints, and `-p reply=own`: rank 1 replies from its own
buffer, where SCOPE's default echoes the ping).  Medians over rounds; the OMB setting is held to 10 %.

OMB comes from $OSU_MPI, the `mpi` folder of an OMB 7.4 install built with this venv's mpicc
(configured with CFLAGS=-DFLOAT_PRECISION=4, so a 1 us latency is not printed as 1.0 +/- 0.005);
never committed; without it the script says so and exits 0.

    OSU_MPI=$PWD/bench/work/osu74p4/libexec/osu-micro-benchmarks/mpi .venv/bin/python bench/osu_p2p.py
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

from common import omb_table, paired_ratio, scope_points, toolchain, within, write

SIZES = [8, 65536]
SIZED = ["--sizes", ",".join(map(str, SIZES))]
MBW_MR = "pt2pt/osu_mbw_mr"
# (OMB program, its path under $OSU_MPI, the SCOPE parameters of its definition)
CASES = [
    ("osu_latency", "pt2pt/osu_latency", []),
    ("osu_latency_persistent", "pt2pt/persistent/osu_latency_persistent", ["-p", "api=persistent"]),
]


def scope(db: Path, params: list[str], loop: str) -> dict[int, float]:
    """p2p.pingpong with `params`, SCOPE's default (its median) or OMB's definition (loop "osu":
    OMB's loop and count, rank 1 replying from its own buffer; its mean)."""
    osu = ["--loop", "osu", "--min-count", "10000", "--max-count", "10000", "--budget", "60", "-p", "reply=own"]
    pts = scope_points(db, ["p2p.pingpong", *params, *SIZED, *(osu if loop == "osu" else [])])
    return {pt.size: (pt.mean if loop == "osu" else pt.median) for pt in pts}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    where = Path(os.environ.get("OSU_MPI", ""))
    if not os.environ.get("OSU_MPI") or not all((where / c[1]).is_file() for c in CASES):
        print("bench/osu_p2p.py: skipped: set OSU_MPI to an OMB 7.4 install's mpi folder (pt2pt/osu_latency, "
              "pt2pt/persistent/osu_latency_persistent) built with this venv's mpicc")  # fmt: skip
        return 0
    tc, _ = toolchain()
    vals: dict[tuple[str, str, int], list[float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "r.db"
        for r in range(a.rounds):
            print(f"round {r + 1} of {a.rounds}", file=sys.stderr)
            for name, path, params in CASES:
                for size in SIZES:
                    vals.setdefault(("OMB", name, size), []).append(
                        omb_table(tc, where / path, ["-m", f"{size}:{size}"])[size]
                    )
                for loop in ("scope", "osu"):
                    for size, v in scope(db, params, loop).items():
                        vals.setdefault((loop, name, size), []).append(v)
            if (where / MBW_MR).is_file():
                for size in SIZES:
                    # osu_mbw_mr's third column is its messages per second
                    rate = omb_table(tc, where / MBW_MR, ["-m", f"{size}:{size}"], column=2)[size]
                    vals.setdefault(("OMB", "rate", size), []).append(rate)
                # p2p.mbw_mr at osu_mbw_mr's setting: messages a second of all pairs (1 / the median
                # time per message over all pairs)
                rates = {pt.size: 1e6 / pt.median for pt in scope_points(db, ["--osu", "osu_mbw_mr", *SIZED])}
                for size, v in rates.items():
                    vals.setdefault(("scope", "rate", size), []).append(v)
    rows, data, held = [], [], 0
    for name, _, params in CASES:
        for size in SIZES:
            o, d, e = (statistics.median(vals[(k, name, size)]) for k in ("OMB", "scope", "osu"))
            rd, re_ = (paired_ratio(vals[("OMB", name, size)], vals[(k, name, size)]) for k in ("scope", "osu"))
            ok = within(re_)
            held += ok
            setting = " ".join(["p2p.pingpong", *params])
            rows.append(f"| {name} | {size:,} | {o:.4g} | {setting} | {d:.4g} | {rd:.2f} | {e:.4g} | {re_:.2f} "
                        f"| {'yes' if ok else 'no'} |")  # fmt: skip
            data.append({"osu": name, "size": size, "omb_us": o, "scope_median_us": d, "scope_osu_loop_mean_us": e,
                         "paired_ratios": {"scope": rd, "osu": re_},
                         "rounds": {k: vals[(k, name, size)] for k in ("OMB", "scope", "osu")}})  # fmt: skip
    rate_rows = []
    for size in SIZES:
        if ("OMB", "rate", size) in vals:
            o, d = statistics.median(vals[("OMB", "rate", size)]), statistics.median(vals[("scope", "rate", size)])
            r = paired_ratio(vals[("OMB", "rate", size)], vals[("scope", "rate", size)])
            rate_rows.append(f"| osu_mbw_mr | {size:,} | {o:,.0f} | {d:,.0f} | {r:.2f} | "
                             f"{'yes' if within(r) else 'no'} |")  # fmt: skip
            data.append({"osu": "osu_mbw_mr", "size": size, "omb_msgs_per_s": o, "scope_msgs_per_s": d,
                         "rounds": {k: vals[(k, "rate", size)] for k in ("OMB", "scope")}})  # fmt: skip
    lines = [
        f"MPICH from this venv, 2 ranks on one node; {a.rounds} rounds, each OMB, SCOPE's default and SCOPE with "
        "OMB's loop (`--loop osu`, 10,000 iterations, the mean); medians over rounds; times in µs; a ratio (SCOPE / "
        "OMB) is the median over rounds of each round's own.",
        "",
        "| OMB | size B | OMB us | SCOPE setting | SCOPE median | ratio | `--loop osu` mean | ratio | within 10 % |",
        "|---|---|---|---|---|---|---|---|---|",
        *rows,
        "",
        f"OMB's definition within 10 % of OMB: {held} of {len(rows)}.",
        "",
        "Message rate, `scope run --osu osu_mbw_mr` (p2p.mbw_mr -p window=64 -p receive=one; messages a second of "
        "all pairs, 1 / the median time per message) against osu_mbw_mr's Messages/s, 1 pair:",
        "",
        "| OMB | size B | OMB msgs/s | SCOPE msgs/s | ratio | within 10 % |",
        "|---|---|---|---|---|---|",
        *rate_rows,
        "",
        "Reproduce: OSU_MPI=... .venv/bin/python bench/osu_p2p.py",
    ]
    write("osu_p2p", "Point-to-point latency against OMB 7.4 by name (bench/osu_p2p.py)", lines,
          {"rounds": a.rounds, "cases": data})  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
