"""A window-timed collective sweep on the global clock against OMB (issue 39), side by side, launches
alternating: `scope run coll.allreduce --sizes 4-64K:x2 --launches 1` against `osu_allreduce -m
4:65536`, 2 ranks (or --ranks).  For SCOPE: the points' own seconds, the synchronisations' seconds
(the clock records' sync_s), the whole process, and the fixed cost before and around the points
(the whole process less the points: Python's start, the plan, the launch, the canary, the clock,
storing), measured as a one-point run's whole process less its point (`--sizes 4`) beside OMB's
one-size run (`-m 4:4`).  Medians over rounds; ratios are each round's own, then their median.

OMB comes from $OSU_MPI (an OMB 7.4 install's `mpi` folder built with this venv's mpicc); never
committed; without it the script says so and exits 0.

    OSU_MPI=$PWD/bench/work/osu74/libexec/osu-micro-benchmarks/mpi .venv/bin/python bench/clock_sweep.py
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import last_run_events, paired_ratio, scope_timed, toolchain, write

SWEEP = ["coll.allreduce", "--sizes", "4-64K:x2"]
ONE = ["coll.allreduce", "--sizes", "4"]


def omb(tc, where: Path, ranks: int, sizes: str) -> float:
    t0 = time.monotonic()
    subprocess.run([str(tc.mpiexec), "-n", str(ranks), str(where / "collective" / "osu_allreduce"), "-m", sizes],
                   capture_output=True, check=True, timeout=600)  # fmt: skip
    return time.monotonic() - t0


def scope(db: Path, args: list[str], ranks: int) -> tuple[float, float, float]:
    """(whole process s, the points' s, the synchronisations' s)"""
    wall, pts = scope_timed(db, [*args, "-n", str(ranks)])
    events = last_run_events(db)
    sync = sum(e.get("sync_s") or 0 for e in events if e["type"] == "clock" and e.get("at") == "sync")
    return wall, sum(p.record["seconds"] for p in pts), sync


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--ranks", type=int, default=2)
    a = ap.parse_args()
    where = Path(os.environ.get("OSU_MPI", ""))
    if not os.environ.get("OSU_MPI") or not (where / "collective" / "osu_allreduce").is_file():
        print(
            "bench/clock_sweep.py: skipped: set OSU_MPI to an OMB 7.4 install's mpi folder built with this venv's mpicc"
        )
        return 0
    tc, _ = toolchain()
    v: dict[str, list[float]] = {k: [] for k in ("omb", "omb1", "wall", "points", "sync", "wall1", "point1")}
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "r.db"
        scope(db, ONE, a.ranks)  # builds the engine first, untimed
        for r in range(a.rounds):
            print(f"round {r + 1} of {a.rounds}", file=sys.stderr)
            v["omb"].append(omb(tc, where, a.ranks, "4:65536"))
            wall, points, sync = scope(db, SWEEP, a.ranks)
            v["wall"].append(wall)
            v["points"].append(points)
            v["sync"].append(sync)
            v["omb1"].append(omb(tc, where, a.ranks, "4:4"))
            wall1, point1, _ = scope(db, ONE, a.ranks)
            v["wall1"].append(wall1)
            v["point1"].append(point1)
    m = {k: statistics.median(x) for k, x in v.items()}
    work = [p + s for p, s in zip(v["points"], v["sync"])]
    fixed = [w - p for w, p in zip(v["wall1"], v["point1"])]
    ratio_work = paired_ratio(v["omb"], work)
    ratio_wall = paired_ratio(v["omb"], v["wall"])
    lines = [
        f"MPICH from this venv, {a.ranks} ranks on one node, {os.cpu_count()} cores; {a.rounds} rounds, OMB then "
        "SCOPE each; seconds, medians over rounds; a ratio is the median of each round's SCOPE / OMB.",
        "",
        "| | s | against osu_allreduce -m 4:65536 | target |",
        "|---|---|---|---|",
        f"| osu_allreduce -m 4:65536, whole process | {m['omb']:.3f} | 1 | |",
        f"| SCOPE: the points' seconds | {m['points']:.3f} | | |",
        f"| SCOPE: synchronisation of the global clock | {m['sync']:.4f} | | |",
        f"| SCOPE: points + synchronisation | {statistics.median(work):.3f} | {ratio_work:.2f} | ≤ 3 |",
        f"| SCOPE: whole process (scope run, storing and summary included) | {m['wall']:.3f} | {ratio_wall:.2f} | |",
        "",
        "Fixed cost, a one-point run (`--sizes 4`) less its point, beside OMB's one-size run:",
        "",
        "| | s | target |",
        "|---|---|---|",
        f"| osu_allreduce -m 4:4, whole process | {m['omb1']:.3f} | |",
        f"| SCOPE one-point run, whole process | {m['wall1']:.3f} | |",
        f"| SCOPE fixed cost (whole less the point) | {statistics.median(fixed):.3f} | ≤ 0.5 |",
        "",
        f"Synchronisation's share of the sweep's points: {100 * m['sync'] / max(m['points'], 1e-9):.2f} %.",
        "",
        "Reproduce: OSU_MPI=... .venv/bin/python bench/clock_sweep.py --rounds 5",
    ]
    write("clock_sweep", "A collective sweep on the global clock against OMB (bench/clock_sweep.py)", lines,
          {"rounds": a.rounds, "ranks": a.ranks, "values": v})  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
