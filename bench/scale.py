"""Analysis at scale: `scope show` on a run of 10 series x 4096 sizes (the largest legal
series, each through the piecewise fit), and `scope import` of a 1,000,000-row CSV.  Time
(median of rounds) and peak memory (max RSS of the child) per command, and the database's
size against the CSV's.  Targets: show < 2 s and < 500 MB; import < 10 s with a database no
larger than 3x the CSV.

    .venv/bin/python bench/scale.py [--rounds 3] [--rows 1000000]"""

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from common import ROOT, median, write

sys.path.insert(0, str(ROOT / "src"))
from scope.store import Store  # noqa: E402


def timed(args: list[str], env: dict) -> tuple[float, float]:
    """Wall seconds and the child's peak RSS in MB (ru_maxrss of a fresh process group)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    t0 = time.monotonic()
    p = subprocess.run([sys.executable, "-m", "scope", *args], capture_output=True, text=True, env=env)
    secs = time.monotonic() - t0
    if p.returncode != 0:
        raise SystemExit(f"scope {' '.join(args)} failed: {p.stderr.strip()}")
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return secs, max(peak, before) / 1024


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
        show = [timed(["--db", str(db), "show", "1"], env) for _ in range(a.rounds)]
        csv = d / "big.csv"
        rng = np.random.default_rng(2)
        sizes = rng.integers(0, 1 << 30, a.rows)
        with open(csv, "w") as f:
            f.write("size,time_us\n")
            f.writelines(f"{n},{1 + n / 5000:.3f}\n" for n in sizes)
        csv_bytes = csv.stat().st_size
        imports = []
        for r in range(a.rounds):
            idb = d / f"import{r}.db"
            imports.append((*timed(["--db", str(idb), "import", str(csv)], env), idb.stat().st_size))
    show_s, show_mb = median([x[0] for x in show]), max(x[1] for x in show)
    imp_s, imp_mb = median([x[0] for x in imports]), max(x[1] for x in imports)
    ratio = median([x[2] for x in imports]) / csv_bytes
    lines = [
        "| what | median s | peak MB | target |",
        "|---|---:|---:|---|",
        f"| show, 10 series x 4096 sizes | {show_s:.2f} | {show_mb:.0f} | < 2 s, < 500 MB |",
        f"| import, {a.rows:,} CSV rows | {imp_s:.2f} | {imp_mb:.0f} | < 10 s |",
        "",
        f"Database after the import: {ratio:.1f} x the CSV's {csv_bytes / 1e6:.1f} MB (target <= 3 x).",
        "",
        f"Rounds: {a.rounds}. The piecewise fit runs on every series of the show.",
    ]
    write("scale", "Analysis and import at scale", lines, {"show": show, "import": imports, "ratio": ratio})


if __name__ == "__main__":
    main()
