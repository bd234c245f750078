"""Analysis at scale: `scope show`, `report` and `export` of a run of 10 tests x 4096 sizes
(the largest legal series, each through the piecewise fit), and `scope import` of a
1,000,000-row CSV with the same three commands on it.  Time (median of rounds) and peak memory
(max RSS of the child) per command, and the database's size against the CSV's.  Targets: each
command on the 4096-size run < 2 s; import < 10 s with a database no larger than 3x the CSV;
show, report and export of the import < 5 s and < 1 GB.

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


TESTS = (
    "p2p.pingpong", "p2p.pingping", "p2p.stream", "p2p.bistream", "p2p.exchange",
    "shm.pingpong", "shm.stream", "net.tcp.pingpong", "net.tcp.stream", "p2p.multipair",
)  # fmt: skip


def synthetic_run(db: Path) -> None:
    """10 tests of 4096 sizes each: a protocol switch in the middle, 1 % noise."""
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
                "test": TESTS[series],
                "index": k,
                "params": {"size": int(n)},
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


def commands(db: Path, d: Path) -> dict[str, list[str]]:
    at = ["--db", str(db)]
    return {
        "show": [*at, "show", "1"],
        "show_all": [*at, "show", "1", "--rows", "0"],
        "report": [*at, "report", "1", "-o", str(d / "r.html")],
        "export": [*at, "export", "1", "--format", "csv", "-o", str(d / "e.csv")],
    }


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
        wide = {k: [] for k in ("show", "show_all", "report", "export")}
        yard = []
        for _ in range(a.rounds):  # alternated: this machine's speed drifts
            yard.append(yardstick())
            for k, args in commands(db, d).items():
                wide[k].append(timed(args, env))
        csv = d / "big.csv"
        rng = np.random.default_rng(2)
        sizes = rng.integers(0, 1 << 30, a.rows)
        with open(csv, "w") as f:
            f.write("size,time_us\n")
            f.writelines(f"{n},{1 + n / 5000:.3f}\n" for n in sizes)
        csv_bytes = csv.stat().st_size
        big = {k: [] for k in ("import", "show", "report", "export")}
        for r in range(a.rounds):
            idb = d / f"import{r}.db"
            big["import"].append((*timed(["--db", str(idb), "import", str(csv)], env), idb.stat().st_size))
            yard.append(yardstick())
            for k, args in commands(idb, d).items():
                if k != "show_all":
                    big[k].append(timed(args, env))

    def row(what, runs, target):
        return f"| {what} | {median([x[0] for x in runs]):.2f} | {max(x[1] for x in runs):.0f} | {target} |"

    ratio = median([x[2] for x in big["import"]]) / csv_bytes
    lines = [
        "| what | median s | peak MB | target |",
        "|---|---:|---:|---|",
        row("show (100 rows a series), 10 tests x 4096 sizes", wide["show"], "< 2 s"),
        row("show --rows 0 (every row), 10 tests x 4096 sizes", wide["show_all"], "< 2 s"),
        row("report, 10 tests x 4096 sizes", wide["report"], "< 2 s"),
        row("export --format csv, 10 tests x 4096 sizes", wide["export"], "< 2 s"),
        row(f"import, {a.rows:,} CSV rows", big["import"], "< 10 s"),
        row("show of that import (100 rows shown)", big["show"], "< 5 s, < 1 GB"),
        row("report of that import", big["report"], "< 5 s, < 1 GB"),
        row("export --format csv of that import", big["export"], "< 5 s, < 1 GB"),
        "",
        f"Database after the import: {ratio:.1f} x the CSV's {csv_bytes / 1e6:.1f} MB (target <= 3 x).",
        "",
        f"Rounds: {a.rounds}, the commands alternated. The piecewise fit runs on every series of show and report.",
        f"Machine speed beside them (yardstick(), fixed pure-Python work): median {median(yard):.3f} s, "
        f"range {min(yard):.3f}-{max(yard):.3f} s.",
    ]
    write(
        "scale",
        "Analysis and import at scale",
        lines,
        {"yardstick": yard, "wide": wide, "import": big, "ratio": ratio},
    )


if __name__ == "__main__":
    main()
