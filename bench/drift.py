"""Does the next-launch interval cover what later launches see, once the machine drifts between
runs (issue 28)?  Measured in one script:

1. history: H runs of `p2p.pingpong --sizes 8,1K,64K --launches 3`, a pause between them, so
   they fall in different states of the machine;
2. later: L single launches of the same points, a pause between them;
3. per point of the last history run: its own next-launch interval (the run's launches only)
   and the one `show` gives with the drift between the H runs taken in (analysis/noise.py);
   the share of later launch medians each covers (stated 95 %, target >= 90 %);
4. the canaries of every launch, beside the figures they accompany: how far they moved.

    .venv/bin/python bench/drift.py [--history 4] [--later 8] [--pause 5]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from common import scope_cli, write

from scope.analysis.noise import canary_values, drift_between_runs, next_interval
from scope.store import Store

POINTS = ["p2p.pingpong", "--sizes", "8,1K,64K", "-n", "2", "--budget", "0.2", "--quiet"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--history", type=int, default=4)
    ap.add_argument("--later", type=int, default=8)
    ap.add_argument("--pause", type=float, default=5.0, help="seconds between runs")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "drift.db"
        for i in range(args.history):
            scope_cli(db, "run", *POINTS, "--launches", "3")
            print(f"history run {i + 1} of {args.history}", flush=True)
            time.sleep(args.pause)
        for i in range(args.later):
            scope_cli(db, "run", *POINTS, "--launches", "1")
            print(f"later launch {i + 1} of {args.later}", flush=True)
            time.sleep(args.pause)
        store = Store(db, create=False)
        runs = [store.load_run(i, samples=False) for i in range(1, args.history + args.later + 1)]
    history, later = runs[: args.history], runs[args.history :]
    last = history[-1]
    drift = drift_between_runs(last, history[:-1])
    rows, held_own, held_wide, total = [], 0, 0, 0
    for p in last.points:
        own, wide = next_interval(p, None), next_interval(p, drift)
        seen = [q.median for r in later for q in r.points if q.size == p.size and q.median]
        in_own = sum(own[0] <= m <= own[1] for m in seen)
        in_wide = sum(wide[0] <= m <= wide[1] for m in seen)
        held_own, held_wide, total = held_own + in_own, held_wide + in_wide, total + len(seen)
        rows.append(
            f"| {p.size} | {p.median:.4g} | {own[0]:.4g}-{own[1]:.4g} | {in_own}/{len(seen)} | "
            f"{wide[0]:.4g}-{wide[1]:.4g} | {in_wide}/{len(seen)} | {min(seen):.4g}-{max(seen):.4g} |"
        )
    canary = []
    for r in runs:
        c = canary_values(r)
        cells = [f"{min(v):.4g}-{max(v):.4g}" if v else "-" for v in c.values()]
        canary.append(f"| {r.id} | {r.launches or 1} | {' | '.join(cells)} |")
    sd = f"{drift.between_sd * 100:.2f} %" if drift else "none (too few runs)"
    lines = [
        f"{args.history} runs of `scope run {' '.join(POINTS)} --launches 3`, then {args.later} single launches, "
        f"{args.pause:g} s apart. Intervals of the last history run (stated 95 %) against the later launches' "
        f"medians. Drift between runs (sigma_b, log scale): {sd}.",
        "",
        "| size B | median us | own next-launch us | held | with drift us | held | later launches us |",
        "|---|---|---|---|---|---|---|",
        *rows,
        "",
        f"Coverage: own interval {held_own}/{total} ({100 * held_own / total:.0f} %), "
        f"widened by the drift {held_wide}/{total} ({100 * held_wide / total:.0f} %); target >= 90 %.",
        "",
        "Canaries (start and end of each launch; compute: 100,000 dependent multiply-adds; copy: twice the LLC; "
        "core to core: a cache line between ranks 0 and 1, one way):",
        "",
        "| run | launches | compute us | copy us | core to core us |",
        "|---|---|---|---|---|",
        *canary,
    ]
    data = {
        "between_sd": drift.between_sd if drift else None,
        "coverage_own": held_own / total,
        "coverage_widened": held_wide / total,
        "points": total,
    }
    write("drift", "Next-launch intervals against later launches, with the drift between runs (bench/drift.py)",
          lines, data)  # fmt: skip


if __name__ == "__main__":
    main()
