"""Terminal views of runs: the post-run summary, `scope show`, the run list, the layer table
and the table of window- or barrier-timed (collective) points.  They render RunFacts
(scope.analysis.facts)."""

from __future__ import annotations

import fnmatch

from scope.analysis.breakpoints import Piecewise
from scope.analysis.cluster import pair_kinds
from scope.analysis.facts import RunFacts, SeriesFacts
from scope.analysis.layers import Layer
from scope.analysis.loggp import LogGP
from scope.model import Point
from scope.views.collectives import collective_table
from scope.views.fmt import (
    clock_text,
    collective_model_lines,
    nhalf,
    num,
    params_label,
    pct,
    rinf_text,
    safe,
    size,
    spread,
    t0_text,
    table,
)
from scope.views.kernels import kernel_block
from scope.views.mpichoice import moves_lines, series_notes, transport_lines
from scope.views.rma import rma_block
from scope.views.screening import screen_lines
from scope.views.summary import run_header, series_names, setting_lines
from scope.views.timeline import timeline_lines


def fit_line(f: SeriesFacts) -> str:
    fit = f.hockney
    if fit is None:
        return "Hockney fit: not enough sizes with a time that grows with size"
    return (
        f"Hockney fit t = t0 + n/r_inf: t0 = {t0_text(fit.t0_us, fit.rinf_MBps)} us, "
        f"r_inf = {rinf_text(f)} MB/s, "
        f"n_half = {nhalf(fit.nhalf_bytes)}; max |residual| {fit.max_abs_residual * 100:.0f} % "
        f"over {fit.points} sizes"
    )


def piecewise_lines(pw: Piecewise | None) -> list[str]:
    if pw is None or len(pw.segments) < 2:
        return []
    where = ", ".join(f"{size(a)} -> {size(b)}" for a, b in pw.switches)
    lines = [f"Protocol switches (piecewise Hockney fit): {where}"]
    for sg in pw.segments:
        lines.append(
            f"  {size(sg.first_size)} .. {size(sg.last_size)}: t0 = {t0_text(sg.t0_us, sg.rinf_MBps)} us, "
            f"r_inf = {num(sg.rinf_MBps)} MB/s, max |residual| {sg.max_abs_residual * 100:.0f} %"
        )
    return lines


def loggp_line(f: LogGP) -> str:
    return (
        f"LogGP (PRTT method, n = {f.n}): L = {num(f.L_us)} us, o = {num(f.o_us)} us, g = {num(f.g_us)} us, "
        f"G = {num(f.G_us_per_byte * 1000)} ns/byte (1/G = {num(f.bandwidth_MBps)} MB/s); "
        f"max |residual| of g + (s-1)G {f.gap_residual_max * 100:.0f} %"
    )


def models_block(facts: RunFacts) -> list[str]:
    """Hockney (from the Hockney test) beside LogGP and the collective models, when the run has
    more than the per-test fits already show."""
    out = []
    for f in facts.hockney_models:
        out.append(
            f"Hockney ({f.series.test} {params_label(f.series.params)}): t0 = {num(f.hockney.t0_us)} us, "
            f"r_inf = {num(f.hockney.rinf_MBps)} MB/s, n_half = {nhalf(f.hockney.nhalf_bytes)}"
        )
    extra = [loggp_line(f) for f in facts.loggp] + collective_model_lines(facts)
    return ["", "Models", *("  " + x for x in out + extra)] if extra else []


def next_launch(f: SeriesFacts, p: Point) -> str:
    nxt = f.next_launch.get(id(p))
    return f"{num(nxt[0])}-{num(nxt[1])}" if nxt else "-"


def machine_lines(facts: RunFacts) -> list[str]:
    """The canaries' reading of the machine, and the drift between runs the intervals took in."""
    out = []
    if facts.canary:
        parts = [f"{c.probe} {num(c.median_us)} us (spread {c.spread_rel * 100:.1f} %)" for c in facts.canary]
        if facts.steal_pct is not None:
            parts.append(f"hypervisor steal at most {facts.steal_pct:.1f} %")
        out.append(f"  machine (canary, start and end of each launch): {'; '.join(parts)}")
    if facts.drift:
        out.append(f"  {facts.drift.text()}")
    return out


def series_table(f: SeriesFacts, most: int = 0) -> list[str]:
    resid = f.residuals
    rows = []
    points = f.series.points
    shown = [points[i] for i in spread(len(points), most)]
    launches = any(p.launches >= 2 for p in shown)
    for p in shown:
        r = resid.get(p.size)
        rows.append(
            [
                size(p.size),
                num(p.median),
                f"{num(p.ci_lo)}-{num(p.ci_hi)}",
                pct(p.ci_rel),
                *([next_launch(f, p)] if launches else []),
                f"{num(p.p5)}-{num(p.p95)}",
                num(p.bw_median) if p.size else "-",
                f"{r * 100:+.0f}" if r is not None else "-",
                "-" if p.count is None else str(p.count),
                (p.stop or "-") + (" (cold)" if p.warmup_converged is False else ""),
            ]
        )
    head = ["size", "median us", "95% CI us", "+/-%", *(["next launch us"] if launches else [])]
    head += ["p5-p95 us", "MB/s", "fit resid %", "n", "stop"]
    out = [table(head, rows)]
    if len(shown) < len(points):
        out.append(f"  ({len(shown)} of {len(points):,} points shown, evenly spread over the sizes; --rows 0 for all)")
    return [*out, fit_line(f), *piecewise_lines(f.piecewise)]


def show_run(facts: RunFacts, test_filter: str | None = None, ranks: list[int] | None = None, rows: int = 0) -> str:
    """rows: at most this many rows per series table (0: all)."""
    run = facts.run
    out = run_header(run)
    clock = clock_text(facts.clock)
    if clock:
        out.append(f"  global clock: {clock}")
    out += machine_lines(facts)
    out += transport_lines(facts.transport)
    out += ["  " + w.line() for w in facts.warnings]
    named, shared = series_names(facts)
    out += setting_lines(shared)
    names = dict(zip(map(id, facts.series), named))
    # a series is window-timed or not as its first point is (as below): asked per series, not per point
    windowed = any(f.series.points and f.series.points[0].window is not None for f in facts.series)
    windows = {id(w.point): w for w in facts.windows(ranks)} if windowed else {}
    for f in facts.series:
        s = f.series
        if test_filter and not fnmatch.fnmatchcase(s.test, test_filter):
            continue
        out += ["", "  ".join(x for x in (s.test, names[id(f)], f"[{s.points[0].measures}]") if x)]
        if s.points[0].window is not None:
            out += collective_table([windows[id(p)] for p in s.points if id(p) in windows], ranks)
        else:
            out += series_table(f, rows)
            out += ["  " + x for x in series_notes(facts.transport, f.piecewise)]
        out += [f"  {size(p.size) if p.size is not None else 'note'}: {safe(p.note)}" for p in s.points if p.note]
        out += moves_lines(facts.transport, s.test, s.params)
        for p in s.points if facts.per_kind else ():
            out += [f"  per kind of node, {p.params.get('procs')} procs: {k.per_node:,.1f} {k.unit} a node "
                    f"({k.nodes} x {k.kind})" for k in facts.per_kind.get(id(p), [])]  # fmt: skip
    picked = [sc for sc in facts.screens if not test_filter or fnmatch.fnmatchcase(sc.test, test_filter)]
    nodes = [n for n in facts.node_screens if not test_filter or fnmatch.fnmatchcase(n.test, test_filter)]
    out += screen_lines(picked, nodes, facts.flagged if not test_filter else [])
    out += models_block(facts)
    if len(facts.layers) >= 2:
        out += ["", "Layers (what each adds over the layer it is built on)", layers_table(facts.layers)]
        pair = pair_kinds(run.context)
        if pair:
            out.append(f"  measured between ranks 0 and 1, on nodes of kind: {pair}")
    out += rma_block(facts)
    out += kernel_block(facts)
    out += timeline_lines(facts.timeline)
    bad = [e for e in run.events if e.type in ("error", "skip")]
    if bad:
        out.append("")
        for e in bad:
            what = f"{e.test} {params_label(e.params)}" if e.params else (e.test or "")
            out.append(f"{e.type}: {what}: {safe(e.message)}")
    return "\n".join(out)


def runs_table(rows) -> str:
    """The run list, from Store.runs() rows."""
    out = []
    for r in rows:
        lib = (r["mpi_library"] or "").strip().splitlines()[0] if r["mpi_library"] else "-"
        if str(r.get("kind", "")).startswith("simulated"):  # never read as a machine's figures
            lib = "[simulated] " + lib
        out.append(
            [
                str(r["id"]),
                r["started_utc"],
                r["status"],
                str(r["ranks"] or "-"),
                str(r["npoints"]),
                (r["tests"] or "-")[:40],
                lib[:30],
                r["label"] or "",
            ]
        )
    if not out:
        return "no runs yet: start one with 'scope run'"
    return table(["run", "started (UTC)", "status", "ranks", "points", "tests", "MPI", "label"], out, "rllrrlll")


def layers_table(layers: list[Layer]) -> str:
    rows = []
    for ly in layers:
        d = ly.adds_us
        adds = "-" if d is None else f"{'+' if d >= 0 else ''}{num(d)} us over {ly.over}"
        bw_vs = f"{ly.rinf_vs_below:.2f}x" if ly.rinf_vs_below else "-"
        rows.append(
            [
                ly.stack or "-",
                ly.name,
                f"{num(ly.latency_us)} @ {size(ly.latency_size)}",
                num(ly.min_us),
                num(ly.rinf_MBps) if ly.rinf_MBps else "-",
                nhalf(ly.nhalf_bytes),
                adds,
                bw_vs,
                f"run {ly.run}: {ly.source}",
            ]
        )
    head = [
        "stack",
        "layer",
        "median us",
        "min us (SCOPE latency)",
        "r_inf MB/s",
        "n_half",
        "min adds over the layer it is built on",
        "r_inf vs that layer",
        "from",
    ]
    return table(head, rows, "llrrrrrrl")
