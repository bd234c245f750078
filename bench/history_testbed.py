"""A real history on this machine (issue 54): 20 runs of `p2p.pingpong` across a testbed link,
three ways: nothing changed (quiet); the link shaped slower from run 12 on (shaped: the testbed
made again at half its rate); a CPU hog beside the runs from run 12 on (hog: one busy process
a core).  Then `scope history` on each store: where it finds a change, its step and kind, and
what changed; and `scope history --check --max-slowdown 5%`'s exit code.  Needs root (network
namespaces and tc).

    sudo .venv/bin/python bench/history_testbed.py [--runs 20] [--at 12] [--rate 400mbit]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import tempfile
import time
from pathlib import Path

from common import scope_cli, write

NAME = "hist"
RUN = ["run", "p2p.pingpong", "--testbed", NAME, "-n", "2", "--sizes", "8,64K,1M", "--launches", "3", "--budget",
       "0.3", "--quiet"]  # fmt: skip


def testbed(db: Path, rate: str) -> None:
    scope_cli(db, "testbed", "down", "--name", NAME, check=False)
    scope_cli(db, "testbed", "up", "--hosts", "2", "--rate", rate, "--name", NAME)


def history(db: Path, label: str, runs: int, at: int, rate: str, change: str) -> dict:
    testbed(db, rate)
    hogs: list[subprocess.Popen] = []
    t0 = time.monotonic()
    try:
        for k in range(1, runs + 1):
            if k == at and change == "shaped":
                testbed(db, half(rate))
            if k == at and change == "hog":
                hogs = [subprocess.Popen(["sh", "-c", "while :; do :; done"]) for _ in range(os.cpu_count() or 2)]
            scope_cli(db, *RUN, "--label", f"{label} {k}")
    finally:
        for h in hogs:
            h.kill()
        scope_cli(db, "testbed", "down", "--name", NAME, check=False)
    took = time.monotonic() - t0
    doc = json.loads(scope_cli(db, "history", "--json").stdout)
    gate = scope_cli(db, "history", "--check", "--max-slowdown", "5%", check=False)
    steps = [c for c in doc["changes"] if c["kind"] != "outlier"]
    return {"label": label, "seconds": took, "changes": doc["changes"], "steps": steps, "check_exit": gate.returncode,
            "check_said": gate.stderr.strip().splitlines()}  # fmt: skip


def half(rate: str) -> str:
    """Half a tc rate written as NUMBERunit (e.g. 400mbit -> 200mbit)."""
    digits = "".join(c for c in rate if c.isdigit())
    return f"{int(digits) // 2}{rate[len(digits) :]}"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--at", type=int, default=12)
    ap.add_argument("--rate", default="400mbit")
    a = ap.parse_args()
    out = []
    with tempfile.TemporaryDirectory() as d:
        for change in ("quiet", "shaped", "hog"):
            out.append(history(Path(d) / f"{change}.db", change, a.runs, a.at, a.rate, change))
    rows = [
        f"{a.runs} runs each of `{' '.join(RUN)}` on a 2-host testbed at {a.rate}; shaped: the testbed made again "
        f"at {half(a.rate)} before run {a.at}; hog: {os.cpu_count()} busy processes beside the runs from run {a.at}. "
        "Then `scope history --json` and `scope history --check --max-slowdown 5%`.",
        "",
        "| history | changes (not outliers) | at run | kinds | steps (%) | what changed (first) | --check exit | s |",
        "|---|---:|---|---|---|---|---:|---:|",
    ]
    for h in out:
        st = h["steps"]
        at = sorted({c["run"] for c in st})
        kinds = sorted({c["kind"] for c in st})
        pct = ", ".join(f"{c['step'] * 100:+.0f}" for c in st[:6])
        first = next((c for c in st if c["changed"] or c["machine"]), None)
        said = ""
        if first:
            said = (
                "; ".join(f"{k}: {v[0]} -> {v[1]}" for k, v in first["changed"].items())
                or f"machine: {first['machine']}"
            )
        rows.append(f"| {h['label']} | {len(st)} | {', '.join(map(str, at)) or '-'} | {', '.join(kinds) or '-'} | "
                    f"{pct or '-'} | {said[:160] or '-'} | {h['check_exit']} | {h['seconds']:.0f} |")  # fmt: skip
    write("history_testbed", "A real history on a testbed link: quiet, shaped from run 12, a CPU hog from run 12",
          rows, {"runs": a.runs, "at": a.at, "rate": a.rate, "histories": out})  # fmt: skip


if __name__ == "__main__":
    main()
