"""Where the io tests' files go.  `--io-dir` names a directory (default: the system's temporary
directory); each run makes a fresh one inside it, checked before launch (writable, room for the
largest file asked with a margin) and removed when the run ends, however it ends (the engine
deletes each point's file itself; a rank killed half-way leaves one, and this removes it)."""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from pathlib import Path

from scope.envvars import hook
from scope.errors import ENVIRONMENT, USAGE, ScopeError
from scope.run.plan import Plan

MARGIN = 1.1  # file system metadata and a little slack beyond the file's own bytes


def _mb(n: float) -> str:
    return f"{n / 1e6:,.0f} MB"


def largest_total(plan: Plan, io_tests: list[str]) -> int:
    """The largest `total` any io point will write (the values the engine's plan expanded)."""
    return max((int(v) for t in io_tests for v in plan.values(t, "total")), default=0)


def filesystem(path: Path) -> dict:
    """The file system a directory is on (/proc/mounts' longest matching mount point)."""
    best = ("", "", "")
    with contextlib.suppress(OSError):
        for ln in Path("/proc/mounts").read_text().splitlines():
            dev, mnt, fstype = (ln.split() + ["", "", ""])[:3]
            mnt = mnt.replace("\\040", " ")
            if (str(path) == mnt or str(path).startswith(mnt.rstrip("/") + "/")) and len(mnt) >= len(best[1]):
                best = (dev, mnt, fstype)
    return {"device": best[0], "mount": best[1], "fstype": best[2]}


@contextlib.contextmanager
def io_directory(plan: Plan, registry: list[dict]):
    """Yields (the engine's --io-dir for this run, what the context records of it), or None
    when the run has no io test."""
    level = {t["name"]: t["level"] for t in registry}
    io_tests = [t for t in plan.names if level.get(t) == "io"]
    if not io_tests:
        yield None
        return
    base = Path(str(plan.options.get("io-dir") or tempfile.gettempdir())).resolve()
    if not base.is_dir():
        raise ScopeError(f"--io-dir {base} is not a directory", "name an existing directory", USAGE)
    if not os.access(base, os.W_OK | os.X_OK):
        raise ScopeError(f"--io-dir {base} is not writable", "name a directory this user can write", ENVIRONMENT)
    need = largest_total(plan, io_tests) * MARGIN
    free = shutil.disk_usage(base).free
    # test hook: the room the check sees, as if another job filled the disk after it
    given = hook("SCOPE_TEST_FREE_BYTES")
    free = free if given is None else given
    if free < need:
        raise ScopeError(
            f"{', '.join(io_tests)} need{'s' if len(io_tests) == 1 else ''} {_mb(need)} in {base} "
            "(the largest -p total, with 10 % to spare); "
            f"it has {_mb(free)} free",
            "a smaller -p total, or another --io-dir",
            ENVIRONMENT,
        )
    run_dir = Path(tempfile.mkdtemp(prefix=RUN_DIR_PREFIX, dir=base))
    try:
        yield str(run_dir), {"dir": str(base), "run_dir": str(run_dir), "free_bytes": free, **filesystem(base)}
    finally:
        remove_run_dir(run_dir)


RUN_DIR_PREFIX = "scope-io-"


def remove_run_dir(path: str | Path) -> bool:
    """Removes a run's io directory, and only one SCOPE made (its prefix); whether it was there."""
    p = Path(path)
    if not p.name.startswith(RUN_DIR_PREFIX) or not p.is_dir():
        return False
    shutil.rmtree(p, ignore_errors=True)
    return True
