"""Sweep speed against OMB 7.4 at a stated precision (issue 31), side by side in one script,
launches alternating: for the point-to-point sweeps the whole-process wall time of `scope run`
(Python start, engine build check, launch, storing, summary) against the OMB program's, each
SCOPE point at SCOPE's default ±1 % (95 % interval of the median); for the collective sweeps
the sum of the points' own seconds (each point's checks, warm-up and measurement) against the
OMB program's whole-process wall time, 2 ranks.  Medians over rounds; a ratio is SCOPE / OMB.

OMB comes from $OSU_MPI (an OMB 7.4 install's `mpi` folder built with this venv's mpicc);
never committed; without it the script says so and exits 0.

    OSU_MPI=$PWD/bench/work/osu74/libexec/osu-micro-benchmarks/mpi .venv/bin/python bench/sweep.py
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

from common import scope_timed, toolchain, write

# (SCOPE arguments, OMB program under $OSU_MPI and its arguments, how SCOPE's side is timed)
CASES = [
    (["p2p.pingpong", "--sizes", "0-4M:x2"], ["pt2pt/osu_latency", "-m", "0:4194304"], "wall"),
    (["p2p.stream", "--sizes", "1-4M:x2"], ["pt2pt/osu_bw", "-m", "1:4194304"], "wall"),
    (["p2p.bistream", "--sizes", "1-4M:x2"], ["pt2pt/osu_bibw", "-m", "1:4194304"], "wall"),
    # OMB's own definition (a window of 64 into one buffer): its 20 windows of 64 at 4 MiB are
    # OMB's cost too, so this row shows what the definition costs, with no target
    (["--osu", "osu_bw", "--sizes", "1-4M:x2"], ["pt2pt/osu_bw", "-m", "1:4194304"], "wall-info"),
    (["coll.allreduce", "--sizes", "4-64K:x2"], ["collective/osu_allreduce", "-m", "4:65536"], "points"),
    (["coll.bcast", "--sizes", "4-64K:x2"], ["collective/osu_bcast", "-m", "4:65536"], "points"),
    (["coll.alltoall", "--sizes", "4-64K:x2"], ["collective/osu_alltoall", "-m", "4:65536"], "points"),
]
TARGET = {"wall": 1.0, "points": 3.0, "wall-info": None}


def omb(tc, where: Path, argv: list[str]) -> float:
    t0 = time.monotonic()
    subprocess.run([str(tc.mpiexec), "-n", "2", str(where / argv[0]), *argv[1:]], capture_output=True, check=True,
                   timeout=600)  # fmt: skip
    return time.monotonic() - t0


def scope(db: Path, args: list[str]) -> tuple[float, float, int]:
    """(whole-process seconds, the points' summed seconds, points)"""
    wall, pts = scope_timed(db, args)
    return wall, sum(pt.record["seconds"] for pt in pts), len(pts)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    where = Path(os.environ.get("OSU_MPI", ""))
    if not os.environ.get("OSU_MPI") or not all((where / c[1][0]).is_file() for c in CASES):
        print("bench/sweep.py: skipped: set OSU_MPI to an OMB 7.4 install's mpi folder built with this venv's mpicc")
        return 0
    tc, _ = toolchain()
    vals: dict[tuple, list[float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "r.db"
        scope(db, ["p2p.pingpong", "--sizes", "8", "--budget", "0.01"])  # builds the engine first, untimed
        for r in range(a.rounds):
            print(f"round {r + 1} of {a.rounds}", file=sys.stderr)
            for k, (args, prog, _) in enumerate(CASES):
                vals.setdefault(("omb", k), []).append(omb(tc, where, prog))
                wall, points, n = scope(db, args)
                vals.setdefault(("wall", k), []).append(wall)
                vals.setdefault(("points", k), []).append(points)
                vals.setdefault(("n", k), []).append(n)
    rows, data, held, targeted = [], [], 0, 0
    for k, (args, prog, how) in enumerate(CASES):
        o, w, p = (statistics.median(vals[(x, k)]) for x in ("omb", "wall", "points"))
        mine, target = p if how == "points" else w, TARGET[how]
        ok = target is not None and mine / o <= target
        held += ok
        targeted += target is not None
        what = "sum of points" if how == "points" else "whole process"
        rows.append(f"| {' '.join(args)} | {Path(prog[0]).name} {' '.join(prog[1:])} | {o:.2f} | {w:.2f} | {p:.2f} | "
                    f"{what} | {mine / o:.2f} | {f'≤ {target:.0f}' if target else '-'} | "
                    f"{('yes' if ok else 'no') if target else '-'} |")  # fmt: skip
        rounds = {x: vals[(x, k)] for x in ("omb", "wall", "points", "n")}
        data.append({"scope": args, "omb": prog, "omb_s": o, "scope_wall_s": w, "scope_points_s": p, "ratio": mine / o,
                     "target": target, "rounds": rounds})  # fmt: skip
    lines = [
        f"MPICH from this venv, 2 ranks on one node; {a.rounds} rounds, OMB then SCOPE each case; medians over "
        "rounds; seconds. SCOPE at its defaults: every point to ±1 % (the 95 % interval of its median), "
        "one launch; its Python bytecode cached, as an installed package's is.",
        "",
        "| SCOPE | OMB | OMB s (whole process) | SCOPE whole process s | SCOPE sum of points s | compared | ratio "
        "| target | met |",
        "|---|---|---|---|---|---|---|---|---|",
        *rows,
        "",
        f"Targets met: {held} of {targeted}.",
        "",
        "Reproduce: OSU_MPI=... .venv/bin/python bench/sweep.py",
    ]
    write("sweep", "Sweep speed against OMB 7.4 (bench/sweep.py)", lines, {"rounds": a.rounds, "cases": data})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
