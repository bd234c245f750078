"""What this process runs on, defined once for every layer that asks: the cores it may use (its
affinity, where the system says: oversubscription in run/launcher.py, make's -j in
run/toolchain.py, a report's drawing workers in views/drawing.py) and the host's name (a run's
row in the store, the engine's watchdog)."""

import os


def usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # no affinity on this system: every core it has
        return os.cpu_count() or 1


def host_name() -> str:
    """The host's name as socket.gethostname() gives it (glibc's gethostname reads uname's
    nodename), without loading the socket module: every launch paid that import (issue 52)."""
    return os.uname().nodename
