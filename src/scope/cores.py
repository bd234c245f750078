"""The cores this process may run on (its affinity, where the system says), defined once for
every layer that asks: oversubscription (run/launcher.py), make's -j (run/toolchain.py), a
report's drawing workers (views/drawing.py)."""

import os


def usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # no affinity on this system: every core it has
        return os.cpu_count() or 1
