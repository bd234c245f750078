"""What an MPI job leaves behind when it is killed, and its removal: by the launch that saw the
job die (what appeared since it started) and by the next open after a killed scope (any of this
user's, run/reaper.py); a file some live process uses always stays."""

from __future__ import annotations

import contextlib
import ctypes
import glob
import os
import signal
import sys

# What an MPI job that is killed leaves behind: MPICH's shared-memory segments, hydra's
# topology file, and the engine's own segments (engine/support.c, scope_shm_map: /scope.PID.N,
# unlinked once both ranks have mapped it; a job stopped in between left it: issue 44).  A
# normal exit removes them itself.  UCX's own segments too (MPICH's ch4:ucx device maps
# /dev/shm/ucx_shm_posix_* for its shared-memory transport): a suite run left two behind
# that no check looked for (issue 58).
LEFTOVERS = ("/dev/shm/mpich_shm_*", "/tmp/hydra_hwloc_xmlfile_*", "/dev/shm/scope.*", "/dev/shm/ucx_shm_posix_*")


def present() -> set[str]:
    """Every such file there is now (a launch's `before`)."""
    return {f for pattern in LEFTOVERS for f in glob.glob(pattern)}


def _owner(path: str) -> int | None:
    try:
        return os.stat(path).st_uid
    except OSError:
        return None


def _in_use() -> set[str]:
    """Files some live process has open or mapped (another job's segments stay)."""
    used: set[str] = set()
    for pid in filter(str.isdigit, os.listdir("/proc")):
        with contextlib.suppress(OSError):
            with open(f"/proc/{pid}/maps") as f:
                used.update(line.split(None, 5)[-1].strip() for line in f if "/" in line)
        with contextlib.suppress(OSError):
            for fd in os.listdir(f"/proc/{pid}/fd"):
                with contextlib.suppress(OSError):
                    used.add(os.readlink(f"/proc/{pid}/fd/{fd}"))
    return used


def clean_leftovers(before: set[str] | None) -> list[str]:
    """Remove what a job that died left: files that appeared since `before` (None: any of this
    user's, as after a scope that was killed) and that no live process uses."""
    if before is None:
        me = os.getuid()
        fresh = {f for f in present() if _owner(f) == me}
    else:
        fresh = present() - before
    if not fresh:
        return []
    gone = sorted(fresh - _in_use())
    for f in gone:
        with contextlib.suppress(OSError):
            os.unlink(f)
    return gone


_LIBC = ctypes.CDLL(None, use_errno=True) if sys.platform.startswith("linux") else None
_PR_SET_PDEATHSIG = 1


def die_with(parent: int, sig: int = signal.SIGKILL):
    """preexec_fn for a child of scope, between fork and exec: the kernel sends it `sig` when
    scope dies, however it dies (SIGKILL included).  The launcher takes SIGKILL, so no launcher
    outlives scope; make takes SIGTERM, on which it stops the compilers it started (issue 58:
    after a SIGKILL of scope mid-build, make's cc went on for ~8 s)."""

    def arm() -> None:
        if _LIBC is not None:
            _LIBC.prctl(_PR_SET_PDEATHSIG, int(sig), 0, 0, 0)
        if os.getppid() != parent:  # scope died before the line above: die now
            os._exit(128 + int(sig))

    return arm
