"""Section 5 of bench/replicates.py: the wall time of a replicated sweep against OSU's, side by
side for the default (later launches informed by the earlier ones) and --fixed-launches, and
what the informed launches give up, on the same runs and on a paired replay of the rule."""

from __future__ import annotations

import math
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from common import scope_cli

from scope.analysis.replicates import Launch, combine
from scope.run.launches import launch_share, launch_target
from scope.store import Store

# what one launch of three is asked (launches.launch_share of the defaults)
_share = {"precision": 0.01, "min-count": 20, "min-time": 0.01, "budget": 1.0}
launch_share(_share, None, 3)
LAUNCH_COUNT, LAUNCH_MIN_TIME = int(_share["min-count"]), float(_share["min-time"])


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
            scope_cli(db, *sweep, *extra)
            times[name].append(time.monotonic() - t0)
            runs[name].append(Store(db, create=False).resolve_run("last"))
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
    """The engine's stopping rule (scope.run.launches.launch_target) replayed on fixed-precision
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
                    med, lo, hi = _median_ci(x[:i])
                    if lo is None:
                        continue
                    ci = max(med - lo, hi - med) / med
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


def _median_ci(x: np.ndarray) -> tuple[float, float | None, float | None]:
    """The median and its 95 % CI from order statistics n/2 -/+ 0.98 sqrt(n), as the engine
    takes them; no CI when those fall outside the samples (too few)."""
    srt, n = np.sort(x), len(x)
    j, m = int(n / 2 - 0.98 * math.sqrt(n)), int(math.ceil(n / 2 + 0.98 * math.sqrt(n)))
    med = float(np.median(srt))
    return (med, float(srt[j]), float(srt[m])) if 0 <= j and m < n else (med, None, None)


def _launched(samples: list[np.ndarray]) -> list:
    """Launches as analysis/replicates.combine takes them, from their samples."""
    return [(Launch(*_median_ci(x), len(x)), x) for x in samples]


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
