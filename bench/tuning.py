"""Collective tuning on this machine (issue 14), with MPICH:

sweep   the wall time of `scope tune allreduce` over 6 algorithms x 20 sizes (8 B .. 4 MiB) x
        3 process counts (2, 3, 4 in a 4-rank launch: 3 and 4 oversubscribe the 2 cores),
        2 launches each (target: under 2 minutes)
gain    allreduce, bcast and alltoall tuned at 2 and 4 processes, then the tuned file against
        the library's default (`scope tune --apply`): the points significantly slower with the
        file (target: none) and the best significant gain

  .venv/bin/python bench/tuning.py
"""

from __future__ import annotations

import os
import shutil
import time

from common import WORK, scope_cli, write

from scope.analysis.compare import compare_launch_sets
from scope.store import Store

SIZES = "8-4M"  # powers of two: 20 sizes


def offered(coll: str) -> list[str]:
    from scope.run.toolchain import engine_path, find_toolchain
    from scope.tune.drivers import Driver, algorithms

    return list(algorithms(engine_path(find_toolchain(), quiet=True), Driver(), coll))


def gain_row(db, coll: str, where: str, ppn: int | None = None) -> tuple[str, dict]:
    store = Store(db)
    tail = f" ppn={ppn}" if ppn else ""
    runs = [r for r in store.runs() if (r["label"] or "").startswith(f"tune apply {coll}")]
    side = {n: [store.load_run(r["id"]) for r in runs if r["label"].endswith(n + tail)] for n in ("default", "tuned")}
    rows = compare_launch_sets(side["default"], side["tuned"], 0.05, 0.02)
    slower = [r for r in rows if r["verdict"] == "slower"]
    faster = [r for r in rows if r["verdict"] == "faster"]
    best = min(faster, key=lambda r: r["ratio"], default=None)
    gain = f"{best['ratio']:.3f} ({best['ci_lo']:.3f}-{best['ci_hi']:.3f}) at {best['size']} B" if best else "-"
    return f"| {coll}{where} | {len(rows)} | {len(slower)} | {len(faster)} | {gain} |", {
        "rows": len(rows), "slower": len(slower), "faster": len(faster)}  # fmt: skip


def testbed_rows(data: dict) -> list[str]:
    """The same on two testbed hosts (network namespaces, MPI over TCP at 1 Gbit/s), when root;
    allreduce tuned per processes per host as well (2 ranks at 1 per host; 2 and 4 at 2)."""
    if os.geteuid() != 0 or not shutil.which("ip") or not shutil.which("tc"):
        return ["", "Testbed: skipped (needs root and iproute2 for 'scope testbed up')."]
    out = []
    scope_cli(WORK / "tb-none.db", "testbed", "up", "--hosts", "2", "--rate", "1gbit", "--name", "tunebed")
    try:
        for coll in ("allreduce", "bcast", "alltoall"):
            db = WORK / f"tuning-tb-{coll}.db"
            db.unlink(missing_ok=True)
            f = WORK / f"tuned-tb-{coll}.json"
            # allreduce also per processes per host: 2 ranks at 1 and at 2 per host, 4 at 2
            layout = ["--procs", "2,4", "--ppn", "1,2"] if coll == "allreduce" else ["--procs", "2"]
            common = ["--testbed", "tunebed", *layout, "--sizes", "8-1M:x4", "--launches", "3", "--budget", "0.1"]
            scope_cli(db, "tune", coll, *common, "-o", f)
            scope_cli(db, "tune", coll, "--apply", f, *common)
            for ppn in (1, 2) if coll == "allreduce" else (None,):
                where = " (2 testbed hosts, 1 Gbit/s" + (f", {ppn} per host)" if ppn else ")")
                row, data[f"testbed {coll}" + (f" ppn={ppn}" if ppn else "")] = gain_row(db, coll, where, ppn)
                out.append(row)
    finally:
        scope_cli(WORK / "tb-none.db", "testbed", "down", "--name", "tunebed")
    return out


def main() -> int:
    WORK.mkdir(parents=True, exist_ok=True)
    lines, data = [], {}
    db = WORK / "tuning-sweep.db"
    db.unlink(missing_ok=True)
    six = offered("allreduce")[:6]
    t0 = time.monotonic()
    scope_cli(db, "tune", "allreduce", "-n", "4", "--procs", "2,3,4", "--sizes", SIZES, "--launches", "2",
          "--budget", "0.05", "--algorithms", ",".join(six))  # fmt: skip
    sweep = time.monotonic() - t0
    refused = [r["label"].split()[-1] for r in Store(db).runs() if r["status"] != "complete"]
    data["sweep_s"], data["sweep_algorithms"], data["sweep_refused"] = sweep, six, refused
    lines += [
        f"Sweep: allreduce, 6 algorithms ({', '.join(six)}) and the default, 20 sizes (8 B .. 4 MiB), procs 2,3,4",
        f"(-n 4 on 2 cores), 2 launches, 0.05 s a point: {sweep:.0f} s wall (target: under 120 s). Refused by the",
        f"MPI (not usable here, recorded with its message): {', '.join(refused) or 'none'}.",
        "",
        "| collective | tuned points | slower with the file | faster | best gain (B/A, 95% CI) |",
        "|---|---|---|---|---|",
    ]
    for coll in ("allreduce", "bcast", "alltoall"):
        db = WORK / f"tuning-{coll}.db"
        db.unlink(missing_ok=True)
        out = WORK / f"tuned-{coll}.json"
        common = ["-n", "4", "--procs", "2,4", "--sizes", "8-1M:x4", "--launches", "3", "--budget", "0.1"]
        scope_cli(db, "tune", coll, *common, "-o", out)
        scope_cli(db, "tune", coll, "--apply", out, *common)
        row, data[coll] = gain_row(db, coll, "")
        lines.append(row)
    lines += testbed_rows(data)
    lines += [
        "",
        "B/A: the tuned file's time over the default's (< 1 faster), launches as replicates (one-launch runs, the",
        "default and the file alternating), Holm-adjusted.",
        "",
        "Reproduce: .venv/bin/python bench/tuning.py",
    ]
    write("tuning", "Collective tuning (MPICH)", lines, data)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
