"""Numbers that hold across launches (issue 9), measured side by side in one script:

1. coverage: one run of --launches 3, then 10 single launches of the same points; the share of
   those launches whose median lies in the run's next-launch interval (target >= 90 %) and in
   its CI of the median;
2. two identical --launches 3 runs compared: verdicts of change (target: none);
3. a real change (--offcache at 1 MiB; a busy core beside the ranks; a testbed link shaped
   10 % slower, root only): found?
4. on the testbed shaped to a slow rate (root only; SCOPE_BENCH_TESTBED=0 skips): a stream
   sweep to 4 MiB within its budget per point, and its rate against the payload truth;
5. wall time of the 3-launch sweep of p2p.pingpong and p2p.stream over osu_latency's sizes
   against one launch each of osu_latency and osu_bw (OSU from $OSU_PT2PT, a directory with
   both built with this venv's mpicc; skipped with a message when absent), for the default and
   --fixed-launches, and what informed launches give up (bench/launchcost.py).

    .venv/bin/python bench/replicates.py [--coverage-launches 10]
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

from common import ROOT, write
from launchcost import wall_time

from scope.run.launches import launch_share
from scope.store import Store

SCOPE = [sys.executable, "-m", "scope"]
SIZES = "8,1K,64K,1M"
TESTS = ["p2p.pingpong", "p2p.pingping", "p2p.stream", "p2p.bistream", "p2p.exchange"]


def scope(db: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    p = subprocess.run([*SCOPE, "--db", str(db), *args], capture_output=True, text=True, env=env, timeout=3600)
    if check and p.returncode not in (0, 1):
        raise SystemExit(f"scope {' '.join(args)} failed ({p.returncode}): {p.stderr[-2000:]}")
    return p


def last_points(db: Path) -> dict:
    s = Store(db, create=False)
    run = s.load_run(s.resolve_run("last"), samples=False)
    return {(p.test, p.size): p for p in run.points}


# A launch of a 3-launch run does its share of the point (launches.launch_share): a "next
# launch" is one of those, so the single launches measure with the same settings.
_share = {"precision": 0.01, "min-count": 20, "min-time": 0.01, "budget": 1.0}
launch_share(_share, None, 3)
LAUNCH_ARGS = [x for name, v in _share.items() for x in (f"--{name}", f"{v:.6g}")]


def coverage(db: Path, launches: int) -> tuple[list[str], dict]:
    scope(db, "run", *TESTS, "--sizes", SIZES, "--launches", "3", "--quiet")
    ref = last_points(db)
    hits_next = {k: 0 for k in ref}
    hits_ci = {k: 0 for k in ref}
    seen = {k: [] for k in ref}
    for _ in range(launches):
        scope(db, "run", *TESTS, "--sizes", SIZES, "--launches", "1", *LAUNCH_ARGS, "--quiet")
        for k, p in last_points(db).items():
            r = ref.get(k)
            if r is None or p.median is None:
                continue
            seen[k].append(p.median)
            rep = r.replication
            hits_next[k] += rep is not None and rep.next_lo <= p.median <= rep.next_hi
            hits_ci[k] += r.ci_lo <= p.median <= r.ci_hi
    lines = [
        f"### 1. Coverage: a `--launches 3` run, then {launches} single launches of the same points",
        "",
        f"Each single launch measures as a launch of the run does (`{' '.join(LAUNCH_ARGS)}`: "
        "the defaults' share of one launch in three).",
        "",
        "| test | size | median (3 launches) µs | 95 % CI µs | next launch µs | single launches' medians µs "
        "| in next-launch interval | in CI |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for k, r in sorted(ref.items()):
        rep = r.replication
        xs = seen[k]
        lines.append(
            f"| {k[0]} | {k[1]} | {r.median:.4g} | {r.ci_lo:.4g}–{r.ci_hi:.4g} | {rep.next_lo:.4g}–{rep.next_hi:.4g} "
            f"| {min(xs):.4g}–{max(xs):.4g} | {hits_next[k]}/{len(xs)} | {hits_ci[k]}/{len(xs)} |"
        )
    total = sum(len(v) for v in seen.values())
    share_next = sum(hits_next.values()) / total
    share_ci = sum(hits_ci.values()) / total
    lines += [
        "",
        f"Share of single launches inside the next-launch interval: **{share_next * 100:.0f} %** "
        f"({sum(hits_next.values())}/{total}; target ≥ 90 %). Inside the CI of the median: "
        f"{share_ci * 100:.0f} % (the CI is of the 3-launch median, not of one launch: it is not "
        "meant to hold single launches).",
        "",
    ]
    return lines, {"share_next": share_next, "share_ci": share_ci, "launches": launches}


def verdicts(db: Path, a: int, b: int) -> dict[str, int]:
    rows = json.loads(scope(db, "compare", str(a), str(b), "--json").stdout)
    out: dict[str, int] = {}
    for r in rows:
        out[r["verdict"]] = out.get(r["verdict"], 0) + 1
    return out, rows


def run_id(db: Path) -> int:
    s = Store(db, create=False)
    return s.resolve_run("last")


def identical_and_change(db: Path) -> tuple[list[str], dict]:
    base = ["run", *TESTS, "--sizes", SIZES, "--launches", "3", "--quiet"]
    scope(db, *base)
    a = run_id(db)
    scope(db, *base)
    b = run_id(db)
    same, _ = verdicts(db, a, b)
    lines = [
        "### 2. Two identical `--launches 3` runs compared",
        "",
        f"Verdicts over {sum(same.values())} points: {same}. Target: no 'slower' or 'faster'.",
        "",
        "### 3. A real change",
        "",
    ]
    one = ["run", "p2p.pingpong", "p2p.stream", "--sizes", "1M", "--launches", "3", "--quiet"]
    scope(db, *one)
    c = run_id(db)
    scope(db, *one, "--offcache")
    d = run_id(db)
    off, rows = verdicts(db, c, d)
    lines.append("`--offcache` at 1 MiB against the same points in cache:")
    lines.append("")
    lines += [
        f"- {r['test']} 1 MiB: B/A {r['ratio']:.3f} ({r['ci_lo']:.3f}–{r['ci_hi']:.3f}), {r['verdict']}" for r in rows
    ]
    # A busy core beside the two ranks: every launch of B shares the machine with a spinner.
    scope(db, *one)
    e = run_id(db)
    spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        scope(db, *one)
    finally:
        spinner.kill()
    f = run_id(db)
    busy, rows2 = verdicts(db, e, f)
    lines += ["", "One busy core beside the ranks (a spinning process) against an idle machine:", ""]
    lines += [
        f"- {r['test']} 1 MiB: B/A {r['ratio']:.3f} ({r['ci_lo']:.3f}–{r['ci_hi']:.3f}), {r['verdict']}" for r in rows2
    ]
    lines.append("")
    shaped, rows3 = shaped_change(db)
    if shaped is None:
        lines += ["A shaped link: skipped (needs root for the testbed; SCOPE_BENCH_TESTBED=0 skips it)", ""]
    else:
        lines += ["The testbed link shaped to 100 Mbit/s, then to 90 Mbit/s (truth: B/A 1.111):", ""]
        lines += [
            f"- {r['test']} 1 MiB: B/A {r['ratio']:.3f} ({r['ci_lo']:.3f}–{r['ci_hi']:.3f}), {r['verdict']}"
            for r in rows3
        ]
        lines.append("")
    return lines, {"identical": same, "offcache": off, "busy": busy, "shaped": shaped}


def shaped_change(db: Path) -> tuple[dict | None, list]:
    """A change whose size is known: the same stream over a link shaped 10 % slower."""
    if os.environ.get("SCOPE_BENCH_TESTBED") == "0" or os.geteuid() != 0:
        return None, []
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    ids = []
    for rate in ("100mbit", "90mbit"):
        subprocess.run(
            [*SCOPE, "testbed", "up", "--name", "cmp", "--rate", rate], env=env, check=True, capture_output=True
        )
        try:
            scope(db, "run", "--testbed", "cmp", "p2p.stream", "--sizes", "1M", "--launches", "3", "--quiet")
            ids.append(run_id(db))
        finally:
            subprocess.run([*SCOPE, "testbed", "down", "--name", "cmp"], env=env, capture_output=True)
    return verdicts(db, *ids)


def slow_link(db: Path) -> tuple[list[str], dict]:
    head = ["### 4. A slow link: the budget as a promise", ""]
    if os.environ.get("SCOPE_BENCH_TESTBED") == "0" or os.geteuid() != 0:
        return head + ["skipped: needs root for the testbed (SCOPE_BENCH_TESTBED=0 skips it)", ""], {}
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    name = "slow"
    subprocess.run(
        [*SCOPE, "testbed", "up", "--name", name, "--rate", "37mbit"], env=env, check=True, capture_output=True
    )
    try:
        t0 = time.monotonic()
        args = ["run", "--testbed", name, "p2p.stream", "--sizes", "64K,256K,1M,4M", "--budget", "3", "--quiet"]
        p = scope(db, *args, check=False)
        wall = time.monotonic() - t0
        s = Store(db, create=False)
        rid = s.resolve_run("last")
        run = s.load_run(rid, samples=False)
        bed = json.loads(s.run(rid)["context"] or "{}").get("testbed") or {}
    finally:
        subprocess.run([*SCOPE, "testbed", "down", "--name", name], env=env, capture_output=True)
    truth = bed.get("payload_MBps")
    lines = head + [
        f"`scope {' '.join(args)}`: exit {p.returncode}, {wall:.0f} s wall for {len(run.points)} points "
        f"(status {run.status}); payload truth {truth} MB/s",
        "",
        "| size | MB/s | vs truth | seconds (budget 3) | gave up |",
        "|---|---|---|---|---|",
    ]
    for pt in run.points:
        rel = pt.bw_median / truth - 1 if truth and pt.bw_median else float("nan")
        gave = ", ".join(pt.gave_up) or "-"
        lines.append(f"| {pt.size} | {pt.bw_median:.4g} | {rel * 100:+.2f} % | {pt.seconds:.2f} | {gave} |")
    lines.append("")
    return lines, {"truth": truth, "points": [(pt.size, pt.bw_median, pt.seconds) for pt in run.points]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--coverage-launches", type=int, default=10)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "bench.db"
        scope(db, "run", "p2p.pingpong", "--sizes", "8", "--quiet")  # builds the engine once
        lines, data = [], {}
        for part in (
            lambda: coverage(db, a.coverage_launches),
            lambda: identical_and_change(db),
            lambda: slow_link(db),
            lambda: wall_time(db),
        ):
            try:
                ln, d = part()
            except (subprocess.CalledProcessError, SystemExit) as e:  # one part failing keeps the others
                ln, d = [f"failed: {e}", ""], {}
            lines += ln
            data.update(d)
    write("replicates", "Numbers across launches (bench/replicates.py)", lines, data)


if __name__ == "__main__":
    main()
