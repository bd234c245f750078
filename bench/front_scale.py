"""The front end at thousands of ranks (issue 55): a saved stream of one window-timed allreduce
point at R ranks on R / 16 hosts, built from tests/fixtures/windows' records with per-rank
arrays as the engine writes them (at most 2,000,000 / R repetitions kept, engine/measure.c
WINDOW_KEEP_VALUES), imported, shown and reported, a process each: wall seconds and peak MB.

    .venv/bin/python bench/front_scale.py [--ranks 4096,16384]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import ROOT, write

FIXTURE = ROOT / "tests" / "fixtures" / "windows"
PER_HOST = 16


def stream(folder: Path, ranks: int) -> float:
    """The saved stream; its size in MB."""
    recs = [json.loads(x) for x in (FIXTURE / "launch-1.jsonl").read_text().splitlines() if x.strip()]
    keep = max(20, min(5000, 2_000_000 // ranks))
    rng = random.Random(ranks)
    ctx = next(r for r in recs if r["type"] == "context")
    first = ctx["placement"][0]
    place = [dict(first, rank=r, node=r // PER_HOST * PER_HOST, host=f"node-{r // PER_HOST}") for r in range(ranks)]
    ctx = dict(ctx, ranks=ranks, placement=place)
    pt = next(r for r in recs if r["type"] == "point" and "per_rank" in r)
    starts = [[round(rng.random() * 0.5, 3) for _ in range(keep)] for _ in range(ranks)]
    ends = [[round(40 + rng.random() * 5, 3) for _ in range(keep)] for _ in range(ranks)]
    per_rank = {"own_us_median": [42.0] * ranks, "start_us": starts, "end_us": ends}
    window = dict(pt["window"], repetitions=keep)
    pt = dict(pt, index=0, points=1, params=dict(pt["params"], procs=ranks), window=window, per_rank=per_rank)
    pt.pop("samples", None)
    plan = next(r for r in recs if r["type"] == "plan")
    end = dict(next(r for r in recs if r["type"] == "end"), points=1)
    folder.mkdir()
    (folder / "tests.jsonl").write_text((FIXTURE / "tests.jsonl").read_text())
    with open(folder / "launch-1.jsonl", "w") as f:
        for r in (ctx, plan, pt, end):
            f.write(json.dumps(r) + "\n")
    return (folder / "launch-1.jsonl").stat().st_size / 1e6


def timed(db: Path, args: list) -> tuple[float, float]:
    """Wall seconds and peak resident MB of one scope command (its own rusage)."""
    cmd = [sys.executable, "-m", "scope", "--db", str(db), *map(str, args)]
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                         env=dict(os.environ, PYTHONPATH=str(ROOT / "src")))  # fmt: skip
    _, status, usage = os.wait4(p.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(map(str, args))} failed: {p.stderr.read().decode()[-300:]}")
    return time.monotonic() - t0, usage.ru_maxrss / 1024


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--ranks", default="4096,16384")
    a = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as t:
        tmp = Path(t)
        for ranks in map(int, a.ranks.split(",")):
            mb = stream(tmp / f"s{ranks}", ranks)
            db = tmp / f"r{ranks}.db"
            row = {"ranks": ranks, "stream_mb": mb}
            for name, args in (("import", ["import", tmp / f"s{ranks}"]), ("show", ["show", "last"]),
                               ("report", ["report", "last", "-o", tmp / "r.html"])):  # fmt: skip
                row[name] = timed(db, args)
            rows.append(row)
            print(row, file=sys.stderr)
    lines = [
        "One window-timed allreduce point, R ranks on R / 16 hosts, generated from tests/fixtures/windows; "
        "each command a process of its own.",
        "",
        "| ranks | hosts | stream MB | import s / MB | show s / MB | report s / MB |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        cells = " | ".join(f"{r[k][0]:.2f} / {r[k][1]:.0f}" for k in ("import", "show", "report"))
        lines.append(f"| {r['ranks']:,} | {r['ranks'] // PER_HOST:,} | {r['stream_mb']:.1f} | {cells} |")
    lines += ["", "Limits (issue 55, as the screening issue's for 1,024 hosts): show < 5 s and < 1 GB, report < 30 s.",
              "Reproduce: .venv/bin/python bench/front_scale.py"]  # fmt: skip
    write("front_scale", "The front end at thousands of ranks (issue 55)", lines, {"rows": rows})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
