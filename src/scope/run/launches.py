"""What each replicate launch of a run is asked (analysis/replicates.py combines what they
measure): its share of the point's settings, and, from the second launch on, what the earlier
launches of each point measured (docs/method.md, "Launches as replicates")."""

from __future__ import annotations

import math

# fewest samples one launch of several takes: its median's interval still comes from its own
# order statistics (5 samples bound the median at 94 %)
MIN_LAUNCH_COUNT = 5


def launch_share(parsed: dict, launches: int) -> dict[str, object]:
    """The point stored is the combination of the launches, so the run's settings are for it:
    each launch does its share.  L launches each within precision x sqrt(L) reach the
    precision asked together (the error of a mean of L independent estimates); the minimum
    count and minimum time are split L ways, so the stored point holds at least what was asked,
    taken at L separate times (which samples a machine's slow drifts better than one stretch);
    and so is the budget, so a point costs what --budget says however many launches it takes.
    `parsed` is the run's options as the engine's plan parsed them; the result, the values each
    launch is given instead."""
    return {
        "precision": min(1.0, parsed["precision"] * math.sqrt(launches)),
        "min-count": max(min(MIN_LAUNCH_COUNT, int(parsed["min-count"])), math.ceil(parsed["min-count"] / launches)),
        "min-time": parsed["min-time"] / launches,
        "budget": parsed["budget"] / launches,
    }


# One argument stays well below Linux's 128 KiB a string, all of them below what launchers pass on.
EARLIER_ITEM_BYTES = 100_000
EARLIER_TOTAL_BYTES = 400_000


def earlier_launches(earlier: dict[int, list[tuple[float, float]]]) -> list[str]:
    """The engine's --earlier-launches arguments: each point's launch medians and CIs so far, so
    that a point whose launches already differ is measured in the next one only as far as that
    spread makes worth it (engine/core/rep.h, rep_target).  A run too large to say it all on a
    command line says none of it: its launches are then measured as with --fixed-launches."""
    entries = [f"{i}=" + ":".join(f"{m:.6g}/{c:.4g}" for m, c in ms) for i, ms in sorted(earlier.items()) if ms]
    if sum(len(e) + 1 for e in entries) > EARLIER_TOTAL_BYTES:
        return []
    items: list[str] = []
    for e in entries:
        if items and len(items[-1]) + 1 + len(e) <= EARLIER_ITEM_BYTES:
            items[-1] += "," + e
        else:
            items.append(e)
    return [x for item in items for x in ("--earlier-launches", item)]
