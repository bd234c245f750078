"""Links recovered on a simulated platform (issue 55): a 2-host platform from `scope sim platform`
(each host's link of latency L and rate R to one switch), SimGrid's factors set so the payload
truth is exact (`--sim-cfg exact`), and `scope run --sim` of p2p.pingpong over 0 B-4 MiB; then
the Hockney fit SCOPE derives (`scope show --json`) against the truth. Goals: t0 within 5 %,
r_inf within 2 %. Needs SimGrid (libsimgrid-dev).

The truth is the platform's as SMPI simulates it: a message of s bytes crosses the two links in
2 L + (s + 16 B) / R, since SMPI adds a 16-byte envelope (tag, destination, communicator) to
every message it sends (src/smpi/mpi/smpi_request.cpp in SimGrid 3.32, `payload_size_ = size_ +
16`). So t0 = 2 L + 16 B / R and r_inf = R. The table also gives t0 against 2 L alone, and
against a bare 0-byte ping-pong (bench/sim_pingpong.c, smpicc) on the same platform and settings.

    .venv/bin/python bench/sim_links.py [--rates 1Gbps,10Gbps] [--latencies 1us,5us]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import tempfile
import time
from pathlib import Path

from common import ROOT, WORK, scope_cli, write

from scope.run.sim import config_of
from scope.run.simxml import rate_bps, time_s

ENVELOPE_B = 16  # bytes SMPI adds to every message (SimGrid 3.32, smpi_request.cpp)


def bare_one_way_us(plat: Path, d: Path) -> float:
    """SimGrid's own one-way time of a 0-byte message on the platform (bench/sim_pingpong.c)."""
    exe = WORK / "sim_pingpong"
    if not exe.is_file():
        WORK.mkdir(parents=True, exist_ok=True)
        subprocess.run(["smpicc", "-O2", str(ROOT / "bench" / "sim_pingpong.c"), "-o", str(exe)], check=True,
                       capture_output=True)  # fmt: skip
    hosts = d / "hosts"
    hosts.write_text("node-0\nnode-1\n")
    cfg = [f"--cfg={c}" for c in config_of(["exact"])]
    p = subprocess.run(["smpirun", "-np", "2", "-platform", str(plat), "-hostfile", str(hosts), *cfg, str(exe)],
                       capture_output=True, text=True, check=True, timeout=300)  # fmt: skip
    return json.loads(next(ln for ln in p.stdout.splitlines() if ln.startswith("{")))["one_way_us"]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rates", default="1Gbps,10Gbps,100Gbps")
    ap.add_argument("--latencies", default="1us,5us")
    a = ap.parse_args()
    rows = [
        "Each case: `scope sim platform --hosts 2 --rate R --latency L`, then `scope run --sim ... --sim-cfg exact "
        "p2p.pingpong --sizes 0-4M:x4 --launches 1`; truth t0 = 2 L + 16 B / R (a link each side of the switch, "
        "and SMPI's 16-byte envelope on every message), r_inf = R.",
        "",
        "| link | Hockney t0 (us) | truth 2 L + 16 B / R (us) | error | against 2 L alone | SimGrid's bare 0 B "
        "one-way (us) | t0 against it | r_inf (MB/s) | truth (MB/s) | error | run (s) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    data = []
    with tempfile.TemporaryDirectory() as d:
        for rate in a.rates.split(","):
            for lat in a.latencies.split(","):
                plat, db = Path(d) / f"{rate}-{lat}.xml", Path(d) / f"{rate}-{lat}.db"
                scope_cli(db, "sim", "platform", "--hosts", "2", "--rate", rate, "--latency", lat, "-o", plat)
                t = time.monotonic()
                scope_cli(db, "run", "p2p.pingpong", "--sim", plat, "--sim-cfg", "exact", "-n", "2", "--sizes",
                          "0-4M:x4", "--launches", "1", "--quiet")  # fmt: skip
                took = time.monotonic() - t
                doc = json.loads(scope_cli(db, "show", "last", "--json").stdout)
                fit = next(f["hockney"] for f in doc["fits"] if f["test"] == "p2p.pingpong" and f.get("hockney"))
                t0, rinf = fit["t0_us"], fit["rinf_MBps"]
                r_true = rate_bps(rate) / 1e6  # MB/s, i.e. bytes a us
                t0_links = 2 * time_s(lat) * 1e6
                t0_true = t0_links + ENVELOPE_B / r_true
                e0, er = t0 / t0_true - 1, rinf / r_true - 1
                bare = bare_one_way_us(plat, Path(d))
                rows.append(f"| {rate}, {lat} | {t0:.3f} | {t0_true:.4f} | {e0 * 100:+.2f} % | "
                            f"{(t0 / t0_links - 1) * 100:+.2f} % | {bare:.4f} | "
                            f"{(t0 / bare - 1) * 100:+.2f} % | {rinf:,.0f} | {r_true:,.0f} | {er * 100:+.2f} % "
                            f"| {took:.0f} |")  # fmt: skip
                data.append({"rate": rate, "latency": lat, "t0_us": t0, "t0_truth_us": t0_true, "rinf_MBps": rinf,
                             "rinf_truth_MBps": r_true, "bare_one_way_us": bare, "seconds": took})  # fmt: skip
    rows += ["", "Goals: t0 within 5 % of its truth, r_inf within 2 %."]
    write("sim_links", "Links recovered on a simulated platform (SimGrid SMPI, exact factors)", rows, {"cases": data})


if __name__ == "__main__":
    main()
