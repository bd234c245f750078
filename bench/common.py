"""Shared by the bench scripts: build the reference program, launch, write the table."""

from __future__ import annotations

import json
import os
import platform
import statistics
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from scope.run.toolchain import engine_path, find_toolchain  # noqa: E402
from scope.store import Store  # noqa: E402

# The benches' figures were each measured in one launch a run (scope run's default before it
# made 3): a bench that means launches as replicates says --launches itself.
os.environ.setdefault("SCOPE_LAUNCHES", "1")

# a machine lent for one call (bench/device16.sh) writes its tables where it sends files back
RESULTS = Path(os.environ.get("BENCH_RESULTS") or ROOT / "bench" / "results")
WORK = Path(os.environ.get("BENCH_WORK") or ROOT / "bench" / "work")


def toolchain():
    tc = find_toolchain()
    return tc, engine_path(tc)


def build_bare(tc) -> Path:
    WORK.mkdir(parents=True, exist_ok=True)
    exe = WORK / "bare_pingpong"
    src = [ROOT / "bench" / "bare_pingpong.c", ROOT / "engine" / "core" / "stats.c"]
    subprocess.run(
        [str(tc.mpicc), "-O2", "-std=c11", "-D_GNU_SOURCE", "-o", str(exe), *map(str, src), "-lm"], check=True
    )
    return exe


def mpirun(tc, ranks: int, argv: list) -> tuple[list[dict], float]:
    t0 = time.monotonic()
    p = subprocess.run(
        [str(tc.mpiexec), "-n", str(ranks), *map(str, argv)],
        capture_output=True,
        text=True,
        check=True,
        timeout=1800,
    )
    return [json.loads(x) for x in p.stdout.splitlines() if x.startswith("{")], time.monotonic() - t0


def scope_cli(db, *args, env: dict | None = None, check: bool = True) -> subprocess.CompletedProcess:
    """The CLI on the database `db`, as a user runs it (`env` added to this environment); a
    failure stops the bench unless check is False."""
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"), **(env or {}))
    argv = [sys.executable, "-m", "scope", "--db", str(db), *map(str, args)]
    return subprocess.run(argv, env=env, check=check, capture_output=True, text=True, timeout=3600)


def omb_table(tc, exe: Path, args: list[str], column: int = 1) -> dict[int, float]:
    """An OMB program's output on 2 ranks: {size: the value in `column`} of its data rows; a
    program without sizes (osu_barrier) as {0: its one figure}."""
    out = subprocess.run([str(tc.mpiexec), "-n", "2", str(exe), *args], capture_output=True, text=True, timeout=600,
                         check=True).stdout  # fmt: skip
    rows = [ln.split() for ln in out.splitlines() if ln.strip() and not ln.startswith("#")]
    sized = {int(r[0]): float(r[column]) for r in rows if r[0].isdigit() and len(r) > column}
    return sized or {0: float(rows[-1][-1])}


def scope_timed(db, args: list) -> tuple[float, list]:
    """`scope run ARGS --quiet --launches 1` on the database `db`, as a user runs it: its
    whole-process seconds and the run's points; a failure stops the bench with scope's own
    message."""
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    # bytecode cached as in any installed Python package (pip compiles it at install); this
    # machine's environment turns the cache off, which recompiles the front end at every start
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    argv = [sys.executable, "-m", "scope", "--db", str(db), "run", *map(str, args), "--quiet", "--launches", "1"]
    t0 = time.monotonic()
    p = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=900)
    wall = time.monotonic() - t0
    if p.returncode != 0:
        raise SystemExit(f"scope run {' '.join(map(str, args))} failed: {p.stderr[-1500:]}")
    from_store = Store(db, create=False)
    return wall, from_store.load_run(from_store.resolve_run("last"), samples=False).points


def last_run_events(db) -> list[dict]:
    """The records of the last stored run's events (clock, warnings, skips ...), as dicts."""
    st = Store(db, create=False)
    return [json.loads(e["record"]) for e in st.events(st.resolve_run("last"))]


def scope_points(db, args: list) -> list:
    """The points of `scope_timed`'s run."""
    return scope_timed(db, args)[1]


def median(xs):
    return statistics.median(xs)


def within(ratio: float, tolerance: float = 0.10) -> bool:
    """A figure held to OMB's (issue 31): within 10 % either way."""
    return 1 - tolerance <= ratio <= 1 + tolerance


def paired_ratio(base: list[float], other: list[float]) -> float:
    """The median over rounds of other / base, each round's two launches taken side by side.
    This VM switches speed mode minutes apart: within a round the drift cancels, while a ratio
    of the two medians can set one tool's fast rounds against the other's slow ones."""
    return statistics.median(b / a for a, b in zip(base, other, strict=True))


def write(name: str, title: str, lines: list[str], data: dict) -> None:
    RESULTS.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    head = [f"# {title}", "", f"{stamp}; {platform.node()}; {platform.processor() or platform.machine()}", ""]
    text = "\n".join(head + lines) + "\n"
    print(text)
    (RESULTS / f"{name}.md").write_text(text)
    (RESULTS / f"{name}.json").write_text(json.dumps(data, indent=1))
