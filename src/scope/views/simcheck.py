"""`scope sim check`: a measured run beside its simulation (analysis/simcheck.py), as a table
and as JSON; the figures are computed there, rendered here."""

from __future__ import annotations

from dataclasses import asdict

from markupsafe import Markup

from scope.analysis.simcheck import REASONS, SimCheck
from scope.version import __version__
from scope.views.fmt import num, size, table
from scope.views.svg import errors
from scope.views.templating import environment


def check_text(c: SimCheck, calibration: str) -> str:
    chosen = any(r.algorithm for r in c.rows)  # a column where collectives ran a set algorithm
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
        + ([r.algorithm or "SMPI's"] if chosen else [])
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
    ] + (["algorithm"] if chosen else [])
    each = "each a group of sizes or a test at its own pace, " if len(c.simulated_runs) > 1 else ""
    out = [
        f"run {c.measured_run} (measured) against {_runs(c)} ({each}simulated on {calibration})",
        table(head, rows, "llrrrrrrrl" + ("l" if chosen else "")),
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
        "format": "scope-sim-check",
        "version": 1,
        "measured_run": c.measured_run,
        "simulated_run": c.simulated_run,
        "simulated_runs": c.simulated_runs,
        "tolerance": c.tolerance,
        "within": c.within,
        "points": len(c.rows),
        "unmatched": c.unmatched,
        "headline": c.headline(),
        "calibration": calibration,
        "reasons": {k: v for k, v in REASONS.items() if any(r.why == k for r in c.rows)},
        "rows": [asdict(r) for r in c.rows],
    }


def _runs(c: SimCheck) -> str:
    """'run N', or 'runs N, M, ...' where the check made one simulation a group of sizes (or a
    test at its own pace)."""
    runs = c.simulated_runs
    return f"run {runs[0]}" if len(runs) == 1 else f"runs {', '.join(map(str, runs))}"


def _simulations(c: SimCheck) -> str:
    if len(c.simulated_runs) == 1:
        return f"{_runs(c)} is"
    return (
        f"{_runs(c)} are, each a group of sizes whose collectives MPICH ran with one algorithm or a test at its "
        "own pace (its link's),"
    )


def _edge(v: float | None, median: float) -> float | None:
    return (v / median - 1) * 100 if v is not None and median else None


def check_page(c: SimCheck, calibration: str, made: str) -> str:
    """The comparison as a page: per test the simulation's error by size against the measured
    interval and the tolerance (the curves themselves lie on each other at any readable scale),
    then every point."""
    charts = []
    for test in dict.fromkeys(r.test for r in c.rows):
        rows = [r for r in c.rows if r.test == test and r.size is not None]
        pts = [
            (r.size, r.error * 100, _edge(r.ci_lo_us, r.measured_us), _edge(r.ci_hi_us, r.measured_us)) for r in rows
        ]
        drawn = errors(pts, c.tolerance * 100, f"{test}: the simulation's error by size")
        if drawn:
            charts.append({"svg": Markup(drawn), "title": f"{test} ({rows[0].procs} ranks)"})
    rows = [
        {
            "test": r.test,
            "size": size(r.size),
            "ranks": r.procs,
            "measured": num(r.measured_us),
            "ci": f"{num(r.ci_lo_us)}-{num(r.ci_hi_us)}",
            "model": num(r.model_us),
            "simulated": num(r.simulated_us),
            "error": f"{r.error * 100:+.1f}",
            "algorithm": r.algorithm or "SMPI's",
            "why": REASONS[r.why] if r.why else "",
            "out": not r.within,
        }
        for r in c.rows
    ]
    return (
        environment("scope.views")
        .get_template("simcheck.html.j2")
        .render(
            title=f"Run {c.measured_run} against its simulation",
            headline=c.headline(),
            measured=c.measured_run,
            simulated=_simulations(c),
            chosen=any(r.algorithm for r in c.rows),
            calibration=calibration,
            tolerance=f"{c.tolerance * 100:g}",
            charts=charts,
            rows=rows,
            made=made,
            version=__version__,
        )
    )
