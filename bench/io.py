"""SCOPE's io.write and io.read against IOR on the same MPI, file size and block size (issue 15),
and dd with O_DIRECT as the floor:

- IOR (github.com/hpc/ior, built with this venv's mpicc) from $IOR, the path of its `ior`
  binary; its rows are skipped with a message when $IOR is not set.  Same API (MPIIO), same
  shared file, same bytes per rank (IOR's -b) and per call (IOR's -t, SCOPE's block size),
  fsync before the write clock stops (-e).  Each round takes the median of 5 IOR passes, as
  SCOPE's figure is the median of its passes: 5 write iterations of one IOR run (each to a new
  file, as SCOPE truncates its file before each pass), and 5 single-pass read runs, each after the file's pages are
  dropped from the page cache, as SCOPE's cache=evict does before each read pass.
- 2 ranks, 512 MiB in all, blocks of 64 KiB, 1 MiB and 4 MiB; SCOPE and IOR alternate, 3
  rounds; the ratio SCOPE / IOR of the bandwidths is taken per round and its median quoted
  (target: within 10 %).  IOR counts its open and close in the time (a few hundred us of a pass
  of ~0.2 s); SCOPE times the pass only.
- dd (one process, oflag=direct / iflag=direct, the same block size) as the device's floor.

  IOR=bench/work/ior/src/ior .venv/bin/python bench/io.py
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

from common import WORK, median, scope_cli, toolchain, write

from scope.store import Store

RANKS, TOTAL, ROUNDS, PASSES = 2, 512 << 20, 3, 5
BLOCKS = (64 << 10, 1 << 20, 4 << 20)
MiB = 1 << 20


def evict(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def ior(tc, exe: str, op: str, block: int, where: Path, passes: int = 1, keep: bool = True) -> list[float]:
    """IOR at 2 ranks, `passes` iterations of one op; each pass's bandwidth, MB/s (IOR prints
    MiB/s).  Without `keep`, IOR removes the file after each pass, so each write is to a new file."""
    flags = (["-w", "-e"] if op == "write" else ["-r"]) + (["-k"] if keep else [])
    argv = [str(tc.mpiexec), "-n", str(RANKS), exe, "-a", "MPIIO", *flags, "-i", str(passes),
            "-b", str(TOTAL // RANKS), "-t", str(block), "-o", str(where / "ior.dat")]  # fmt: skip
    text = subprocess.run(argv, check=True, capture_output=True, text=True, timeout=900).stdout
    rows = [ln.split() for ln in text.splitlines() if ln.startswith(f"{op} ") and ln.split()[-1].isdigit()]
    return [float(r[1]) * MiB / 1e6 for r in rows]


def ior_median(tc, exe: str, block: int, where: Path) -> dict[str, float]:
    """The median of PASSES write passes (one IOR run, each pass to a new file, as SCOPE's pass
    writes a truncated one), and of PASSES read passes, each its own IOR run after the pages
    are dropped (IOR cannot drop them between its iterations on one node)."""
    out = {"write": median(ior(tc, exe, "write", block, where, PASSES, keep=False))}
    ior(tc, exe, "write", block, where)  # the file the reads read
    reads = []
    for _ in range(PASSES):
        evict(where / "ior.dat")
        reads += ior(tc, exe, "read", block, where)
    (where / "ior.dat").unlink()
    out["read"] = median(reads)
    return out


def scope_rates(db: Path, block: int, where: Path) -> dict[str, float]:
    """One launch of io.write and io.read; their median bandwidths, MB/s."""
    scope_cli(db, "run", "-n", RANKS, "io.write", "io.read", "--sizes", block, "-p", f"total={TOTAL}",
              "--io-dir", where, "--budget", "4", "--quiet")  # fmt: skip
    store = Store(db)
    run = store.load_run(store.resolve_run("last"), samples=False)
    return {p.test.split(".")[1]: p.bw_median for p in run.points}


def dd_rates(block: int, where: Path) -> dict[str, float]:
    f = where / "dd.dat"
    out = {}
    for op, args in (
        ("write", [f"of={f}", "if=/dev/zero", "oflag=direct"]),
        ("read", [f"if={f}", "of=/dev/null", "iflag=direct"]),
    ):
        p = subprocess.run(["dd", f"bs={block}", f"count={TOTAL // block}", *args], capture_output=True, text=True)
        secs = float(re.search(r"copied, ([0-9.e+-]+) s", p.stderr).group(1))
        out[op] = TOTAL / secs / 1e6
    f.unlink()
    return out


def main() -> int:
    tc, _ = toolchain()
    where = WORK / "io"
    where.mkdir(parents=True, exist_ok=True)
    db = WORK / "io.db"
    db.unlink(missing_ok=True)
    exe = os.environ.get("IOR")
    have_ior = bool(exe) and Path(exe).is_file()
    data: dict = {}
    lines = [
        f"{RANKS} ranks, one shared file of {TOTAL // MiB} MiB, MPICH's MPI-IO (ROMIO) on {where};",
        f"{ROUNDS} rounds, SCOPE and IOR alternating; MB/s = 10^6 bytes/s; ratio = SCOPE / IOR per round, median.",
        "",
        "| op | block | SCOPE MB/s | IOR MB/s | SCOPE / IOR | dd O_DIRECT MB/s (floor) |",
        "|---|---|---|---|---|---|",
    ]
    for block in BLOCKS:
        got: dict[str, dict[str, list[float]]] = {op: {"scope": [], "ior": [], "ratio": []} for op in ("write", "read")}
        for _ in range(ROUNDS):
            s = scope_rates(db, block, where)
            i = ior_median(tc, exe, block, where) if have_ior else {}
            for op in got:
                got[op]["scope"].append(s[op])
                if op in i:
                    got[op]["ior"].append(i[op])
                    got[op]["ratio"].append(s[op] / i[op])
        floor = dd_rates(block, where)
        for op, g in got.items():
            ior_txt = f"{median(g['ior']):,.0f}" if g["ior"] else "skipped ($IOR not set)"
            ratio = f"{median(g['ratio']):.3f} ({min(g['ratio']):.3f}-{max(g['ratio']):.3f})" if g["ratio"] else "-"
            lines.append(f"| {op} | {block // 1024} KiB | {median(g['scope']):,.0f} | {ior_txt} | {ratio} | "
                         f"{floor[op]:,.0f} |")  # fmt: skip
            data[f"{op} {block}"] = dict(g, dd=floor[op])
    if not have_ior:
        lines += ["", "IOR: skipped. Build it (see docs/io.md) and set IOR to its `ior` binary."]
    lines += ["", "Reproduce: IOR=bench/work/ior/src/ior .venv/bin/python bench/io.py"]
    write("io", "Parallel I/O against IOR (MPI-IO)", lines, data)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
