"""OMB 7.4's collectives reproduced by name (issue 31), side by side in one script: for bcast,
reduce, allreduce, allgather, alltoall and barrier (and two persistent ones), launches
alternate: OMB; `scope run --osu osu_<coll>` (OMB's timing, `--timing osu`, read as the mean);
SCOPE's default (one start on the global clock, the slowest rank, the median).  Medians over
rounds at 8 B, 1 KiB and 64 KiB; the OMB setting is held to 10 %.

The last table says what SCOPE's default sees that OMB's mean over ranks hides: under OMB's
timing every rank's own time is kept, so the root's (which returns once its data is on its way)
and the slowest rank's are read from the same run.

OMB comes from $OSU_MPI, the `mpi` folder of an OMB 7.4 install built with this venv's mpicc
with CFLAGS=-DFLOAT_PRECISION=4; never committed; without it the script says so and exits 0.

    OSU_MPI=$PWD/bench/work/osu74p4/libexec/osu-micro-benchmarks/mpi .venv/bin/python bench/osu_coll.py
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

from common import omb_table, paired_ratio, scope_points, toolchain, within, write

SIZES = [8, 1024, 65536]
SIZED = ["--sizes", ",".join(map(str, SIZES))]
COLLS = ["bcast", "reduce", "allreduce", "allgather", "alltoall", "barrier", "bcast_persistent",
         "allreduce_persistent"]  # fmt: skip


def omb_path(where: Path, coll: str) -> Path:
    return where / "collective" / f"osu_{coll}"


def own_means(pt) -> list[float]:
    """Each rank's mean own time (us) over the kept repetitions of an OMB-timed point."""
    w = pt.window
    return [statistics.fmean(e - s for s, e in zip(st, en)) for st, en in zip(w.start_us, w.end_us)]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    where = Path(os.environ.get("OSU_MPI", ""))
    if not os.environ.get("OSU_MPI") or not all(omb_path(where, c).is_file() for c in COLLS):
        print("bench/osu_coll.py: skipped: set OSU_MPI to an OMB 7.4 install's mpi folder (collective/osu_bcast ...) "
              "built with this venv's mpicc")  # fmt: skip
        return 0
    tc, _ = toolchain()
    vals: dict[tuple, list[float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "r.db"
        for r in range(a.rounds):
            print(f"round {r + 1} of {a.rounds}", file=sys.stderr)
            for coll in COLLS:
                sized = coll != "barrier"
                for size, v in omb_table(tc, omb_path(where, coll), ["-m", f"{SIZES[0]}:{SIZES[-1]}"] * sized).items():
                    vals.setdefault(("OMB", coll, size), []).append(v)
                for pt in scope_points(db, ["--osu", f"osu_{coll}", *SIZED * sized]):
                    size = pt.size if sized else 0
                    vals.setdefault(("osu", coll, size), []).append(pt.mean)
                    own = own_means(pt)
                    vals.setdefault(("root", coll, size), []).append(own[0])
                    vals.setdefault(("slowest", coll, size), []).append(max(own))
                if not coll.endswith("_persistent"):
                    base = coll.split("_")[0]
                    for pt in scope_points(db, [f"coll.{base}", *SIZED * sized]):
                        vals.setdefault(("default", coll, pt.size if sized else 0), []).append(pt.median)
    rows, why, data, held = [], [], [], 0
    for coll in COLLS:
        for size in SIZES if coll != "barrier" else [0]:
            med = {k: statistics.median(vals[(k, coll, size)]) for k in ("OMB", "osu", "root", "slowest", "default")
                   if (k, coll, size) in vals}  # fmt: skip
            o, e = med["OMB"], med["osu"]
            ratio = {k: paired_ratio(vals[("OMB", coll, size)], vals[(k, coll, size)]) for k in ("osu", "default")
                     if (k, coll, size) in vals}  # fmt: skip
            ok = within(ratio["osu"])
            held += ok
            d = med.get("default")
            shown = f"{size:,}" if size else "-"
            rows.append(f"| osu_{coll} | {shown} | {o:.4g} | {e:.4g} | {ratio['osu']:.2f} | {'yes' if ok else 'no'} | "
                        + (f"{d:.4g} | {ratio['default']:.2f} |" if d else "- | - |"))  # fmt: skip
            why.append(f"| osu_{coll} | {shown} | {e:.4g} | {med['root']:.4g} | {med['slowest']:.4g} | "
                       + (f"{d:.4g} |" if d else "- |"))  # fmt: skip
            data.append({"osu": f"osu_{coll}", "size": size, "medians_us": med, "paired_ratios": ratio,
                         "rounds": {k: vals[(k, coll, size)] for k in med}})  # fmt: skip
    lines = [
        f"MPICH from this venv, 2 ranks on one node; {a.rounds} rounds, each OMB, `scope run --osu osu_<coll>` and "
        "SCOPE's default (`scope run coll.<op>`); times in µs, medians over rounds; a ratio is the median over rounds "
        "of each round's ratio against OMB (launches side by side, so the machine's drift between rounds cancels).",
        "",
        "| OMB | size B | OMB us | `--osu` mean us | ratio | within 10 % | SCOPE default median us | ratio |",
        "|---|---|---|---|---|---|---|---|",
        *rows,
        "",
        f"OMB's definition within 10 % of OMB: {held} of {len(rows)}.",
        "",
        "What the mean over ranks hides (from the same `--osu` runs: each rank's own time, mean over repetitions; "
        "rank 0 is the root):",
        "",
        "| OMB | size B | mean over ranks us | root (rank 0) us | slowest rank us | SCOPE default us |",
        "|---|---|---|---|---|---|",
        *why,
        "",
        "Reproduce: OSU_MPI=... .venv/bin/python bench/osu_coll.py",
    ]
    write("osu_coll", "OMB 7.4's collectives reproduced by name (bench/osu_coll.py)", lines,
          {"rounds": a.rounds, "cases": data})  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
