"""What the views cost on large runs (issue 52): `show`, `show --json`, `export` and `report` of
generated stores, timed as a user runs them (a process each: wall seconds and peak memory),
printed beside the last recorded figures so a regression shows in the change that made it.

- imported: a CSV of N `size,time_us` rows (4,096 sizes), stored by `scope import`;
- live: a saved stream of three launches of window-timed collective points with per-rank
  windows (tests/fixtures/windows' records, repeated over N / 3 sizes each, their samples
  left out so the stream stays on disk), stored by `scope import DIR` as a run of three
  launches (the engine's record format, each line checked as a live run's are); besides the
  views, its bundle exported and imported again (issue 72);
- events: a program's clock-library events, N in all over 16 ranks (PREFIX.RANK.jsonl, as
  engine/clock/clock_events.c writes them), stored by `scope import PREFIX`.

    .venv/bin/python bench/views_cost.py [--imported 10000,100000,1000000] [--live 10000,100000]
                                         [--events 1000000]
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

from common import RESULTS, ROOT, write

FIXTURE = ROOT / "tests" / "fixtures" / "windows"
VIEWS = {
    "show": ["show", "last"],
    "show --json": ["show", "last", "--json"],
    "export csv": ["export", "last", "--format", "csv", "-o", "{tmp}/x.csv"],
    "report": ["report", "last", "-o", "{tmp}/r.html"],
}
LIVE_VIEWS = {
    **VIEWS,
    "export json": ["export", "last", "--format", "json", "-o", "{tmp}/x.json"],
    "export bundle": ["export", "last", "--format", "bundle", "-o", "{tmp}/x.bundle"],
    "import bundle": ["--db", "{tmp}/again.db", "import", "{tmp}/x.bundle"],  # the bundle just exported
}
EVENT_VIEWS = {k: LIVE_VIEWS[k] for k in ("show", "show --json", "export csv", "export json")}
RANKS = 16


def timed(db: Path, argv: list[str], tmp: Path) -> tuple[float, float, str | None]:
    """Wall seconds and peak resident MB of one scope command in a process of its own (its own
    rusage, from wait4), and why it failed (None: it did not); an argv naming its own --db (the
    import of a bundle) runs on that."""
    (tmp / "again.db").unlink(missing_ok=True)
    own = [] if argv[0] == "--db" else ["--db", str(db)]
    cmd = [sys.executable, "-m", "scope", *own, *(a.replace("{tmp}", str(tmp)) for a in argv)]
    with open(tmp / "out", "w") as out, open(tmp / "err", "w+") as err:
        t0 = time.monotonic()
        p = subprocess.Popen(cmd, stdout=out, stderr=err, env=dict(os.environ, PYTHONPATH=str(ROOT / "src")))
        _, status, usage = os.wait4(p.pid, 0)
        wall = time.monotonic() - t0
        p.returncode = os.waitstatus_to_exitcode(status)
        why = None
        if p.returncode != 0:  # a row of its own: what fails at a size is a figure too
            err.seek(0)
            why = (err.read().strip().splitlines() or ["no message"])[-1][:160]
    return wall, usage.ru_maxrss / 1024, why


def imported_store(n: int, tmp: Path) -> Path:
    rng = random.Random(1)
    csv = tmp / f"imported-{n}.csv"
    with open(csv, "w") as f:
        f.write("size,time_us\n")
        for k in range(n):
            s = 8 * (k % 4096 + 1)
            f.write(f"{s},{1.0 + s / 5000 + rng.random() * 0.1:.4f}\n")
    db = tmp / f"imported-{n}.db"
    subprocess.run([sys.executable, "-m", "scope", "--db", str(db), "import", str(csv)], check=True,
                   capture_output=True, env=dict(os.environ, PYTHONPATH=str(ROOT / "src")))  # fmt: skip
    return db


def live_store(n: int, tmp: Path, samples: bool = False) -> Path:
    """A saved stream of 3 launches, n points in all (n / 3 a launch), imported as a run;
    `samples`: each launch's point keeps its 100 samples (bench/large_push.py)."""
    recs = [json.loads(x) for x in (FIXTURE / "launch-1.jsonl").read_text().splitlines() if x.strip()]
    points = [r for r in recs if r["type"] == "point"]
    head = [r for r in recs if r["type"] in ("context", "plan")]
    per_launch = max(1, n // 3)
    d = tmp / f"live-{n}"
    d.mkdir()
    (d / "tests.jsonl").write_text((FIXTURE / "tests.jsonl").read_text())
    for k in (1, 2, 3):
        with open(d / f"launch-{k}.jsonl", "w") as f:
            for r in head:
                f.write(json.dumps(r) + "\n")
            for i in range(per_launch):
                p = dict(points[i % len(points)], index=i, points=per_launch)
                p["params"] = dict(p["params"], size=8 * (i + 1))
                if not samples:
                    p.pop("samples", None)
                f.write(json.dumps(p) + "\n")
            f.write(json.dumps({"type": "end", "status": "complete", "points": per_launch, "errors": 0, "skips": 0,
                                "seconds": 1.0}) + "\n")  # fmt: skip
    db = tmp / f"live-{n}.db"
    subprocess.run([sys.executable, "-m", "scope", "--db", str(db), "import", str(d)], check=True,
                   capture_output=True, env=dict(os.environ, PYTHONPATH=str(ROOT / "src")))  # fmt: skip
    return db


def events_store(n: int, tmp: Path) -> Path:
    """A program's events, n over RANKS ranks, as the clock library writes them, imported."""
    d = tmp / f"events-{n}"
    d.mkdir()
    per = max(1, n // RANKS)
    names = ("halo", "compute", "reduce", "io")
    for r in range(RANKS):
        head = {"type": "events", "schema": 1, "library": "1.0.0", "rank": r, "size": RANKS, "host": f"h{r // 4}",
                "timer": "tsc", "tick_ns": 0.5, "method": "tree", "clock_domain": "rank", "clock_of": r,
                "depth": r.bit_length(), "truth_known": True, "injected_offset_ns": 0, "injected_drift": 0,
                "injected_base_ns": 0, "sync_s": 0.001, "bound_z": 3.5}  # fmt: skip
        with open(d / f"ev.{r}.jsonl", "w") as f:
            f.write(json.dumps(head) + "\n")
            for i in range(per):
                t = 1_000_000 + i * 1000 + r * 3
                f.write(f'{{"type":"event","name":"{names[i % 4]}","t_ns":{t + 7},"bound_ns":40.0,'
                        f'"ticks":{2 * t},"sync":{1 + i // 1000}}}\n')  # fmt: skip
    db = tmp / f"events-{n}.db"
    subprocess.run([sys.executable, "-m", "scope", "--db", str(db), "import", str(d / "ev")], check=True,
                   capture_output=True, env=dict(os.environ, PYTHONPATH=str(ROOT / "src")))  # fmt: skip
    return db


def counts(text: str) -> list[int]:
    return [int(x) for x in text.split(",") if x]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--imported", type=counts, default=[10_000, 100_000, 1_000_000])
    ap.add_argument("--live", type=counts, default=[10_000, 100_000])
    ap.add_argument("--events", type=counts, default=[1_000_000])
    a = ap.parse_args()
    last_file = RESULTS / "views_cost.json"
    last = json.loads(last_file.read_text()).get("rows", {}) if last_file.exists() else {}
    rows, lines = {}, []
    with tempfile.TemporaryDirectory() as t:
        tmp = Path(t)
        kinds = (("imported", a.imported, imported_store, VIEWS), ("live", a.live, live_store, LIVE_VIEWS),
                 ("events", a.events, events_store, EVENT_VIEWS))  # fmt: skip
        for kind, sizes, make, views in kinds:
            for n in sizes:
                print(f"{kind} {n:,} points ...", file=sys.stderr, flush=True)
                db = make(n, tmp)
                for view, argv in views.items():
                    wall, mb, why = timed(db, argv, tmp)
                    key = f"{kind} {n} {view}"
                    rows[key] = {"wall_s": wall, "peak_MB": mb, "failed": why}
                    was = last.get(key)
                    before = f"{was['wall_s']:.2f} s, {was['peak_MB']:.0f} MB" if was else "-"
                    if was and was.get("failed"):
                        before = f"failed ({was['failed'][:60]})"
                    shown = f"failed after {wall:.2f} s: {why}" if why else f"{wall:.2f}"
                    lines.append(f"| {kind} | {n:,} | {view} | {shown} | {mb:.0f} | {before} |")
                    print(lines[-1], flush=True)
    out = [
        "Each view of a generated store, a process of its own (wall seconds, peak resident MB), beside the",
        "figures this file held before this run. Imported: a CSV of N rows, 4,096 sizes. Live: a saved stream",
        "of 3 launches of window-timed collective points with per-rank windows (tests/fixtures/windows,",
        "samples left out), N points in all; its bundle exported, then imported into an empty store. Events:",
        "a program's clock-library events, N over 16 ranks.",
        "",
        "| store | points | view | wall s | peak MB | last recorded |",
        "|---|---|---|---|---|---|",
        *lines,
        "",
        "Goal (issue 52): show of the 10^6-point import <= 2 s and <= 600 MB; its report <= 10 s.",
        "Goals (issue 72): live 10^5: show <= 2 s and 600 MB, show --json <= 10 s, report <= 15 s, bundle",
        "export and import <= 3 s and 600 MB each; live 10^4: report <= 5 s; export json of 10^6 events",
        "<= 5 s and 400 MB.",
        "Reproduce: .venv/bin/python bench/views_cost.py",
    ]
    write("views_cost", "What the views cost on large runs", out, {"rows": {**last, **rows}})  # rows not run kept


if __name__ == "__main__":
    main()
