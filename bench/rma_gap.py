"""The one-sided gap of issue 52: `scope run --osu osu_put_latency` / `osu_get_latency` against
OSU 7.4 itself at 8 B and 64 KiB, launches alternating, many rounds.

On this VM a launch of either tool lands in one of two states for the whole launch (an 8 B put
near 0.11 us, or near 0.17-0.20 us), in proportions that change from hour to hour; a figure of
one launch is one of the two.  So each cell gives the median over all launches, and the median
over the launches in the fast state (below FAST x the fastest launch), with their counts.

    OSU_ONE_SIDED=bench/work/omb/one-sided .venv/bin/python bench/rma_gap.py [--rounds 12]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from common import scope_cli, toolchain, write

CASES = [("osu_put_latency", 8), ("osu_get_latency", 8), ("osu_put_latency", 65536), ("osu_get_latency", 65536)]
FAST = 1.3  # a launch within 30 % of the fastest of its cell is in the fast state


def osu(tc, where: Path, prog: str, size: int) -> float:
    out = subprocess.run([str(tc.mpiexec), "-n", "2", str(where / prog), "-m", f"{size}:{size}"], capture_output=True,
                         text=True, check=True, timeout=600).stdout  # fmt: skip
    return float(out.strip().splitlines()[-1].split()[1])


def scope(db: Path, prog: str, size: int) -> float:
    scope_cli(db, "run", "--osu", prog, "--sizes", size, "--launches", 1, "--quiet")
    doc = json.loads(scope_cli(db, "export", "last", "--format", "json").stdout)
    return doc["points"][0]["stats"]["mean"]  # OSU's figure is the mean of its iterations


def summary(values: list[float]) -> dict:
    fast = [v for v in values if v <= FAST * min(values)]
    return {"median": statistics.median(values), "fast_median": statistics.median(fast), "fast": len(fast),
            "launches": len(values), "values": values}  # fmt: skip


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=12)
    a = ap.parse_args()
    where = Path(os.environ.get("OSU_ONE_SIDED", ""))
    if not os.environ.get("OSU_ONE_SIDED") or not (where / "osu_put_latency").is_file():
        print("bench/rma_gap.py: skipped: set OSU_ONE_SIDED to a directory with osu_put_latency and osu_get_latency")
        return 0
    tc, _ = toolchain()
    got: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "gap.db"
        for r in range(a.rounds):
            print(f"round {r + 1} of {a.rounds}", file=sys.stderr)
            for prog, size in CASES:
                got.setdefault(f"OSU {prog} {size}", []).append(osu(tc, where, prog, size))
                got.setdefault(f"SCOPE {prog} {size}", []).append(scope(db, prog, size))
    s = {k: summary(v) for k, v in got.items()}
    lines = [
        f"2 ranks, one node, MPICH from this venv; OSU 7.4 (FLOAT_PRECISION=4) and `scope run --osu PROG --sizes N "
        f"--launches 1` alternating, {a.rounds} rounds; OSU's figure and SCOPE's point mean (OSU's definition). "
        f"Fast state: launches within {FAST}x the fastest of their cell.",
        "",
        "| case | size B | OSU median us | SCOPE median us | ratio | OSU fast-state median (n) | "
        "SCOPE fast-state median (n) | ratio |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for prog, size in CASES:
        o, m = s[f"OSU {prog} {size}"], s[f"SCOPE {prog} {size}"]
        lines.append(f"| {prog} | {size:,} | {o['median']:.4f} | {m['median']:.4f} | {m['median'] / o['median']:.2f} | "
                     f"{o['fast_median']:.4f} ({o['fast']}) | {m['fast_median']:.4f} ({m['fast']}) | "
                     f"{m['fast_median'] / o['fast_median']:.2f} |")  # fmt: skip
    lines += ["", "Reproduce: OSU_ONE_SIDED=bench/work/omb/one-sided .venv/bin/python bench/rma_gap.py"]
    write("rma_gap", "The one-sided gap against OSU 7.4 (issue 52)", lines, s)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
