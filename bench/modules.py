"""The wall time of the modules on this machine (issue 15): the full baseline (target: under five
minutes) and the standard module with --time-limit 600, each one `scope run --module` as a user
runs it, its points counted and its status checked.

  .venv/bin/python bench/modules.py
"""

from __future__ import annotations

import time

from common import WORK, scope_cli, write

from scope.store import Store


def timed(db, *args) -> tuple[float, dict]:
    t0 = time.monotonic()
    scope_cli(db, "run", *args, "--io-dir", WORK, "--quiet")
    secs = time.monotonic() - t0
    store = Store(db)
    run = store.load_run(store.resolve_run("last"), samples=False)
    return secs, {"run": run.id, "status": run.status, "points": len(run.points), "launches": run.launches}


def main() -> int:
    WORK.mkdir(parents=True, exist_ok=True)
    db = WORK / "modules.db"
    db.unlink(missing_ok=True)
    data = {}
    lines = ["| module | wall time (s) | target | points | launches | status |", "|---|---|---|---|---|---|"]
    for name, args, target in (
        ("baseline", ["--module", "baseline"], "< 300 s"),
        ("standard", ["--module", "standard", "--time-limit", "600"], "~ 600 s (its limit)"),
    ):
        secs, info = timed(db, *args)
        data[name] = dict(info, seconds=secs)
        lines.append(f"| {name} | {secs:.0f} | {target} | {info['points']} | {info['launches']} | {info['status']} |")
    lines += ["", "Each a single `scope run --module NAME` on this 2-core machine (2 ranks), io files in bench/work.",
              "", "Reproduce: .venv/bin/python bench/modules.py"]  # fmt: skip
    write("modules", "Module wall times", lines, data)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
