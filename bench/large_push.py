"""A large measured run with its samples leaves its store (issue 72): exported as a bundle,
pushed to a hub, read back from it, each step timed beside the run's own `show`.

The run: a saved stream of 3 launches of window-timed collective points with per-rank windows
and 100 samples a launch (tests/fixtures/windows, its 4 points repeated at new sizes), imported
through `scope import`, N points in all.  The hub: `scope hub serve` on SQLite, its upload limit
raised to hold the push (`--max-upload-mb`).  Read back: the hub's copy of the bundle
(`/api/runs/ID/bundle`) compared byte for byte with what was pushed, imported into an empty
store, and its `show` compared with the original's.  Each command a process of its own: wall
seconds and peak resident MB.  Writes bench/results/large_push.{md,json}.

    .venv/bin/python bench/large_push.py [--points 100000]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "src"), str(ROOT), str(ROOT / "bench")]

from views_cost import live_store, timed  # noqa: E402

from scope.hub import tokens  # noqa: E402
from scope.hub.db import migrate, open_engine  # noqa: E402
from tests.hub_server import Hub  # noqa: E402

RESULTS = ROOT / "bench" / "results"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--points", type=int, default=100_000, help="points of the run, all launches (default 100000)")
    a = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="scope-large-push-"))
    t0 = time.monotonic()
    db = live_store(a.points, tmp, samples=True)
    print(f"store of {a.points:,} points with samples built in {time.monotonic() - t0:.0f} s", flush=True)
    rows: list[dict] = []

    def step(name: str, argv: list[str], on: Path = db) -> float:
        wall, mb, why = timed(on, argv, tmp)
        rows.append({"step": name, "wall_s": round(wall, 2), "peak_mb": round(mb), "failed": why})
        print(f"| {name} | {wall:.2f} | {mb:.0f} | {why or ''} |", flush=True)
        return wall

    print("| step | wall s | peak MB | failed |\n|---|---|---|---|")
    step("show", ["show", "last"])
    (tmp / "out").rename(tmp / "show-original")
    step("export bundle", ["export", "last", "--format", "bundle", "-o", str(tmp / "x.bundle")])
    size = (tmp / "x.bundle").stat().st_size
    url = str(tmp / "hub.db")
    eng = open_engine(url, pool=1)
    migrate(eng)
    os.environ["SCOPE_HUB_TOKEN"] = tokens.add_token(eng, "large")[1]
    eng.dispose()
    with Hub(url, "--max-upload-mb", str(max(64, 2 * (size >> 20) + 1))) as hub:
        step("push (export and upload)", ["push", "last", "--hub", hub.base, "--timeout", "3600"])
        t1 = time.monotonic()
        code, body, _ = hub.get("/api/runs/1/bundle")  # the one run of a hub made for it
        rows.append({"step": "read back (GET bundle)", "wall_s": round(time.monotonic() - t1, 2), "peak_mb": None,
                     "failed": None if code == 200 else f"HTTP {code}"})  # fmt: skip
        print(f"| read back (GET bundle) | {rows[-1]['wall_s']:.2f} | | {rows[-1]['failed'] or ''} |")
    same_bytes = same_show = False
    if code == 200:  # a step that failed is a row saying why, and the steps after it are not made
        (tmp / "back.bundle").write_bytes(body)
        same_bytes = body == (tmp / "x.bundle").read_bytes()
        step("import the copy", ["--db", str(tmp / "again.db"), "import", str(tmp / "back.bundle")])
    if (tmp / "again.db").exists():
        again = tmp / "copy.db"
        (tmp / "again.db").rename(again)
        step("show of the copy", ["show", "last"], again)
        same_show = (tmp / "out").read_bytes() == (tmp / "show-original").read_bytes()
    show = rows[0]["wall_s"]
    verdict = {
        "bundle_mb": round(size / 1e6, 1),
        "copy_same_bytes": same_bytes,
        "copy_show_same": same_show,
        "within_2x_show": {r["step"]: r["wall_s"] <= 2 * show for r in rows[1:] if r["step"] != "show of the copy"},
    }
    print(json.dumps(verdict, indent=1))
    _write(a.points, rows, verdict)
    subprocess.run(["rm", "-rf", str(tmp)], check=False)


def _write(n: int, rows: list[dict], verdict: dict) -> None:
    RESULTS.mkdir(exist_ok=True)
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    (RESULTS / "large_push.json").write_text(json.dumps({"when": when, "points": n, "rows": rows, **verdict}, indent=1))
    lines = [
        "# A large measured run with its samples: export, push, read back",
        "",
        f"{when}; {os.uname().nodename}; {n:,} points (3 launches, per-rank windows, 100 samples a launch); "
        f"bundle {verdict['bundle_mb']} MB",
        "",
        "| step | wall s | peak MB | within 2x show |",
        "|---|---|---|---|",
    ]
    for r in rows:
        ok = verdict["within_2x_show"].get(r["step"])
        mb = "" if r["peak_mb"] is None else r["peak_mb"]
        lines.append(f"| {r['step']} | {r['wall_s']:.2f}{' (failed: ' + r['failed'] + ')' if r['failed'] else ''} "
                     f"| {mb} | {'' if ok is None else ('yes' if ok else 'no')} |")  # fmt: skip
    lines += [
        "",
        f"The hub's copy is the pushed bundle byte for byte: {verdict['copy_same_bytes']}; the copy's `show` is "
        f"the original's: {verdict['copy_show_same']}.",
        "Goal (issue 72): each step within 2x the time of the run's `show`.",
        "Reproduce: .venv/bin/python bench/large_push.py",
    ]
    (RESULTS / "large_push.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
