"""Analysis at scale: `scope show` on a run of 10 series x 4096 sizes (the largest legal
series, each through the piecewise fit), and `scope import` of a 1,000,000-row CSV.  Time
(median of rounds) and peak memory (max RSS of the child) per command, and the database's
size against the CSV's.  Targets: show < 2 s and < 500 MB; import < 10 s with a database no
larger than 3x the CSV.

    .venv/bin/python bench/scale.py [--rounds 3] [--rows 1000000]"""

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from common import ROOT, median, write

sys.path.insert(0, str(ROOT / "src"))
from scope.store import Store  # noqa: E402

# The child reports its own peak RSS: RUSAGE_CHILDREN's is the largest of every child so far.
PEAK = (
    "import resource, runpy, sys\n"
    "try:\n"
    "    runpy.run_module('scope', run_name='__main__', alter_sys=True)\n"
    "finally:\n"
    "    sys.stderr.write('\\nPEAK_KB %d\\n' % resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)\n"
)


def timed(args: list[str], env: dict) -> tuple[float, float]:
    """Wall seconds and the child's peak RSS in MB."""
    t0 = time.monotonic()
    p = subprocess.run([sys.executable, "-c", PEAK, *args], capture_output=True, text=True, env=env)
    secs = time.monotonic() - t0
    if p.returncode != 0:
        raise SystemExit(f"scope {' '.join(args)} failed: {p.stderr.strip()}")
    kb = [int(ln.split()[1]) for ln in p.stderr.splitlines() if ln.startswith("PEAK_KB ")]
    return secs, kb[-1] / 1024


def yardstick() -> float:
    """Seconds for a fixed piece of pure-Python work (a dict of a million ints built and
    summed), timed beside each round: on a shared VM the same code runs 1.5x slower at times,
    and this says how fast the machine was when the figures were taken."""
    t0 = time.perf_counter()
    d = {i: i * 2 for i in range(1_000_000)}
    sum(d.values())
    return time.perf_counter() - t0


def synthetic_run(db: Path) -> None:
    """10 series of 4096 sizes each: a protocol switch in the middle, 1 % noise."""
    s = Store(db)
    rid = s.begin_run(["synthetic"], "bench", 2)
    rng = np.random.default_rng(1)
    sizes = np.arange(1, 4097) * 256
    k = 0
    for series in range(10):
        for n in sizes:
            med = (1.0 + n / 3000) if n < 512 * 1024 else (6.0 + n / 9000)
            med *= 1 + rng.normal(0, 0.01)
            rec = {
                "type": "point",
                "test": "p2p.pingpong",
                "index": k,
                "params": {"size": int(n), "series": series},
                "unit": "us",
                "count": 100,
                "bytes_per_op": float(n),
                "stats": {"median": med, "ci_lo": med * 0.99, "ci_hi": med * 1.01, "ci_rel": 0.01},
                "measures": "synthetic",
            }
            s.add_point(rid, rec, commit=False)
            k += 1
    s.db.commit()
    s.finish_run(rid, "complete")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--rows", type=int, default=1_000_000)
    a = ap.parse_args()
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    with tempfile.TemporaryDirectory() as d:
        d = Path(d)
        db = d / "show.db"
        synthetic_run(db)
        show, brief, yard = [], [], []
        for _ in range(a.rounds):  # alternated: this machine's speed drifts
            yard.append(yardstick())
            show.append(timed(["--db", str(db), "show", "1", "--rows", "0"], env))
            brief.append(timed(["--db", str(db), "show", "1"], env))
        csv = d / "big.csv"
        rng = np.random.default_rng(2)
        sizes = rng.integers(0, 1 << 30, a.rows)
        with open(csv, "w") as f:
            f.write("size,time_us\n")
            f.writelines(f"{n},{1 + n / 5000:.3f}\n" for n in sizes)
        csv_bytes = csv.stat().st_size
        imports, shows = [], []
        for r in range(a.rounds):
            idb = d / f"import{r}.db"
            imports.append((*timed(["--db", str(idb), "import", str(csv)], env), idb.stat().st_size))
            shows.append(timed(["--db", str(idb), "show", "1"], env))
    show_s, show_mb = median([x[0] for x in show]), max(x[1] for x in show)
    imp_s, imp_mb = median([x[0] for x in imports]), max(x[1] for x in imports)
    brief_s, brief_mb = median([x[0] for x in brief]), max(x[1] for x in brief)
    big_s, big_mb = median([x[0] for x in shows]), max(x[1] for x in shows)
    ratio = median([x[2] for x in imports]) / csv_bytes
    lines = [
        "| what | median s | peak MB | target |",
        "|---|---:|---:|---|",
        f"| show --rows 0 (every row), 10 series x 4096 sizes | {show_s:.2f} | {show_mb:.0f} | < 2 s, < 500 MB |",
        f"| show (100 rows a series), 10 series x 4096 sizes | {brief_s:.2f} | {brief_mb:.0f} | < 2 s, < 500 MB |",
        f"| import, {a.rows:,} CSV rows | {imp_s:.2f} | {imp_mb:.0f} | < 10 s |",
        f"| show of that import (100 rows shown) | {big_s:.2f} | {big_mb:.0f} | - |",
        "",
        f"Database after the import: {ratio:.1f} x the CSV's {csv_bytes / 1e6:.1f} MB (target <= 3 x).",
        "",
        f"Rounds: {a.rounds}, the two shows alternated. The piecewise fit runs on every series of the show.",
        f"Machine speed beside them (yardstick(), fixed pure-Python work): median {median(yard):.3f} s, "
        f"range {min(yard):.3f}-{max(yard):.3f} s.",
    ]
    write(
        "scale",
        "Analysis and import at scale",
        lines,
        {"yardstick": yard, "show": show, "show_brief": brief, "import": imports, "show_import": shows, "ratio": ratio},
    )


if __name__ == "__main__":
    main()
