"""The table of window- and barrier-timed points (collectives) in `scope show`: validity, skews,
MPIBench's shares above n x the minimum, outliers, a nonblocking point's overlap, all as
analysis/collectives.py derives them."""

from __future__ import annotations

from scope.analysis.collectives import WindowFacts
from scope.views.fmt import num, pct, size, table


def collective_row(w: WindowFacts) -> list[str]:
    """Validity, skews, MPIBench's shares above n x minimum, outliers, overlap: as derived."""
    p, win = w.point, w.point.window
    # B_eff: the engine's bytes_per_op is the call's aggregated payload (SCOPE §6.5.4)
    beff = p.bandwidth_at(w.median_us)
    ov = w.overlap
    return [
        size(p.size),
        str(p.procs or "-"),
        num(w.median_us),
        num(beff) if beff else "-",
        pct(p.ci_rel) if not w.ranks else "-",
        f"{win.invalid}/{win.repetitions}",
        num(win.arrival_skew_us),
        num(win.exit_skew_us),
        f"{(w.above_2x_min or 0) * 100:.0f}/{(w.above_4x_min or 0) * 100:.0f}",
        str(w.outliers),
        f"{ov.value * 100:.0f} % ({ov.ci_lo * 100:.0f}..{ov.ci_hi * 100:.0f})" if ov is not None else "-",
        win.timing + (" (oversubscribed)" if win.reason and win.reason.startswith("oversubscribed") else ""),
    ]


def collective_table(windows: list[WindowFacts], ranks: list[int] | None) -> list[str]:
    rows = [collective_row(w) for w in windows]
    head = [
        "size",
        "procs",
        "median us" + (" (subset)" if ranks else ""),
        "B_eff MB/s",
        "+/-%",
        "invalid",
        "arrival skew us",
        "exit skew us",
        "% >2x/>4x min",
        "outliers",
        "overlap (95% CI)",
        "timing",
    ]
    lines = [table(head, rows)]
    if ranks:
        lines.append(f"ranks {','.join(map(str, ranks))} only: completion = their last exit - common start")
    return lines
