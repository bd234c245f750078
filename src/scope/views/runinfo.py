"""What the report says of each run as a whole: its data sheet (one figure per level) and its
provenance (MPI, engine, nodes, timer, clock, module, Slurm job, settings)."""

from __future__ import annotations

from scope.analysis.cluster import cluster_text
from scope.analysis.facts import RunFacts
from scope.catalog.modules import module_text
from scope.views.fmt import clock_text, launches_text, nodes_text, num, simulated_text
from scope.views.mpichoice import transport_lines


def provenance(fa: RunFacts) -> dict:
    r, ctx = fa.run, fa.run.context
    items = [
        *([("SIMULATED", simulated_text(ctx.sim))] if ctx and ctx.sim else []),
        ("status", r.status + (f" ({r.reason})" if r.reason else "")),
        ("started (UTC)", r.started_utc),
        ("origin", r.origin),
        ("intervals", launches_text(r)),
    ]
    if r.source:
        items.append(("imported from", r.source))
    if ctx:
        t = ctx.timer
        settings = ", ".join(f"{k}={v}" for k, v in ctx.settings.items() if k not in ("sizes", "tests"))
        items += [
            ("MPI library", (ctx.mpi_library.splitlines() or [""])[0]),
            ("engine", f"{ctx.engine_version} (source {ctx.engine_source or 'not recorded'}) built with {ctx.mpicc}"),
            ("BLAS (node.dgemm)", ctx.blas or "none: the engine was built without one"),
            ("ranks / hosts", f"{ctx.ranks} on {', '.join(ctx.hosts)}"),
            ("nodes", nodes_text(ctx) or "not described (an engine older than the node description)"),
            ("timer", f"{t.selected}: {num(t.overhead_ns)} ns per read, resolution {num(t.resolution_ns)} ns"),
            ("clock synchronisation", clock_text(fa.clock) or "not used by these tests (no global clock needed)"),
            ("oversubscribed", "yes" if ctx.oversubscribed else "no"),
            ("MPI thread level", ctx.thread_level or "not recorded (an older engine)"),
            *(
                [("what the MPI chose", " ".join(x.strip() for x in transport_lines(fa.transport)).split(": ", 1)[1])]
                if fa.transport
                else []
            ),
            *([("module", module_text(ctx.module))] if ctx.module else []),
            *([("Slurm job", f"{ctx.slurm['job_id']} on {', '.join(ctx.slurm['nodelist'])}")] if ctx.slurm else []),
            *(
                [("I/O directory", f"{ctx.io['dir']} ({ctx.io.get('fstype')} on {ctx.io.get('device')})")]
                if ctx.io
                else []
            ),
            ("settings", settings),
            ("command", " ".join(r.command)),
        ]
    return {"run": r.title(), "rows": items, "warnings": fa.warnings}


def datasheet_block(fa: RunFacts, levels: dict) -> dict | None:
    """The run's data sheet, when it measured at least three levels (a module, a broad run)."""
    run, rows = fa.run, fa.datasheet
    if len({f.level for f in rows}) < 3:
        return None
    ctx = run.context
    cluster = "; ".join(
        x for x in (
            cluster_text(ctx.nodes) if ctx else None,
            (ctx.mpi_library.splitlines() or [""])[0] if ctx else None,
            module_text(ctx.module) if ctx and ctx.module else None,
        ) if x
    )  # fmt: skip
    return {
        "run": run.id,
        "title": run.title(),
        "cluster": cluster,
        "rows": [
            {
                "level": levels.get(f.level, (f.level,))[0],
                "what": f.what,
                "value": num(f.value),
                "unit": f.unit,
                "source": f.source,
            }
            for f in rows
        ],  # fmt: skip
    }
