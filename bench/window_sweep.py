"""A window-timed allreduce sweep (4 B - 64 KiB, 2 ranks, one launch) against osu_allreduce's
whole process on the same MPICH (issue 52): the run's wall, the seconds its points took (their
`seconds`, the engine's), the clock's synchronisations, how many points ran to their budget and
the widest interval, round by round, alternating; with --against DIR, also the engine built from
the sources in DIR (an earlier commit's engine/, e.g. from `git worktree add`), so a change of
the window rules is measured side by side.

    OSU_BIN=bench/work/omb/bin .venv/bin/python bench/window_sweep.py [--rounds 8] [--against DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import ROOT, toolchain, write

SWEEP = ["run", "coll.allreduce", "--sizes", "4-64K", "--launches", "1", "--quiet", "--no-canary"]


def sweep(db: Path, env: dict) -> dict:
    scope = [sys.executable, "-m", "scope", "--db", str(db)]
    t0 = time.monotonic()
    subprocess.run([*scope, *SWEEP], env=env, capture_output=True, check=True, timeout=600)
    wall = time.monotonic() - t0
    doc = json.loads(subprocess.run([*scope, "export", "last", "--format", "json"], env=env, capture_output=True,
                                    text=True, check=True).stdout)  # fmt: skip
    pts = doc["points"]
    syncs = [e for e in doc["events"] if e.get("type") == "clock" and e.get("at") == "sync"]
    return {
        "wall_s": wall,
        "points_s": sum(p["seconds"] or 0 for p in pts),
        "sync_s": sum(e.get("sync_s") or 0 for e in syncs),
        "at_budget": sum(p["stop"] == "budget" for p in pts),
        "widest_ci": max(p["stats"]["ci_rel"] or 0 for p in pts),
        "windows_us": [p.get("window", {}).get("window_us") for p in pts],
    }


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--against", help="an engine source folder to measure beside this checkout's")
    a = ap.parse_args()
    osu = Path(os.environ.get("OSU_BIN", "")) / "osu_allreduce"
    if not os.environ.get("OSU_BIN") or not osu.is_file():
        print("bench/window_sweep.py: set OSU_BIN to a folder holding osu_allreduce", file=sys.stderr)
        return 2
    tc, _ = toolchain()
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"), OPENBLAS_NUM_THREADS="1")
    env.pop("SCOPE_NO_CANARY", None)
    engines = {"this checkout": env}
    if a.against:
        engines[f"engine of {a.against}"] = dict(env, SCOPE_ENGINE_SRC=str(Path(a.against).resolve()))
    rows: dict[str, list[dict]] = {k: [] for k in engines}
    osu_s: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(a.rounds):
            for name, e in engines.items():
                rows[name].append(sweep(Path(tmp) / "r.db", e))
            t0 = time.monotonic()
            subprocess.run([str(tc.mpiexec), "-n", "2", str(osu), "-m", "4:65536"], capture_output=True, check=True)
            osu_s.append(time.monotonic() - t0)
            said = "; ".join(f"{k} points {v[-1]['points_s']:.3f} s" for k, v in rows.items())
            print(f"round {r + 1}: osu {osu_s[-1]:.2f} s; {said}", file=sys.stderr)
    o = statistics.median(osu_s)
    lines = [
        f"`scope {' '.join(SWEEP)}` and `osu_allreduce -m 4:65536`, {a.rounds} rounds alternating; medians "
        f"(worst in brackets). osu_allreduce's whole process: {o:.3f} s.",
        "",
        "| engine | run wall s | points s | points + sync s | x osu (median) | x osu (worst) | runs with a point at "
        "its budget | widest CI |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, v in rows.items():
        ps = [x["points_s"] + x["sync_s"] for x in v]
        ratios = [p / s for p, s in zip(ps, osu_s)]
        lines.append(
            f"| {name} | {statistics.median(x['wall_s'] for x in v):.2f} | "
            f"{statistics.median(x['points_s'] for x in v):.3f} ({max(x['points_s'] for x in v):.3f}) | "
            f"{statistics.median(ps):.3f} | {statistics.median(ratios):.2f} | {max(ratios):.2f} | "
            f"{sum(x['at_budget'] > 0 for x in v)} of {len(v)} | {max(x['widest_ci'] for x in v):.4f} |"
        )
    lines += [
        "",
        "Goal (issue 52): points + synchronisation <= 2.5x osu_allreduce's wall in the median, <= 4x in the worst, "
        "each point within its precision target (1 %) or its budget.",
        "Reproduce: OSU_BIN=... .venv/bin/python bench/window_sweep.py [--against DIR]",
    ]
    write("window_sweep", "A window-timed allreduce sweep against osu_allreduce", lines,
          {"osu_s": osu_s, "rows": rows})  # fmt: skip
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
