"""The fixed cost of a launch, stage by stage (issue 52): a one-point run of p2p.pingpong and of
coll.allreduce against OMB's whole process on the same MPICH, every command in a process of its
own, all of them alternating round by round; medians over rounds.  The stages are told apart by
commands that stop after each: the interpreter, the CLI's imports (`scope --version`), the
front end up to the launch (`scope run ... --dry-run`: toolchain, descriptors, the engine's plan,
every check), the engine's job alone (mpiexec and MPI_Init; `--timers` stops after the timer
choice and the context), with and without the machine probes and the clock's warm spin, and
the whole command.

OMB comes from $OSU_BIN, a folder holding osu_latency and osu_allreduce built with this venv's
mpicc (e.g. from OMB 7.4's c/ sources: mpicc -Iutil util/osu_util*.c PROGRAM.c -lm).

    OSU_BIN=bench/work/omb/bin .venv/bin/python bench/launch_stages.py [--rounds 10]
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

from common import ROOT, toolchain, write

ONE = ["--sizes", "8", "--launches", "1", "--budget", "0.001", "--quiet"]


def stages(tc, exe: Path, osu: Path, db: Path) -> dict[str, list[str]]:
    scope = [sys.executable, "-m", "scope", "--db", str(db)]
    mpiexec = [str(tc.mpiexec), "-n", "2"]
    job = [*mpiexec, str(exe), "--sizes", "8", "--budget", "0.001"]
    return {
        "interpreter (python -c pass)": [sys.executable, "-c", "pass"],
        "scope --version (CLI imports)": [*scope, "--version"],
        "p2p: scope run --dry-run (front end to the launch)": [*scope, "run", "p2p.pingpong", *ONE, "--dry-run"],
        "p2p: engine job, no probes": [*job, "--tests", "p2p.pingpong", "--no-canary"],
        "p2p: engine job, with probes": [*job, "--tests", "p2p.pingpong"],
        "engine --timers (MPI_Init, timer choice, context)": [*mpiexec, str(exe), "--timers"],
        "p2p: scope run (whole command)": [*scope, "run", "p2p.pingpong", *ONE],
        "p2p: scope run --canary": [*scope, "run", "p2p.pingpong", *ONE, "--canary"],
        "p2p: osu_latency -m 8:8": [*mpiexec, str(osu / "osu_latency"), "-m", "8:8"],
        "allreduce: engine job, no probes, --warm 0": [*job, "--tests", "coll.allreduce", "--no-canary", "--warm", "0"],
        "allreduce: engine job, no probes": [*job, "--tests", "coll.allreduce", "--no-canary"],
        "allreduce: scope run (whole command)": [*scope, "run", "coll.allreduce", *ONE],
        "allreduce: osu_allreduce -m 8:8": [*mpiexec, str(osu / "osu_allreduce"), "-m", "8:8"],
    }


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=10)
    a = ap.parse_args()
    osu = Path(os.environ.get("OSU_BIN", ""))
    if not os.environ.get("OSU_BIN") or not (osu / "osu_latency").is_file() or not (osu / "osu_allreduce").is_file():
        print("bench/launch_stages.py: set OSU_BIN to a folder holding osu_latency and osu_allreduce", file=sys.stderr)
        return 2
    tc, exe = toolchain()
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"), OPENBLAS_NUM_THREADS="1")
    env.pop("SCOPE_NO_CANARY", None)
    # bytecode cached as in an installed package (pip compiles it at install; bench/common.py):
    # this machine's environment turns the cache off, which recompiles what changed at every start
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    with tempfile.TemporaryDirectory() as tmp:
        cmds = stages(tc, exe, osu, Path(tmp) / "r.db")
        times: dict[str, list[float]] = {k: [] for k in cmds}
        for r in range(a.rounds):
            for name, argv in cmds.items():  # every stage once a round: drift falls on all alike
                t0 = time.monotonic()
                subprocess.run(argv, env=env, capture_output=True, check=True, timeout=120)
                times[name].append(time.monotonic() - t0)
            print(f"round {r + 1} of {a.rounds}", file=sys.stderr, flush=True)
    med = {k: statistics.median(v) for k, v in times.items()}
    osu_p2p, osu_ar = med["p2p: osu_latency -m 8:8"], med["allreduce: osu_allreduce -m 8:8"]
    rows = []
    for k, v in med.items():
        base = osu_ar if k.startswith("allreduce") else osu_p2p
        rows.append(f"| {k} | {v * 1000:.0f} | {min(times[k]) * 1000:.0f} | {v / base:.2f} |")
    lines = [
        "Each stage a process of its own, every stage once a round, "
        f"{a.rounds} rounds; median and fastest wall ms; ratio of the median to OMB's whole process "
        "(osu_latency for the p2p rows and the rows above them, osu_allreduce for the allreduce rows).",
        "",
        "| stage | median ms | fastest ms | x OMB |",
        "|---|---|---|---|",
        *rows,
        "",
        "Goals (issue 52): the whole p2p command <= 3.5x osu_latency, the whole allreduce command <= 5x osu_allreduce.",
        "Reproduce: OSU_BIN=... .venv/bin/python bench/launch_stages.py",
    ]
    write("launch_stages", "The fixed cost of a launch, stage by stage", lines, {"ms": times})
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
