"""Cluster screening against planted faults (issue 43): a 4-host testbed whose links run at
--rate, one link (hosts 0-1) at a quarter of it, then the same testbed with every link equal,
then every link equal and one host (h2) throttled to a tenth of a core (a CFS quota); then
(issue 58) 3 hosts with 4, 5 and 6 ranks, so ranks wrap onto hosts, link 0-2 slow (4 and 5
refused before launch: uneven);
ROUNDS runs on each, and what `show --json` flags.  The links cases run `p2p.allpairs`; the
throttled host case `p2p.allpairs` with the node tests on every host at once (STREAM's triad,
DGEMM; barrier timing: 4 ranks share 2 cores here, too tight for starts on a global clock).
The ground truth is what was planted: exactly the link h0-h1; nothing; exactly the host h2,
over every screen of the run.  Needs root (network namespaces, cgroups).

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
THROTTLED = ["run", "p2p.allpairs", "node.stream", "node.dgemm", "-p", "kernel=triad", "--testbed", "scope", "-n", "4",
             "--sizes", "8,256K", "--launches", "2", "--budget", "2", "--timing", "barrier"]  # fmt: skip


def flagged(db: Path) -> tuple[dict, dict]:
    """Per screen (a size of the pairs, or a node test): (kind, where, x typical) of each flag."""
    doc = json.loads(scope_cli(db, "show", "last", "--json").stdout)
    out = {}
    for sc in doc["screens"]:
        out[f"allpairs {sc['size']} B"] = [(f["kind"], "-".join(f["hosts"]), round(f["ratio"], 2)) for f in sc["flags"]]
    for ns in doc.get("node_screens") or []:
        out[ns["test"]] = [(f["kind"], "-".join(f["hosts"]), round(f["ratio"], 2)) for f in ns["flags"]]
    return out, doc


def rounds(db: Path, n: int, nodes: bool, ranks: int = 4) -> list[dict]:
    rows = []
    argv = list(THROTTLED if nodes else RUN)
    argv[argv.index("-n") + 1] = str(ranks)
    for k in range(n):
        t0 = time.monotonic()
        ran = scope_cli(db, *argv, "--quiet", check=False)
        if ran.returncode == 2:  # refused before launch: said so, a row each round
            rows.append({"round": k + 1, "wall_s": time.monotonic() - t0, "flags": {}, "places": "refused",
                         "refusal": ran.stderr.strip(), "typical_us": float("nan")})  # fmt: skip
            continue
        ran.check_returncode()
        wall = time.monotonic() - t0
        flags, doc = flagged(db)
        big = next(sc for sc in doc["screens"] if sc["size"] == 256 << 10)
        places = [(p["kind"], "-".join(p["where"])) for p in doc["flagged"]]
        rows.append({"round": k + 1, "wall_s": wall, "flags": flags, "places": places, "typical_us": big["typical_us"]})
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--rate", default="400mbit")
    ap.add_argument("--cases", nargs="*", help="only these cases, by name (default: all)")
    a = ap.parse_args()
    slow = f"{int(a.rate.rstrip('mbit')) // 4}mbit"
    data, lines = {"rate": a.rate, "slow": slow, "cases": {}}, []
    # (name, hosts, ranks, what is planted, the truth); issue 58: ranks that wrap onto hosts
    # (4 and 5 ranks on 3 hosts, rank r on host r mod 3) with one slow link among the three
    cases = [
        ("one slow link", 4, 4, ["--link-rate", f"0-1={slow}"], [("link", "scope-h0-scope-h1")]),
        ("all equal", 4, 4, [], []),
        ("one throttled host", 4, 4, ["--throttle", "2=0.1"], [("host", "scope-h2")]),
        ("4 ranks on 3 hosts, one slow link", 3, 4, ["--link-rate", f"0-2={slow}"], "refused"),
        ("5 ranks on 3 hosts, one slow link", 3, 5, ["--link-rate", f"0-2={slow}"], "refused"),
        ("6 ranks on 3 hosts, one slow link", 3, 6, ["--link-rate", f"0-2={slow}"], [("link", "scope-h0-scope-h2")]),
    ]
    only = [c for c in cases if not a.cases or c[0] in a.cases]
    with tempfile.TemporaryDirectory() as tmp:
        for name, hosts, ranks, planted, truth in only:
            db = Path(tmp) / f"{len(data['cases'])}.db"
            scope_cli(db, "testbed", "down", check=False)
            scope_cli(db, "testbed", "up", "--hosts", str(hosts), "--rate", a.rate, *planted)
            try:
                nodes = isinstance(truth, list) and bool(truth) and truth[0][0] == "host"
                rows = rounds(db, a.rounds, nodes=nodes, ranks=ranks)
            finally:
                scope_cli(db, "testbed", "down", check=False)
            # the run's flagged list (analysis/node_screen.flagged_places): every screen's, a place once
            exact = sum(r["places"] == truth for r in rows)
            data["cases"][name] = {"hosts": hosts, "ranks": ranks, "planted": planted, "truth": truth, "rounds": rows,
                                   "exact": exact}  # fmt: skip
            lines += [
                f"## {name} ({' '.join(planted) or 'no fault'}; {ranks} ranks on {hosts} hosts; links at {a.rate})",
                "",
                f"the run's flagged list (every screen's) is exactly the truth {truth or 'nothing'} in {exact} of "
                f"{len(rows)} runs",
                "",
                "| run | flagged list | flagged per screen (kind, where, x typical) | typical 256 KiB us | wall s |",
                "|---|---|---|---|---|",
            ]
            for r in rows:
                if r["places"] == "refused":
                    lines.append(f"| {r['round']} | refused before launch | {r['refusal']} | - | {r['wall_s']:.1f} |")
                    continue
                said = "; ".join(f"{k}: {v or 'nothing'}" for k, v in r["flags"].items())
                places = ", ".join(f"{k} {w}" for k, w in r["places"]) or "nothing"
                lines.append(f"| {r['round']} | {places} | {said} | {r['typical_us']:.0f} | {r['wall_s']:.1f} |")
            lines.append("")
    lines += [
        "Ranks that wrap unevenly onto the hosts (4 or 5 on 3) are refused before launch (run/runner.py",
        "even_screen). Measured before that refusal, with the screen grouping ranks by their namespace:",
        "4 ranks on 3 hosts flagged exactly the slow link 0-2 in 3 of 5 runs (twice link 1-2 besides, at",
        "8 B, 1.38x and 1.39x typical: its one rank pair, on 2 cores shared by 4 ranks), 5 ranks on 3",
        "hosts in 5 of 5; before the grouping, 4 on 3 blamed host 2 (issue 58).",
        "",
        "Links cases: `scope " + " ".join(RUN) + "` (the pairs timed in parallel; 4 ranks on this",
        "machine's 2 cores, oversubscribed). Throttled host: `scope " + " ".join(THROTTLED) + "`.",
        "Reproduce: `sudo .venv/bin/python bench/screen_testbed.py`.",
    ]
    write("screen_testbed", "Screening: planted faults on testbeds of 4 and 3 hosts", lines, data)


if __name__ == "__main__":
    main()
