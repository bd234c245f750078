"""Typed warnings with a hint, gathered from a run's records: what a reader must know before
trusting the numbers, and what to do about it."""

from __future__ import annotations

from dataclasses import dataclass

from scope.model import Run


@dataclass(frozen=True)
class ScopeWarning:
    kind: str
    message: str
    hint: str

    def line(self) -> str:
        return f"warning [{self.kind}]: {self.message} (hint: {self.hint})"


def run_warnings(run: Run) -> list[ScopeWarning]:
    out: list[ScopeWarning] = []
    seen = set()
    for e in run.events:
        if e.type == "warning" and e.kind not in seen:
            seen.add(e.kind)
            out.append(ScopeWarning(e.kind or "", e.message or "", e.hint or ""))
    settings = run.context.settings if run.context else {}
    precision = settings.get("precision", 0.01)
    budget = settings.get("budget_s", 1.0)
    points = run.points
    imprecise = [
        p for p in points if p.stop in ("budget", "max_count") and not (p.ci_rel is not None and p.ci_rel <= precision)
    ]
    if imprecise:
        worst = max((p.ci_rel if p.ci_rel is not None else float("inf")) for p in imprecise)
        out.append(
            ScopeWarning(
                "imprecise",
                f"{len(imprecise)} of {len(points)} points stopped before their median's 95 % CI reached "
                f"±{precision * 100:g} % (worst ±{worst * 100:.1f} %)",
                f"consider --budget {max(2 * budget, budget + 1):g} or a quieter machine",
            )
        )
    cold = [p for p in points if p.warmup_converged is False]
    if cold:
        out.append(
            ScopeWarning(
                "warmup",
                f"{len(cold)} points ended warm-up at its cap without a stable time",
                "consider --warmup-max with a larger count, or look for a drifting system",
            )
        )
    late = [p for p in points if p.window and p.window.repetitions and p.window.invalid > 0.2 * p.window.repetitions]
    if late:
        worst = max(p.window.invalid / p.window.repetitions for p in late)
        out.append(
            ScopeWarning(
                "invalid",
                f"{len(late)} window-timed points had more than 20 % of their repetitions start late "
                f"(worst {worst * 100:.0f} %): their samples are the repetitions that kept the schedule",
                "a busy or oversubscribed node, or a clock error beyond --sync-bound; run on idle cores",
            )
        )
    batched = [p for p in points if (p.batch or 1) > 1]
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
