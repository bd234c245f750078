"""What the MPI chose, as text: the transport it loaded, its selections and thresholds, the
performance variables that moved, and the thresholds inside a curve's protocol switches
(analysis/transport.py computes them; this only renders)."""

from __future__ import annotations

from scope.analysis.breakpoints import Piecewise
from scope.analysis.transport import SwitchNote, TransportFacts
from scope.views.fmt import safe, size


def transport_lines(t: TransportFacts | None) -> list[str]:
    if t is None:
        return []
    parts = []
    if t.device:
        parts.append(f"device {safe(t.device)}")
    if t.layers:
        parts.append("loaded " + "; ".join(t.layers))
    chosen = [f"{k}={safe(v) or '(default)'}" for k, v in t.selected.items()]
    out = ["  what the MPI chose: " + (", ".join(parts) or "no transport library loaded (shared memory only)")]
    if chosen:
        out.append("    selections (MPI_T): " + ", ".join(chosen))
    if t.thresholds:
        out.append("    thresholds (MPI_T): " + ", ".join(f"{th.name} = {size(th.bytes)}" for th in t.thresholds))
    moved = {(m.name, m.klass) for m in t.moves}
    pv = f"{t.pvars} performance variables sampled around each point" if t.pvars else "no performance variables"
    out.append(f"    {pv}" + (f"; moved: {', '.join(sorted(n for n, _ in moved))}" if moved else
                                 ("; none moved" if t.pvars else " (this MPI offers none through MPI_T)")))  # fmt: skip
    return out


def switch_note_lines(notes: list[SwitchNote]) -> list[str]:
    out = []
    for n in notes:
        a, b = n.switch
        if n.thresholds:
            why = "; ".join(f"{t.name} = {size(t.bytes)} ({t.meaning})" for t in n.thresholds)
            out.append(f"{size(a)} -> {size(b)}: {why}")
        else:
            out.append(f"{size(a)} -> {size(b)}: no recorded MPI threshold inside it")
    return out


def series_notes(t: TransportFacts | None, pw: Piecewise | None) -> list[str]:
    """The MPI's thresholds beside each protocol switch of a series' piecewise fit, if any."""
    if t is None or pw is None or len(pw.segments) < 2:
        return []
    return switch_note_lines(t.notes(pw))


def moves_lines(t: TransportFacts | None, test: str, params: dict) -> list[str]:
    """The variables that moved at the points of one series (its parameters, any size)."""
    if t is None:
        return []
    rows = [m for m in t.moves if m.test == test and m.params == params]
    return [f"  MPI_T {m.name} ({m.klass}) {m.before:,.0f} -> {m.after:,.0f}, size {size(m.size or 0)}"
            for m in rows[:20]]  # fmt: skip
