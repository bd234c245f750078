"""The test suite beside a load that keeps every core busy (issue 26): a shared CI machine.
Runs a tier of the suite N times while `--load` processes spin at normal priority (each a
`yes > /dev/null`), and lists every test that failed even once, with the wall time of each run.

    .venv/bin/python bench/under_load.py                    # the mpi tier, 3 runs, 2 spinners
    .venv/bin/python bench/under_load.py --tier "unit or mpi or system" --runs 3
    .venv/bin/python bench/under_load.py --load 0           # the same, on a quiet machine
    .venv/bin/python bench/under_load.py --make test --load 0   # `make test` itself, quiet
    .venv/bin/python bench/under_load.py --make test            # `make test` beside 2 spinners

Writes bench/results/under_load.md (.json) for the mpi tier, under_load_<tiers>.md for others,
under_load_make_<target>[_quiet].md for --make."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from collections import Counter

from common import ROOT, write


def spinners(n: int) -> list[subprocess.Popen]:
    return [subprocess.Popen(["yes"], stdout=subprocess.DEVNULL) for _ in range(n)]


def one_run(tier: str, target: str | None) -> tuple[float, int, list[str]]:
    """Wall seconds, tests run, and the node ids that failed or errored: of `pytest -m tier`,
    or of `make target` as a developer runs it (its pytest told where to write its results)."""
    with tempfile.TemporaryDirectory() as tmp:
        xml = os.path.join(tmp, "junit.xml")
        t0 = time.monotonic()
        if target:
            env = dict(os.environ, PYTEST_ADDOPTS=f"-p no:cacheprovider --junitxml={xml}")
            argv = ["make", "-s", target]
        else:
            env = None
            argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", tier, f"--junitxml={xml}"]
        subprocess.run(argv, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tier", default="mpi", help="a pytest -m expression (default: mpi)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--make", metavar="TARGET", help="time `make TARGET` (e.g. test) instead of a pytest tier")
    ap.add_argument("--load", type=int, default=os.cpu_count() or 2, help="busy processes beside it (default: cores)")
    a = ap.parse_args()
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
    what = f"`make {a.make}`" if a.make else f"pytest -m '{a.tier}'"
    lines = [
        f"{what}, {a.runs} runs in a row, beside {a.load} busy process(es) (`yes`, normal priority) "
        f"on {os.cpu_count()} cores.",
        "",
        "Command: `.venv/bin/python bench/under_load.py " + " ".join(sys.argv[1:]) + "`",
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
