"""Cluster screening against planted faults (issue 43): a 4-host testbed whose links run at
--rate, one link (hosts 0-1) at a quarter of it, then the same testbed with every link equal;
`scope run p2p.allpairs` ROUNDS times on each, and what `show --json` flags.  The ground truth
is what was planted: exactly the link h0-h1, then nothing.  Needs root (network namespaces).

    sudo .venv/bin/python bench/screen_testbed.py [--rounds 5] [--rate 400mbit]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from common import scope_cli, write

RUN = ["run", "p2p.allpairs", "--testbed", "scope", "-n", "4", "--sizes", "8,256K", "--launches", "2", "--budget", "1"]


def flagged(db: Path) -> tuple[dict, float]:
    doc = json.loads(scope_cli(db, "show", "last", "--json").stdout)
    out = {}
    for sc in doc["screens"]:
        out[sc["size"]] = sorted((f["kind"], "-".join(f["hosts"]), round(f["ratio"], 2)) for f in sc["flags"])
    return out, doc


def rounds(db: Path, n: int) -> list[dict]:
    rows = []
    for k in range(n):
        t0 = time.monotonic()
        scope_cli(db, *RUN, "--quiet")
        wall = time.monotonic() - t0
        flags, doc = flagged(db)
        big = next(sc for sc in doc["screens"] if sc["size"] == 256 << 10)
        rows.append({"round": k + 1, "wall_s": wall, "flags": flags, "typical_us": big["typical_us"]})
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--rate", default="400mbit")
    a = ap.parse_args()
    slow = f"{int(a.rate.rstrip('mbit')) // 4}mbit"
    data, lines = {"rate": a.rate, "slow": slow, "cases": {}}, []
    cases = [("one slow link", ["--link-rate", f"0-1={slow}"], [("link", "scope-h0-scope-h1")]), ("all equal", [], [])]
    with tempfile.TemporaryDirectory() as tmp:
        for name, planted, truth in cases:
            db = Path(tmp) / f"{len(data['cases'])}.db"
            scope_cli(db, "testbed", "down", check=False)
            scope_cli(db, "testbed", "up", "--hosts", "4", "--rate", a.rate, *planted)
            try:
                rows = rounds(db, a.rounds)
            finally:
                scope_cli(db, "testbed", "down", check=False)
            exact = sum([(k, h) for k, h, _ in r["flags"].get(256 << 10, [])] == truth for r in rows)
            quiet_8 = sum(r["flags"].get(8, []) == [] for r in rows)
            data["cases"][name] = {"planted": planted, "truth": truth, "rounds": rows, "exact": exact}
            lines += [
                f"## {name} ({' '.join(planted) or 'no fault'}; links at {a.rate})",
                "",
                f"flagged list exactly the truth at 256 KiB in {exact} of {len(rows)} runs; nothing flagged "
                f"at 8 B in {quiet_8} of {len(rows)}",
                "",
                "| run | flagged at 256 KiB (kind, hosts, x typical) | flagged at 8 B | typical 256 KiB us | wall s |",
                "|---|---|---|---|---|",
            ]
            for r in rows:
                fl = {int(k): v for k, v in r["flags"].items()}
                lines.append(
                    f"| {r['round']} | {fl.get(256 << 10) or 'nothing'} | {fl.get(8) or 'nothing'} | "
                    f"{r['typical_us']:.0f} | {r['wall_s']:.1f} |"
                )
            lines.append("")
    lines += [
        "Each run: `scope run " + " ".join(RUN[1:]) + "` (2 launches; the pairs timed in parallel,",
        "4 ranks on this machine's 2 cores, oversubscribed).",
        "Reproduce: `sudo .venv/bin/python bench/screen_testbed.py`.",
    ]
    write("screen_testbed", "Screening: planted faults on a 4-host testbed", lines, data)


if __name__ == "__main__":
    main()
