"""Whether a run can support a screen's flags (issue 69): a flag is a claim, and on a machine
with more ranks than cores, or with pairs timed too few round trips, it is weak evidence, said
beside it (analysis/screen.py marks each screen with the reason)."""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from scope.model import PairStep, Run

MIN_ROUND_TRIPS = 8  # a pair's 95 % interval of its median needs 6 at least (order statistics); 8 to spare


def weak_reason(run: Run, steps: list[PairStep]) -> str | None:
    """Why this run's pairs cannot support a flag, or None: more ranks on a machine than it has
    cores (a testbed's hosts share one: a pair's time then holds another rank's turn on a core,
    and an equal-links testbed flagged a host in 1 of 2 runs at 4 ranks on 2 cores), or pairs
    timed too few round trips for an interval of their own."""
    ctx = run.context
    if ctx is not None and not getattr(ctx, "sim", None):  # a simulated rank has a core (run/sim.py)
        cores = {n.get("host"): n.get("cores") for n in getattr(ctx, "nodes", ()) if isinstance(n, dict)}
        ranks: dict[str, int] = defaultdict(int)
        for p in getattr(ctx, "placement", ()):
            ranks[p.host] += 1
        for host, n in ranks.items():
            c = cores.get(host)
            if isinstance(c, int) and 0 < c < n:
                return f"{n} ranks on {host}'s {c} cores: a pair's time holds other ranks' turns on a core"
        if getattr(ctx, "oversubscribed", False):
            return "the run was oversubscribed: a pair's time holds other ranks' turns on a core"
    trips = np.concatenate([np.frombuffer(s.n, dtype=np.int64) for s in steps]) if steps else np.array([])
    if trips.size and float(np.median(trips)) < MIN_ROUND_TRIPS:
        return (
            f"its pairs timed a median of {float(np.median(trips)):g} round trips (fewer than {MIN_ROUND_TRIPS}): "
            "too few for a pair's own interval; raise --budget"
        )
    return None
