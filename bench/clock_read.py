"""What a reading of SCOPE's clock library costs (issue 57): scope_clock_global_ns against a
bare read of the same timer, on 2 ranks, the kinds alternating round by round inside one
program (bench/clock_read.c), over several launches; the goal is at most 2x.  The library is
built and installed with `scope build --clock-lib` into bench/work/clocklib, and the program
compiled against it through its pkg-config file, as a user would.

    .venv/bin/python bench/clock_read.py [--launches 5]
"""

from __future__ import annotations

import argparse
import os
import shlex
import statistics
import subprocess
import sys

from common import ROOT, WORK, mpirun, toolchain, write


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--launches", type=int, default=5)
    a = ap.parse_args()
    tc, _ = toolchain()
    prefix = WORK / "clocklib"
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    subprocess.run(
        [sys.executable, "-m", "scope", "build", "--clock-lib", "--prefix", str(prefix)], check=True, env=env
    )
    pc = dict(env, PKG_CONFIG_PATH=str(prefix / "lib" / "pkgconfig"))
    flags = subprocess.run(["pkg-config", "--cflags", "--libs", "scope-clock"], capture_output=True, text=True,
                           env=pc, check=True).stdout  # fmt: skip
    exe = WORK / "clock_read"
    subprocess.run([str(tc.mpicc), "-O2", "-std=c11", "-D_GNU_SOURCE", str(ROOT / "bench" / "clock_read.c"), "-o",
                    str(exe), *shlex.split(flags)], check=True)  # fmt: skip
    rows = []
    for i in range(a.launches):
        recs, _ = mpirun(tc, 2, [exe])
        for r in recs:
            r["launch"] = i
            rows.append(r)
            print(
                f"launch {i} rank {r['rank']}: bare {r['timer']} {r['bare_ns']:.1f} ns, local {r['local_ns']:.1f}, "
                f"global {r['global_ns']:.1f}, global with bound {r['global_bound_ns']:.1f} ns",
                flush=True,
            )
    ratio = statistics.median(r["global_bound_ns"] / r["bare_ns"] for r in rows)
    worst = max(r["global_bound_ns"] / r["bare_ns"] for r in rows)
    lines = [
        f"{a.launches} launches of 2 ranks, 31 rounds of 100,000 reads of each kind alternating (medians a rank):",
        "",
        "| launch | rank | timer | bare read (ns) | scope_clock_local_ns | scope_clock_global_ns | with its bound "
        "| x bare |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['launch']} | {r['rank']} | {r['timer']} | {r['bare_ns']:.1f} | {r['local_ns']:.1f} | "
            f"{r['global_ns']:.1f} | {r['global_bound_ns']:.1f} | {r['global_bound_ns'] / r['bare_ns']:.2f} |"
        )
    lines += [
        "",
        f"A global reading with its bound costs {ratio:.2f}x a bare read of the timer in the median "
        f"(worst {worst:.2f}x; goal <= 2x). The first synchronisation took "
        f"{statistics.median(r['sync_s'] for r in rows) * 1e3:.2f} ms (median).",
    ]
    print("\n".join(lines))
    write(
        "clock_read", "The clock library: what a reading costs", lines, {"rows": rows, "ratio": ratio, "worst": worst}
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
