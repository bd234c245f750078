"""Numbers that hold across launches (issue 9), measured side by side in one script:

1. coverage: one run of --launches 3, then 10 single launches of the same points; the share of
   those launches whose median lies in the run's next-launch interval (target >= 90 %) and in
   its CI of the median;
2. two identical --launches 3 runs compared: verdicts of change (target: none);
3. a real change (--offcache at 1 MiB; a busy core beside the ranks): found?
4. on the testbed shaped to a slow rate (root only; SCOPE_BENCH_TESTBED=0 skips): a stream
   sweep to 4 MiB within its budget per point, and its rate against the payload truth;
5. wall time of the 3-launch sweep of p2p.pingpong and p2p.stream over osu_latency's sizes
   against one launch each of osu_latency and osu_bw (OSU from $OSU_PT2PT, a directory with
   both built with this venv's mpicc; skipped with a message when absent).

    .venv/bin/python bench/replicates.py [--coverage-launches 10]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from common import ROOT, write

from scope.analysis.replicates import Launch, combine
from scope.launches import launch_share, launch_target
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
LAUNCH_COUNT, LAUNCH_MIN_TIME = int(_share["min-count"]), float(_share["min-time"])


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


def wall_time(db: Path, rounds: int = 5) -> tuple[list[str], dict]:
    head = ["### 5. Wall time against OSU", ""]
    osu = os.environ.get("OSU_PT2PT")
    if not osu or not (Path(osu) / "osu_latency").exists() or not (Path(osu) / "osu_bw").exists():
        return head + [
            "skipped: set OSU_PT2PT to a directory holding osu_latency and osu_bw built with this venv's mpicc",
            "",
        ], {}
    mpiexec = Path(sys.executable).parent / "mpiexec"
    sweep = ["run", "p2p.pingpong", "p2p.stream", "--sizes", "0-4M", "--launches", "3", "--quiet"]
    times: dict[str, list[float]] = {"scope": [], "fixed": [], "osu": []}
    runs: dict[str, list[int]] = {"scope": [], "fixed": []}
    for _ in range(rounds):  # alternated, so the machine's drift falls on all three alike
        for name, extra in (("scope", []), ("fixed", ["--fixed-launches"])):
            t0 = time.monotonic()
            scope(db, *sweep, *extra)
            times[name].append(time.monotonic() - t0)
            runs[name].append(run_id(db))
        t0 = time.monotonic()
        for t in ("osu_latency", "osu_bw"):
            subprocess.run([str(mpiexec), "-n", "2", str(Path(osu) / t)], capture_output=True, check=True)
        times["osu"].append(time.monotonic() - t0)
    ratios = {k: [x / o for x, o in zip(times[k], times["osu"])] for k in ("scope", "fixed")}
    med = {k: statistics.median(v) for k, v in times.items()}
    rmed = {k: statistics.median(v) for k, v in ratios.items()}
    lines = head + [
        "p2p.pingpong + p2p.stream, 0 B–4 MiB, `--launches 3` (front end included: build check, three "
        "launches, storing, combining) against one launch each of osu_latency and osu_bw (0 B/1 B–4 MiB); "
        f"{rounds} rounds, each running the default, `--fixed-launches` and OSU one after the other. "
        "Ratios are per round (side by side), then the median:",
        "",
        "| | median s | ratio to OSU, median | ratios, each round |",
        "|---|---|---|---|",
        f"| SCOPE (default) | {med['scope']:.2f} | **{rmed['scope']:.2f}×** | "
        + ", ".join(f"{r:.2f}" for r in ratios["scope"])
        + " |",
        f"| SCOPE `--fixed-launches` | {med['fixed']:.2f} | {rmed['fixed']:.2f}× | "
        + ", ".join(f"{r:.2f}" for r in ratios["fixed"])
        + " |",
        f"| OSU | {med['osu']:.2f} | 1 | |",
        "",
        "Target ≤ 1.5×. The default measures a launch from the second on only as far as the spread of "
        "the point's earlier launches makes worth it (docs/method.md); `--fixed-launches` measures each "
        "to its share of the precision.",
        "",
        "What it gives up, from the same runs (medians over the points of all rounds): how far a point's "
        "second launch lies from its first (|log m2/m1|: stopping on a running median could push "
        "launches apart), and the relative half-width of the reported 95 % CI:",
        "",
        "| | second launch from first | CI half-width | second launches stopped looser than the share |",
        "|---|---|---|---|",
    ]
    cost = {}
    for name, label in (("scope", "SCOPE (default)"), ("fixed", "SCOPE `--fixed-launches`")):
        cost[name] = launch_effects(db, runs[name])
        c = cost[name]
        lines.append(f"| {label} | {c['d2'] * 100:.1f} % | ±{c['ci'] * 100:.1f} % | {c['relaxed']}/{c['points']} |")
    r = replay(db, runs["fixed"])
    lines += [
        "",
        "Whole launches shift together (a launch can run 13 % faster at every point), so these medians "
        f"differ by run more than by mode. A paired view: the rule replayed on the `--fixed-launches` runs' own "
        f"samples (their second and third launches, {r['launches']} point-launches, cut where the rule would "
        f"have stopped): {r['early']} stop early, keeping {r['kept'] * 100:.0f} % of the measured time; the "
        "rms distance of their medians from the earlier launches' is "
        f"{r['rms_stop'] * 100:.2f} % at the stop against {r['rms_end'] * 100:.2f} % at the end; the run's 95 % "
        f"CI (two-stage bootstrap) from the cut launches is {r['ci_ratio']:.2f}× as wide as from the whole ones "
        f"(median over points; 90th percentile {r['ci_ratio_p90']:.2f}×).",
        "",
    ]
    return lines, {"seconds": times, "ratios": ratios, "ratio": rmed["scope"], "effects": cost, "replay": r}


def replay(db: Path, run_ids: list[int]) -> dict:
    """The engine's stopping rule (scope.launches.launch_target) replayed on fixed-precision
    launches' samples in the order they were taken: where each later launch would have stopped,
    and how far its median then lies from the earlier launches' (does stopping on a running
    median push launches apart?)."""
    s = Store(db, create=False)
    total = kept = 0.0
    early = n = 0
    d_stop, d_end, widen = [], [], []
    for rid in run_ids:
        for p in s.load_run(rid, samples=False).points:
            per = s.launch_points(rid, p.seq)
            cut = [np.asarray(x, dtype=float) for _, x in per]  # each launch's samples up to its replayed stop
            for k in range(1, len(per)):
                rec, x = per[k]
                earlier = [(e["stats"]["median"], e["stats"]["ci_rel"]) for e, _ in per[:k] if e["stats"].get("ci_rel")]
                if not earlier or len(x) < 2:
                    continue
                x = np.asarray(x, dtype=float)
                secs = np.cumsum(x) * float(rec["ops_per_iter"]) * 1e-6
                stop = len(x)
                for i in range(LAUNCH_COUNT, len(x) + 1):
                    srt = np.sort(x[:i])
                    med = float(np.median(srt))
                    j, m = int(i / 2 - 0.98 * math.sqrt(i)), int(math.ceil(i / 2 + 0.98 * math.sqrt(i)))
                    if j < 0 or m >= i:
                        continue
                    ci = max(med - srt[j], srt[m] - med) / med
                    want = launch_target(earlier, med, ci, rec["precision"])
                    if secs[i - 1] >= LAUNCH_MIN_TIME and ci <= want:
                        stop = i
                        break
                mean = float(np.mean([math.log(m) for m, _ in earlier]))
                d_stop.append(math.log(float(np.median(x[:stop]))) - mean)
                d_end.append(math.log(float(np.median(x))) - mean)
                total += float(secs[-1])
                kept += float(secs[stop - 1])
                early += stop < len(x)
                n += 1
                cut[k] = x[:stop]
            full = [np.asarray(x, dtype=float) for _, x in per]
            if len(full) >= 2 and all(len(x) >= LAUNCH_COUNT for x in cut):
                a, b = combine(_launched(full), seed=p.seq), combine(_launched(cut), seed=p.seq)
                if a.ci_lo and b.ci_lo and a.ci_hi > a.ci_lo:
                    widen.append((b.ci_hi - b.ci_lo) / (a.ci_hi - a.ci_lo))
    rms = lambda d: math.sqrt(sum(v * v for v in d) / len(d)) if d else float("nan")  # noqa: E731
    return {
        "launches": n,
        "early": early,
        "kept": kept / total if total else float("nan"),
        "rms_stop": rms(d_stop),
        "rms_end": rms(d_end),
        "ci_ratio": statistics.median(widen) if widen else float("nan"),
        "ci_ratio_p90": float(np.quantile(widen, 0.9)) if widen else float("nan"),
    }


def _launched(samples: list[np.ndarray]) -> list:
    """Launches as analysis/replicates.combine takes them, from their samples: the median and
    the engine's order-statistic 95 % CI of it."""
    out = []
    for x in samples:
        srt, n = np.sort(x), len(x)
        j, m = max(int(n / 2 - 0.98 * math.sqrt(n)), 0), min(int(math.ceil(n / 2 + 0.98 * math.sqrt(n))), n - 1)
        out.append((Launch(float(np.median(srt)), float(srt[j]), float(srt[m]), n), x))
    return out


def launch_effects(db: Path, run_ids: list[int]) -> dict:
    """Over the points of some runs: the median distance of the second launch's median from the
    first's (log scale), the median relative CI half-width, and how many second launches
    measured to a looser target than the first."""
    s = Store(db, create=False)
    d2, ci, relaxed, n = [], [], 0, 0
    for rid in run_ids:
        for p in s.load_run(rid, samples=False).points:
            per = [rec for rec, _ in s.launch_points(rid, p.seq)]
            if len(per) < 2 or p.ci_rel is None:
                continue
            m1, m2 = per[0]["stats"]["median"], per[1]["stats"]["median"]
            d2.append(abs(math.log(m2 / m1)))
            ci.append(p.ci_rel)
            relaxed += per[1]["precision"] > per[0]["precision"] * 1.000001
            n += 1
    return {"d2": statistics.median(d2), "ci": statistics.median(ci), "relaxed": relaxed, "points": n}


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
