"""`scope sim check`: a measured run beside its simulation (analysis/simcheck.py), as a table
and as JSON; the figures are computed there, rendered here."""

from __future__ import annotations

from dataclasses import asdict

from scope.analysis.simcheck import REASONS, SimCheck
from scope.views.fmt import num, size, table


def check_text(c: SimCheck, calibration: str) -> str:
    rows = [
        [
            r.test,
            size(r.size),
            str(r.procs),
            num(r.measured_us),
            f"{num(r.ci_lo_us)}-{num(r.ci_hi_us)}",
            num(r.model_us),
            num(r.simulated_us),
            f"{r.error * 100:+.1f}",
            "yes" if r.in_interval else "no",
            "" if r.within else "outside",
        ]
        for r in c.rows
    ]
    head = [
        "test",
        "size",
        "ranks",
        "measured us",
        "95% CI us",
        "calibration us",
        "simulated us",
        "error %",
        "in CI",
        "",
    ]
    out = [
        f"run {c.measured_run} (measured) against run {c.simulated_run} (simulated on {calibration})",
        table(head, rows, "llrrrrrrrl"),
        c.headline() + (f"; {c.unmatched} measured points not simulated" if c.unmatched else ""),
        "  (calibration us: the calibrated formula at the size, the figure the simulation should give back)",
    ]
    whys: dict[str, list[str]] = {}
    for r in c.rows:
        if r.why:
            note = f" ({r.residual * 100:+.1f} %)" if r.why == "off-line" and r.residual is not None else ""
            whys.setdefault(r.why, []).append(f"{r.test} {size(r.size)}{note}")
    for why, where in whys.items():
        shown = ", ".join(where[:8]) + (f" and {len(where) - 8} more" if len(where) > 8 else "")
        out.append(f"  outside at {shown}: {REASONS[why]}")
    return "\n".join(out)


def check_doc(c: SimCheck, calibration: dict | None) -> dict:
    return {
        "measured_run": c.measured_run,
        "simulated_run": c.simulated_run,
        "tolerance": c.tolerance,
        "within": c.within,
        "points": len(c.rows),
        "unmatched": c.unmatched,
        "headline": c.headline(),
        "calibration": calibration,
        "reasons": {k: v for k, v in REASONS.items() if any(r.why == k for r in c.rows)},
        "rows": [asdict(r) for r in c.rows],
    }
