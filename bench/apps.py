"""NAS EP and FT in SCOPE against NPB's own code on this machine (issue 13), side by side:

- NPB's serial C codes (NPB3.0-omp-C, the Omni project's C translation of NPB 3.0, built
  here without OpenMP) from the tree in $NPB_C, classes S and W; skipped with a message when
  $NPB_C is not set or holds no NPB.  Its time covers the same work as SCOPE's T (initial
  field, forward FFT and every iteration; for EP every batch and the sums).
- SCOPE's app.ep and app.ft on one process, alternating with NPB's runs, 3 rounds; the ratio
  SCOPE / NPB is taken per round and its median quoted (target: EP within 1.2x, FT within
  1.5x per iteration at class W).
- every verification at 1, 2 and 4 processes (4 oversubscribes this 2-core machine).

  NPB_C=bench/work/npb .venv/bin/python bench/apps.py
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

from common import WORK, median, scope_cli, write

from scope.store import Store

CLASSES = ("S", "W")
ROUNDS = 3
MAKE_DEF = "CC = cc\nCLINK = cc\nC_LIB = -lm\nC_INC = -I../common\nCFLAGS = -O3\nCLINKFLAGS = -O3\n"
MAKE_DEF += "UCC = cc -O\nBINDIR = ../bin\nRAND = randdp\nWTIME = wtime.c\nF77 = false\nFLINK = false\n"


def build_npb(tree: Path) -> dict[tuple[str, str], Path]:
    (tree / "config" / "make.def").write_text(MAKE_DEF)
    (tree / "bin").mkdir(exist_ok=True)
    out = {}
    for code in ("ep", "ft"):
        for cls in CLASSES:
            exe = tree / "bin" / f"{code}.{cls}"
            if not exe.exists():
                subprocess.run(["make", code, f"CLASS={cls}"], cwd=tree, check=True, capture_output=True)
            out[(code, cls)] = exe
    return out


def npb_time(exe: Path) -> tuple[float, bool]:
    text = subprocess.run([str(exe)], check=True, capture_output=True, text=True, timeout=600).stdout
    t = float(re.search(r"Time in seconds\s*=\s*([0-9.]+)", text).group(1))
    return t, "SUCCESSFUL" in text


def scope_time(db: Path, test: str, cls: str) -> float:
    """One launch at one process: the median time of one execution, seconds."""
    scope_cli(db, "run", "-n", "1", test, "-p", f"class={cls}", "--budget", "2", "--quiet")
    store = Store(db)
    run = store.load_run(store.resolve_run("last"), samples=False)
    (p,) = run.points
    return p.median * 1e-6


def main() -> int:
    tree = Path(os.environ.get("NPB_C", "")).resolve() if os.environ.get("NPB_C") else None
    WORK.mkdir(parents=True, exist_ok=True)
    db = WORK / "apps.db"
    db.unlink(missing_ok=True)
    lines = []
    data: dict = {"rounds": ROUNDS}
    if not tree or not (tree / "FT" / "ft.c").exists():
        print("NPB_C is not set to an NPB C tree (e.g. NPB3.0-omp-C): skipping the comparison with NPB's own codes")
        lines += ["NPB's own codes: skipped (set NPB_C to an NPB C tree, e.g. NPB3.0-omp-C).", ""]
    else:
        exes = build_npb(tree)
        rows = []
        for code, test in (("ep", "app.ep"), ("ft", "app.ft")):
            for cls in CLASSES:
                ratios, npb, mine, ok = [], [], [], True
                for _ in range(ROUNDS):  # alternate: NPB, SCOPE, NPB, SCOPE, ...
                    t, verified = npb_time(exes[(code, cls)])
                    ok = ok and verified
                    s = scope_time(db, test, cls)
                    npb.append(t)
                    mine.append(s)
                    ratios.append(s / t)
                per = " per iteration" if code == "ft" else ""
                div = 6 if code == "ft" else 1  # FT classes S and W: 6 iterations
                times = f"{median(npb) / div * 1e3:,.2f} ms{per} | {median(mine) / div * 1e3:,.2f} ms{per}"
                rows.append(f"| {test} | {cls} | {times} | {median(ratios):.2f} | {'yes' if ok else 'NO'} |")
                data[f"{test}.{cls}"] = {"npb_s": npb, "scope_s": mine, "ratio_median": median(ratios)}
        lines += [
            f"One process, {ROUNDS} rounds alternating NPB's serial C code (NPB3.0-omp-C, gcc -O3, no OpenMP) and",
            "SCOPE's (its median execution of a 2 s budget); ratio = SCOPE / NPB, the median of the rounds'.",
            "Target: EP within 1.2x, FT within 1.5x at class W. NPB prints its time to 0.01 s (6 iterations of",
            "class S take 0.04 s): the FT ratios carry that rounding. SCOPE's EP computes NPB's generator in",
            "128-bit integers where NPB splits doubles into 23-bit halves; the sums and counts are the same.",
            "",
            "| test | class | NPB | SCOPE | SCOPE / NPB | NPB verified |",
            "|---|---|---|---|---|---|",
            *rows,
            "",
        ]
    transposes = "transpose=alltoall,pairwise,nonblocking"
    scope_cli(db, "run", "-n", "4", "app.ep", "app.ft", "-p", "class=S,W", "-p", transposes,
              "--procs", "1,2,4", "--budget", "1", "--quiet")  # fmt: skip
    store = Store(db)
    run = store.load_run(store.resolve_run("last"), samples=False)
    checked = sorted({(p.test, p.params["class"], p.procs) for p in run.points if p.record.get("validated") == 2})
    errors = [e for e in run.events if e.type == "error"]
    lines += [
        "Verification at 1, 2 and 4 processes (every transpose for FT; 4 oversubscribes the 2 cores):",
        "",
        *(f"- {t} class {c} at {n}: verified" for t, c, n in dict.fromkeys(checked)),
        f"- errors (failed verifications): {len(errors)}",
        "",
        "Reproduce: NPB_C=bench/work/npb .venv/bin/python bench/apps.py "
        "(the tree: fetch benchmark-subsetting/NPB3.0-omp-C into bench/work/npb)",
    ]
    data["verified"] = [list(x) for x in checked]
    data["errors"] = len(errors)
    write("apps", "NAS EP and FT against NPB's own code", lines, data)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
