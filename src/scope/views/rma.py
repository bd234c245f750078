"""The one-sided level's derived figures as text (analysis/rma.py): library overhead and the
busy/idle progress table, for `show`; the report names settings the same way."""

from __future__ import annotations

from scope.analysis.facts import RunFacts
from scope.catalog.names import RMA_GET
from scope.views.fmt import num, params_label, size, table


def rma_block(facts: RunFacts) -> list[str]:
    """The one-sided level's derived figures (analysis/rma.py)."""
    out = []
    if facts.overhead:
        rows = [[size(o.size), num(o.get_us), num(o.rtt_us), f"{o.overhead_us:+.3g}"] for o in facts.overhead]
        out += [
            "",
            "One-sided library overhead: rma.get latency - MPI ping-pong round trip "
            f"(default settings; ping-pong of run {facts.overhead[0].pingpong_run})",
            table(["size", "get us", "MPI round trip us", "overhead us"], rows),
        ]
    if facts.progress:
        rows = [
            [
                setting_label(facts, g.setting),
                size(g.size),
                num(g.idle_us),
                num(g.busy_us),
                f"{g.ratio:.2f}x",
                g.verdict,
            ]
            for g in facts.progress
        ]
        slices = sorted({g.slice_us for g in facts.progress if g.slice_us})
        out += [
            "",
            "Asynchronous progress: rma.get while the target computes "
            f"({', '.join(num(x) for x in slices)} us slices, no MPI call) against a target waiting in MPI",
            table(["setting", "size", "idle us", "busy us", "busy/idle", "reading"], rows, "lrrrrl"),
        ]
    return out


def setting_label(facts: RunFacts, setting: dict) -> str:
    """A one-sided get's setting by what differs from the defaults."""
    return params_label(facts.run.info(RMA_GET).changed(setting)) or "defaults"
