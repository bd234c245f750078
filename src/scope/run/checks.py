"""What `scope run` refuses before launching that only this machine knows: ranks far beyond its
cores, a problem larger than its memory, a file to write that cannot be written.  Everything
about the run's arguments (tests, parameters, sizes, process counts, the --pattern file, option
ranges) is the engine's to check: see plan.py."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from scope.cores import usable_cores
from scope.errors import ENVIRONMENT, USAGE, ScopeError

# More ranks per usable core than this is a mistake, not a measurement: refused without --force.
OVERSUBSCRIBE_MAX = 64


def check_cores(ranks: int, elsewhere: bool, force: bool) -> None:
    """A sane number of ranks per core when the run is on this machine."""
    if not elsewhere and not force and ranks > OVERSUBSCRIBE_MAX * usable_cores():
        raise ScopeError(
            f"{ranks} ranks on {usable_cores()} usable cores is more than {OVERSUBSCRIBE_MAX} per core",
            "use fewer ranks, --hosts for other machines, or --force",
            USAGE,
        )


def available_memory() -> int | None:
    """MemAvailable from /proc/meminfo, bytes; None where there is none."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def writable_output(path: str, flag: str = "-o", reads: tuple = ()) -> Path:
    """A file a command will write, checked before anything is measured or read: its folder
    exists and can be written, it is no directory, no FIFO or socket (opening one to write
    waits for a reader: issue 44, `export -o FIFO` hung), and none of the files the command
    reads (`reads`: the results database above all; `export 1 -o results.db`, or a report
    through a link to it, overwrote the store).  (What fails only when written, a full disk or
    /dev/full, is exit 3 where it is written.)"""
    out = Path(path)
    folder = out.parent
    if not folder.is_dir():
        raise ScopeError(f"cannot write {out}: folder {folder} does not exist", f"create it or choose another {flag}")
    if out.is_dir():
        raise ScopeError(f"cannot write {out}: it is a directory", f"name a file with {flag}")
    try:
        mode = out.stat().st_mode
    except OSError:
        mode = 0
    if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode):
        raise ScopeError(
            f"cannot write {out}: it is a {'FIFO' if stat.S_ISFIFO(mode) else 'socket'}", f"name a file with {flag}"
        )
    for r in reads:
        if r is not None and _same(out, Path(r)):
            raise ScopeError(f"cannot write {out}: it is {r}, which this command reads", f"choose another {flag}")
    if not os.access(folder, os.W_OK) and not (out.exists() and os.access(out, os.W_OK)):
        raise ScopeError(
            f"cannot write {out}: folder {folder} is not writable", f"choose a writable {flag}", ENVIRONMENT
        )
    return out


def _same(a: Path, b: Path) -> bool:
    """Whether two paths name one file (through links too), or would once `a` is written."""
    try:
        return a.exists() and b.exists() and os.path.samefile(a, b) or a.resolve() == b.resolve()
    except OSError:
        return False
