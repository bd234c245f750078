"""SCOPE at scale on a simulated cluster (issue 55): SimGrid's SMPI runs the engine with
thousands of ranks on this 2-core machine, each simulated host with a clock of its own (drawn
from a seed: offsets to 1 ms, drift to 20 ppm), so the global clock's true error is known at
every rank.  Through `scope run --sim`, as a user runs it, so the front end stores, shows and
reports what the runs produce.

- clock: `coll.allreduce` 8 B (one window-timed point) at R ranks on H hosts (16 a host): the
  wall the simulation took, the synchronisation's simulated seconds against the clock-scale
  model's (bench/results/clock_scale.md: ceil(log2 H) rounds of the 50 ms span, plus the domain
  check, 3.967 ms a rank a host), and how many ranks' true errors lie within their predicted
  bounds, at every synchronisation and at the end;
- screen: `p2p.allpairs` 1 MiB on H hosts (one rank each), one host's link planted at a quarter
  of the others' rate (`scope sim platform --slow`): what is flagged; H:K samples K of the
  sweep's steps (-p steps=K), and two samples of one H give the whole sweep's cost a step;
- the front end: `scope show` and `scope report` of each stored run, wall and peak memory.

    .venv/bin/python bench/sim_scale.py [--clock 1024/64,4096/256] [--screen 256,1024:4,1024:12] [--timeout 1800]
        [--cfg smpi/coll-selector:default] [--name sim_scale_default]

--cfg adds a SimGrid setting to every run: at 1,024 ranks the mpich selector's SMP-aware
collectives cost the host ~16 s at each full-size communicator's first collective, SMPI's
default selector 0.1 s (a toy program, phase by phase; its naive algorithms cost elsewhere).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import ROOT, write

MODEL_SPAN_S, MODEL_CHECK_S = 0.05, 0.003967  # bench/results/clock_scale.md's model terms


def scope(db: Path, *args, timeout: float = 3600) -> tuple[float, subprocess.CompletedProcess]:
    """A scope command as a user runs it: wall seconds, and what it did."""
    argv = [sys.executable, "-m", "scope", "--db", str(db), *map(str, args)]
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    t0 = time.monotonic()
    try:
        p = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        p = subprocess.CompletedProcess(argv, 124, "", f"timed out after {e.timeout:.0f} s")
    return time.monotonic() - t0, p


CFG: list[str] = []  # --cfg: SimGrid settings added to every simulated run


def simulated(db: Path, argv: list, timeout: float, row: dict) -> bool:
    """`scope run ARGV --launches 1 --quiet` within `timeout`: its wall and exit status into
    `row` (and the error where it failed); whether it ran."""
    cfg = [x for c in CFG for x in ("--sim-cfg", c)]
    wall, p = scope(
        db, "run", *argv, *cfg, "--launches", "1", "--quiet", "--timeout", int(timeout), timeout=timeout + 60
    )
    row.update(wall_s=wall, rc=p.returncode)
    if p.returncode != 0:
        row["error"] = p.stderr.strip()[-300:]
    return p.returncode == 0


def views(db: Path, tmp: Path) -> dict:
    """show and report of the last run: wall s and peak MB each (a child's own peak, from
    /usr/bin/time where there is one)."""
    out = {}
    for name, args in (("show", ["show", "last"]), ("report", ["report", "last", "-o", tmp / "r.html"])):
        timed = ["/usr/bin/time", "-f", "%M"] if Path("/usr/bin/time").exists() else []
        argv = [*timed, sys.executable, "-m", "scope", "--db", str(db), *map(str, args)]
        t0 = time.monotonic()
        p = subprocess.run(argv, env=dict(os.environ, PYTHONPATH=str(ROOT / "src")), capture_output=True, text=True)
        wall = time.monotonic() - t0
        peak = float(p.stderr.strip().splitlines()[-1]) / 1024 if timed and p.returncode == 0 else float("nan")
        out[name] = {"wall_s": wall, "peak_mb": peak, "rc": p.returncode}
    return out


def clock_case(tmp: Path, ranks: int, hosts: int, timeout: float) -> dict:
    plat, db = tmp / f"c{hosts}.xml", tmp / f"c{ranks}.db"
    per = ranks // hosts
    _, made = scope(tmp / "none.db", "sim", "platform", "--hosts", hosts, "--cores", per, "--rate", "100Gbps",
                    "--latency", "1us", "-o", plat)  # fmt: skip
    assert made.returncode == 0, made.stderr
    row = {"ranks": ranks, "hosts": hosts}
    ran = simulated(db, ["coll.allreduce", "--sim", plat, "-n", ranks, "--sim-ppn", per, "--sizes", "8", "--budget",
                         "0.01"], timeout, row)  # fmt: skip
    # a run stopped at its timeout is stored incomplete with what it recorded: the clock's
    # synchronisation comes first, so its figures are read even where the point did not end
    exported = scope(db, "export", "last", "--format", "json")[1] if db.exists() else None
    doc = json.loads(exported.stdout) if exported is not None and exported.returncode == 0 else {"events": []}
    clocks = [e for e in doc["events"] if e.get("type") == "clock"]
    readings = [r for c in clocks for r in c.get("ranks", [])]
    if not readings:
        return row
    within = sum(r["error_ns"] <= r["predicted_error_ns"] for r in readings if r.get("error_ns") is not None)
    sync = next((c.get("sync_s") for c in clocks if c.get("at") == "sync"), None)
    model = math.ceil(math.log2(hosts)) * MODEL_SPAN_S + MODEL_CHECK_S * per
    row.update(sync_s=sync, model_s=model, readings=len(readings), within=within,
               max_error_ns=max((r.get("error_ns") or 0) for r in readings),
               max_bound_ns=max(r["predicted_error_ns"] for r in readings))  # fmt: skip
    if ran:
        row.update(median_us=doc["points"][0]["stats"]["median"], views=views(db, tmp))
    return row


SLICE_S = 0.0125  # a sampled sweep's budget a step, so samples of K steps cost alike a step


def screen_case(tmp: Path, hosts: int, slow: int | None, timeout: float, steps: int | None = None) -> dict:
    """p2p.allpairs 1 MiB on `hosts` simulated hosts, `slow` planted at a quarter of the rate;
    `steps` K: a sampled sweep (-p steps=K, each step pairing every host), SLICE_S a step."""
    plat, db = tmp / f"s{hosts}-{slow}.xml", tmp / f"s{hosts}-{slow}-{steps}.db"
    extra = ["--slow", f"{slow}:0.25"] if slow is not None else []
    _, made = scope(tmp / "none.db", "sim", "platform", "--hosts", hosts, "--rate", "10Gbps", "--latency", "1us",
                    *extra, "-o", plat)  # fmt: skip
    assert made.returncode == 0, made.stderr
    row = {"hosts": hosts, "planted": slow, "sample": steps}
    sample = ["-p", f"steps={steps}", "--budget", str(SLICE_S * steps)] if steps else ["--budget", "0.05"]
    if not simulated(db, ["p2p.allpairs", "--sim", plat, "-n", hosts, "--sizes", "1M", *sample,
                          "--sim-clocks", "none"], timeout, row):  # fmt: skip
        return row
    _, shown = scope(db, "show", "last", "--json")
    doc = json.loads(shown.stdout)
    flagged = sorted(f"{f['kind']} {' - '.join(f['where'])}" for f in doc.get("flagged", []))
    sc = doc["screens"][0]
    row.update(flagged=flagged, steps=sc["steps"], steps_measured=sc["steps_measured"], sim_s=sc["seconds"],
               pairs=sc["pairs_measured"], views=views(db, tmp))  # fmt: skip
    return row


def sweep_cost(rows: list[dict]) -> list[str]:
    """The whole sweep's cost where one host count was sampled at two step counts (planted runs):
    the host's seconds a step from the difference of the walls, the simulated seconds a step
    from the sweeps' own (the slowest pair of a step sets its time)."""
    out = []
    by: dict[int, list[dict]] = {}
    for r in rows:
        if r.get("rc") == 0 and r.get("sample") and r["planted"] is not None:
            by.setdefault(r["hosts"], []).append(r)
    for hosts, rs in sorted(by.items()):
        rs = sorted(rs, key=lambda r: r["steps_measured"])
        if len(rs) < 2 or rs[-1]["steps_measured"] == rs[0]["steps_measured"]:
            continue
        a, b = rs[0], rs[-1]
        dk = b["steps_measured"] - a["steps_measured"]
        host_step = (b["wall_s"] - a["wall_s"]) / dk
        fixed = a["wall_s"] - host_step * a["steps_measured"]
        sim_step = (b["sim_s"] - a["sim_s"]) / dk
        steps = b["steps"]
        out.append(
            f"At {hosts:,} hosts: {host_step:.2f} s of this machine's time a step ({a['steps_measured']} and "
            f"{b['steps_measured']} steps measured: {a['wall_s']:.0f} and {b['wall_s']:.0f} s), "
            f"{sim_step * 1e3:.1f} ms simulated a step ({SLICE_S * 1e3:g} ms of round trips a pair, the slowest "
            f"pair's count setting the step); the whole sweep of {steps:,} steps: "
            f"{(fixed + host_step * steps) / 60:.0f} min here, {sim_step * steps:.0f} s on the simulated cluster."
        )
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--clock", default="1024/64,4096/256", help="RANKS/HOSTS,... (16 ranks a host)")
    ap.add_argument(
        "--screen",
        default="256",
        help="allpairs screens, comma-separated: HOSTS for the whole sweep, HOSTS:K for K of its steps ('' for none)",
    )
    ap.add_argument("--timeout", type=float, default=1800, help="seconds a simulated run may take")
    ap.add_argument("--cfg", action="append", default=[], help="a SimGrid setting for every run (--sim-cfg)")
    ap.add_argument("--name", default="sim_scale", help="the results file's name (bench/results/NAME.md)")
    a = ap.parse_args()
    CFG.extend(a.cfg)
    if not (shutil.which("smpicc") and shutil.which("smpirun")):
        print("bench/sim_scale.py: skipped: SimGrid (libsimgrid-dev) is not installed")
        return 0
    rows: dict[str, list] = {"clock": [], "screen": []}
    with tempfile.TemporaryDirectory() as t:
        tmp = Path(t)
        for case in filter(None, a.clock.split(",")):
            ranks, hosts = map(int, case.split("/"))
            print(f"clock: {ranks} ranks on {hosts} hosts", file=sys.stderr)
            rows["clock"].append(clock_case(tmp, ranks, hosts, a.timeout))
        for case in filter(None, a.screen.split(",")):
            h, _, k = case.partition(":")
            for slow in (int(h) * 3 // 10, None):
                print(f"screen: {h} hosts, planted {slow}, steps {k or 'all'}", file=sys.stderr)
                rows["screen"].append(screen_case(tmp, int(h), slow, a.timeout, int(k) if k else None))
    lines = [
        "SimGrid 3.32 (Debian) SMPI, `scope run --sim` on platforms from `scope sim platform`; this 2-core VM.",
        "",
        "| ranks | hosts | simulation wall s | sync simulated s | model s | ratio | readings within bound | worst "
        "true error ns | worst bound ns | allreduce 8 B us | show s / MB | report s / MB |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows["clock"]:
        if "sync_s" not in r:
            lines.append(f"| {r['ranks']:,} | {r['hosts']} | {r['wall_s']:.0f} | failed: {r.get('error', '')[:80]} "
                         "| | | | | | | | |")  # fmt: skip
            continue
        v = r.get("views")
        tail = (
            f"{r['median_us']:.2f} | {v['show']['wall_s']:.1f} / {v['show']['peak_mb']:.0f} | "
            f"{v['report']['wall_s']:.1f} / {v['report']['peak_mb']:.0f} |"
            if v
            else f"the point not ended: {r.get('error', '')[:60]} | | |"
        )
        lines.append(
            f"| {r['ranks']:,} | {r['hosts']} | {r['wall_s']:.0f} | {r['sync_s']:.3f} | {r['model_s']:.3f} | "
            f"{r['sync_s'] / r['model_s']:.2f} | {r['within']} of {r['readings']} | {r['max_error_ns']:.1f} | "
            f"{r['max_bound_ns']:.0f} | {tail}"
        )
    lines += ["", "| hosts | planted slow link | steps measured | rank pairs | simulation wall s | sweep simulated s "
              "| flagged | show s / MB | report s / MB |",
              "|---|---|---|---|---|---|---|---|---|"]  # fmt: skip
    for r in rows["screen"]:
        planted = "none" if r["planted"] is None else f"node-{r['planted']}"
        if r["rc"] != 0:
            lines.append(
                f"| {r['hosts']} | {planted} | {r['sample'] or 'all'} | | {r['wall_s']:.0f} | | "
                f"failed: {r.get('error', '')[:80]} | | |"
            )
            continue
        v = r["views"]
        lines.append(f"| {r['hosts']} | {planted} | {r['steps_measured']:,} of {r['steps']:,} | {r['pairs']:,} | "
                     f"{r['wall_s']:.0f} | {r['sim_s']:.3f} | {', '.join(r['flagged']) or 'nothing'} | "
                     f"{v['show']['wall_s']:.1f} / {v['show']['peak_mb']:.0f} | "
                     f"{v['report']['wall_s']:.1f} / {v['report']['peak_mb']:.0f} |")  # fmt: skip
    cost = sweep_cost(rows["screen"])
    if cost:
        lines += ["", *cost]
    lines += ["", "Reproduce: .venv/bin/python bench/sim_scale.py " + " ".join(map(shlex.quote, sys.argv[1:]))]
    if a.cfg:
        lines.append(f"SimGrid settings added to every run: {', '.join(a.cfg)}.")
    write(a.name, "SCOPE at scale on a simulated cluster (issue 55)", lines, rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
