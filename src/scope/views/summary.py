"""What `scope run` prints when its run is stored: the run's header, its warnings and one line a
series. Kept apart from views/terminal.py's `show`, so a run loads the formatting it prints and
not every view's (issue 52: a launch pays for the imports it uses)."""

from __future__ import annotations

import math

from scope.analysis.facts import RunFacts
from scope.catalog.modules import module_text
from scope.model import Run
from scope.views.fmt import (
    hosts_text,
    launches_text,
    names_among,
    nhalf,
    nodes_text,
    num,
    peak_text,
    rinf_text,
    safe,
    simulated_text,
    size,
    table,
)


def run_header(run: Run) -> list[str]:
    ctx = run.context
    lib = (ctx.mpi_library.splitlines() or ["unknown MPI"])[0] if ctx else "unknown MPI"
    timer = ctx.timer if ctx else None
    lines = [
        f"run {run.id}  {run.started_utc}  {run.status}"
        + (f" ({safe(run.reason)})" if run.reason else "")
        + (f"  label: {safe(run.label)}" if run.label else ""),
        f"  {lib}; {run.ranks} ranks on {hosts_text(ctx.hosts) if ctx else '?'}; "
        f"timer {timer.selected if timer else '?'} ({num(timer.overhead_ns if timer else None)} ns per read)",
    ]
    if ctx and ctx.sim:
        lines.append(f"  SIMULATED: {simulated_text(ctx.sim)}")
    elif ctx and ctx.mpicc:
        lines.append(
            f"  mpicc {safe(ctx.mpicc)}"
            + (f", chosen as {safe(ctx.mpi_chosen)}" if ctx.mpi_chosen else "")
            + (f"; engine source {safe(ctx.engine_source)}" if ctx.engine_source else "")
        )
    if run.origin == "events":
        where = f"{safe(run.source)}.RANK.jsonl"
        lines[1] = f"  a program's events stamped with SCOPE's clock library, imported from {where}"
    elif run.imported:
        lines[1] = f"  imported from {run.origin.upper()}: {safe(run.source)}; one average per size, no distribution"
    nodes = nodes_text(ctx) if ctx else None
    if nodes:
        lines.append(f"  nodes: {nodes}")
    if ctx and ctx.module:
        lines.append(f"  module: {module_text(ctx.module)}")
    if ctx and ctx.oversubscribed:
        lines.append("  OVERSUBSCRIBED: more ranks than cores, timings do not represent the hardware")
    lines.append(f"  {launches_text(run)}")
    return lines


def pm(rel: float | None) -> str:
    """A relative half-width, or that there is none (too few samples for an interval)."""
    return f"+/-{rel * 100:.1f}%" if rel is not None and math.isfinite(rel) and rel >= 0 else "no interval"


def summary(facts: RunFacts) -> str:
    """The few numbers a person wants after a run, one line per test series: a series named
    by what differs from its test's other series (no column when nothing does), each test's
    shared setting said once below."""
    rows = []
    names, shared = series_names(facts)
    named = any(names)
    for f, name in zip(facts.series, names):
        lat = f.smallest
        fit = f.hockney
        rows.append(
            [
                f.series.test,
                *([name or "-"] if named else []),
                f"{num(lat.median)} us @ {size(lat.size)} ({pm(lat.ci_rel)})",
                peak_text(f),
                f"{num(fit.t0_us)} / {rinf_text(f)} / {nhalf(fit.nhalf_bytes)}" if fit else "-",
            ]
        )
    head = [
        "test",
        *(["series"] if named else []),
        "time at smallest size",
        "peak rate",
        "Hockney t0 us / r_inf MB/s / n_half",
    ]
    body = table(head, rows, ("ll" if named else "l") + "rrr") if rows else "(no points measured)"
    return "\n".join(
        [*run_header(facts.run), *("  " + w.line() for w in facts.warnings), "", body, *setting_lines(shared)]
    )


def series_names(facts: RunFacts) -> tuple[list[str], list[str]]:
    """Each series' name among its test's series, and per test what they share (fmt.names_among)."""
    return names_among([(f.series.test, f.series.params) for f in facts.series])


def setting_lines(shared: list[str]) -> list[str]:
    """The parameters no series name says (one value across a test's series), once a test."""
    return ["  settings:", *(f"    {x}" for x in shared)] if shared else []
