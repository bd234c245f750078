"""Typed warnings with a hint, gathered from a run's records: what a reader must know before
trusting the numbers, and what to do about it."""

from __future__ import annotations

import json
from dataclasses import dataclass


@dataclass(frozen=True)
class ScopeWarning:
    kind: str
    message: str
    hint: str

    def line(self) -> str:
        return f"warning [{self.kind}]: {self.message} (hint: {self.hint})"


def run_warnings(run, points, events) -> list[ScopeWarning]:
    out: list[ScopeWarning] = []
    seen = set()
    for e in events:
        if e["type"] == "warning" and e["kind"] not in seen:
            seen.add(e["kind"])
            out.append(ScopeWarning(e["kind"], e["message"], e["hint"] or ""))
    ctx = json.loads(run["context"]) if run["context"] else {}
    settings = ctx.get("settings", {})
    precision = settings.get("precision", 0.01)
    budget = settings.get("budget_s", 1.0)
    imprecise = [
        p
        for p in points
        if p["stop"] in ("budget", "max_count") and not (p["ci_rel"] is not None and p["ci_rel"] <= precision)
    ]
    if imprecise:
        worst = max((p["ci_rel"] or float("inf")) for p in imprecise)
        out.append(
            ScopeWarning(
                "imprecise",
                f"{len(imprecise)} of {len(points)} points stopped before their median's 95 % CI reached "
                f"±{precision * 100:g} % (worst ±{worst * 100:.1f} %)",
                f"consider --budget {max(2 * budget, budget + 1):g} or a quieter machine",
            )
        )
    cold = [p for p in points if p["warmup_converged"] == 0]
    if cold:
        out.append(
            ScopeWarning(
                "warmup",
                f"{len(cold)} points ended warm-up at its cap without a stable time",
                "consider --warmup-max with a larger count, or look for a drifting system",
            )
        )
    batched = [p for p in points if (p["batch"] or 1) > 1]
    if batched:
        out.append(
            ScopeWarning(
                "batched",
                f"{len(batched)} points were timed in batches (operation shorter than "
                "50 timer reads), so their samples are batch means",
                "their distribution is narrower than a single operation's",
            )
        )
    return out
