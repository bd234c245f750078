"""Change points on generated histories (issue 54): SCOPE's detector against Apache Otava's
E-divisive on the same series.

200 series of 60 runs, each run three launches.  The noise is SCOPE's own: each series draws its
launch-to-launch spread from the spreads SCOPE measures here (a run of p2p.pingpong and
coll.allreduce in three launches as the bench starts), and its run-to-run spread as 0.5-1.5
times that.  Planted:
a step of 2-20 % (either way) at a known run in 100 series; nothing in 40; one or two single
outliers (15-50 %) in 30; a slow drift (5-15 % over the 60 runs) in 30.

A step found within 2 runs of where it was planted is a true positive (each planted step matched
once); any other step reported is a false positive.  SCOPE reports kinds: only its `step`s count
(an outlier or a drift it names as such is not a change).  Otava (apache-otava from PyPI, in a
virtual environment of its own under bench/work/otava, as it pins numpy 2.2) reports change
points, each counted; it runs with its command's defaults (window 30, p 0.001) on each series'
run medians.

    .venv/bin/python bench/history.py [--series 200] [--runs 60] [--seeds 1,2,3]
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

import numpy as np
from common import ROOT, WORK, write

from scope.analysis.history import Obs, Series, detect

OTAVA = WORK / "otava"
OTAVA_RUN = """
import json, sys
from otava.analysis import compute_change_points
out = []
for values in json.load(sys.stdin):
    cps, _ = compute_change_points(values, window_len=30, max_pvalue=0.001)
    out.append([int(c.index) for c in cps])
json.dump(out, sys.stdout)
"""


def measured_spreads() -> np.ndarray:
    """SCOPE's launch-to-launch spreads (SD of log launch medians), measured here: a run of
    p2p.pingpong and coll.allreduce over 0 B-1 MiB in three launches."""
    from scope.analysis.compare import launch_medians
    from scope.store import Store

    with tempfile.TemporaryDirectory() as d:
        db = Path(d) / "l.db"
        argv = [sys.executable, "-m", "scope", "--db", str(db), "run", "p2p.pingpong", "coll.allreduce", "--sizes",
                "0-1M:x4", "--launches", "3", "--budget", "0.1", "--quiet"]  # fmt: skip
        subprocess.run(argv, check=True, capture_output=True, env=dict(os.environ, PYTHONPATH=str(ROOT / "src")))
        run = Store(db).load_run(1, samples=False)
    sds = [np.std(np.log(m), ddof=1) for p in run.points if len(m := launch_medians(p)) >= 2 and min(m) > 0]
    return np.array([s for s in sds if s > 0])


def generate(n_series: int, n_runs: int, rng: np.random.Generator, spreads: np.ndarray):
    """(series, truth): truth per series is (kind, planted step index or None)."""
    kinds = ["step"] * (n_series // 2) + ["none"] * (n_series * 2 // 10)
    kinds += ["outlier"] * (n_series * 3 // 20)
    kinds += ["drift"] * (n_series - len(kinds))
    out, truth = [], []
    for i, kind in enumerate(kinds):
        sl = float(rng.choice(spreads))
        sr = sl * rng.uniform(0.5, 1.5)
        level = np.full(n_runs, np.log(rng.uniform(1, 100)))
        at = None
        if kind == "step":
            at = int(rng.integers(10, n_runs - 10))
            level[at:] += np.log1p(rng.uniform(0.02, 0.20) * rng.choice([-1, 1]))
        elif kind == "drift":
            level += np.linspace(0, np.log1p(rng.uniform(0.05, 0.15)), n_runs)
        run_level = level + rng.normal(0, sr, n_runs)
        if kind == "outlier":
            for j in rng.choice(np.arange(2, n_runs - 2), size=int(rng.integers(1, 3)), replace=False):
                run_level[j] += np.log1p(rng.uniform(0.15, 0.5))
        obs = []
        for r in range(n_runs):
            launches = np.exp(run_level[r] + rng.normal(0, sl, 3))
            m = float(np.exp(np.log(launches).mean()))
            half = 4.303 * np.std(np.log(launches), ddof=1) / np.sqrt(3)  # t(0.975, 2)
            obs.append(Obs(r + 1, f"2026-01-01T00:00:{r:02d}Z", m, m * np.exp(-half), m * np.exp(half),
                           tuple(launches)))  # fmt: skip
        out.append(Series(f"gen.{kind}", {"series": str(i)}, 8, "us", obs))
        truth.append((kind, at))
    return out, truth


def otava(series: list[Series]) -> list[list[int]] | None:
    if not (OTAVA / "bin" / "python").exists():
        subprocess.run([sys.executable, "-m", "venv", str(OTAVA)], check=True)
        p = subprocess.run(
            [str(OTAVA / "bin" / "pip"), "install", "-q", "apache-otava"], capture_output=True, text=True
        )
        if p.returncode != 0:
            print(f"Otava could not be installed: {p.stderr[-300:]}", file=sys.stderr)
            return None
    values = [[o.median for o in s.obs] for s in series]
    p = subprocess.run([str(OTAVA / "bin" / "python"), "-c", OTAVA_RUN], input=json.dumps(values),
                       capture_output=True, text=True, check=True)  # fmt: skip
    return json.loads(p.stdout)


def score(found: list[list[int]], truth) -> dict:
    tp = fp = fn = 0
    quiet = [True] * len(truth)
    for i, ((_, at), idx) in enumerate(zip(truth, found)):
        matched = False
        for k in idx:
            if at is not None and not matched and abs(k - at) <= 2:
                matched, tp = True, tp + 1
            else:
                fp += 1
        fn += at is not None and not matched
        quiet[i] = not idx
    prec = tp / (tp + fp) if tp + fp else 1.0
    rec = tp / (tp + fn) if tp + fn else 1.0
    none = [q for q, (kind, _) in zip(quiet, truth) if kind != "step"]
    by_kind = {
        k: float(np.mean([q for q, (kk, _) in zip(quiet, truth) if kk == k])) for k in ("none", "outlier", "drift")
    }
    return {"tp": tp, "fp": fp, "fn": fn, "precision": prec, "recall": rec,
            "f1": 2 * prec * rec / (prec + rec) if prec + rec else 0.0,
            "quiet_without_step": float(np.mean(none)), "quiet_by_kind": by_kind}  # fmt: skip


def one(seed: int, a, spreads: np.ndarray) -> dict:
    """One generated set of series, judged by both detectors."""
    series, truth = generate(a.series, a.runs, np.random.default_rng(seed), spreads)
    t0 = time.monotonic()
    changes = detect(series)
    took = time.monotonic() - t0
    found: dict[int, list[int]] = {id(s): [] for s in series}
    named = {"outlier": 0, "drift": 0}
    for c in changes:
        if c.kind == "step":
            found[id(c.series)].append(c.index)
        else:
            named[c.kind] = named.get(c.kind, 0) + 1
    mine = score([found[id(s)] for s in series], truth)
    t0 = time.monotonic()
    theirs_idx = otava(series)
    took_o = time.monotonic() - t0
    theirs = score(theirs_idx, truth) if theirs_idx is not None else None
    return {"seed": seed, "scope": dict(mine, seconds=took, named=named),
            "otava": dict(theirs, seconds=took_o) if theirs else None}  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--series", type=int, default=200)
    ap.add_argument("--runs", type=int, default=60)
    ap.add_argument("--seeds", default="1,2,3", help="one generated set of series each")
    a = ap.parse_args()
    spreads = measured_spreads()
    sets = [one(int(x), a, spreads) for x in a.seeds.split(",")]
    q = np.percentile(spreads, [10, 50, 90]) * 100
    rows = [
        f"{a.series} series of {a.runs} runs (3 launches each), one set a seed; launch spreads drawn from SCOPE's "
        "launches measured here (p2p.pingpong and coll.allreduce, 0 B-1 MiB, 3 launches; SD of log launch "
        f"medians: 10th/50th/90th percentile {q[0]:.2f} / {q[1]:.2f} / {q[2]:.2f} %, {len(spreads)} points). "
        "Planted: 100 steps of 2-20 %, 40 series with nothing, 30 with single outliers, "
        "30 with slow drift (for the default 200).",
        "",
        "| seed | detector | found | true | false | miss | precision | recall | F1 | quiet where none planted | s |",
        "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for st in sets:
        for name, key in (("SCOPE (steps)", "scope"), ("Apache Otava E-divisive", "otava")):
            s = st[key]
            if s is None:
                rows.append(f"| {st['seed']} | {name} | not run (see stderr) | | | | | | | | |")
                continue
            quiet = s["quiet_without_step"] * 100
            rows.append(f"| {st['seed']} | {name} | {s['tp'] + s['fp']} | {s['tp']} | {s['fp']} | {s['fn']} | "
                        f"{s['precision']:.3f} | {s['recall']:.3f} | {s['f1']:.3f} | {quiet:.1f} % | "
                        f"{s['seconds']:.1f} |")  # fmt: skip
    rows.append("")
    for st in sets:
        mine, theirs = st["scope"], st["otava"]
        line = f"Seed {st['seed']}: SCOPE named {mine['named']['outlier']} runs outliers and "
        line += f"{mine['named']['drift']} slow drifts (not counted as changes); quiet series by kind, SCOPE: "
        line += ", ".join(f"{k} {v * 100:.0f} %" for k, v in mine["quiet_by_kind"].items())
        if theirs:
            line += "; Otava: " + ", ".join(f"{k} {v * 100:.0f} %" for k, v in theirs["quiet_by_kind"].items())
        rows.append(line + ".")
    write("history", "Change points on generated histories: SCOPE against Apache Otava", rows,
          {"series": a.series, "runs": a.runs, "sets": sets})  # fmt: skip


if __name__ == "__main__":
    main()
