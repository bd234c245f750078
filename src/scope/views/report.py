"""scope report: one self-contained HTML file (plots inline as SVG data URIs, no network
needed), grouped by SCOPE level, several runs overlaid and labelled.  A jinja2 template with
autoescaping renders the facts of each run; every text that came from a run is escaped."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from markupsafe import Markup

from scope.analysis.facts import RunFacts, SeriesFacts
from scope.analysis.layers import Layer
from scope.analysis.node_screen import NodeScreen, Place
from scope.analysis.screen import Screen
from scope.model import Run
from scope.version import __version__
from scope.views import drawing, plots, screening
from scope.views.fmt import (
    collective_model_lines,
    differing,
    nhalf,
    num,
    params_label,
    peak_text,
    rinf_text,
    shared_label,
    simulated_text,
    size,
    t0_text,
)
from scope.views.kernels import get_rows, op_rows, overlap_rows, point_rows, step_rows, switch_rows, verification_rows
from scope.views.mpichoice import series_notes
from scope.views.page import CSS, LEVELS, SELF_CHECK, cited
from scope.views.rma import setting_label
from scope.views.runinfo import datasheet_block, provenance
from scope.views.templating import environment
from scope.views.timeline import report_blocks


@dataclass
class TestBlock:
    name: str
    measures: str
    groups: list[tuple[Run, SeriesFacts]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # the MPI thresholds inside the switches; what ran
    names: dict[int, str] = field(default_factory=dict)  # id(SeriesFacts) -> what differs from the others'
    screens: list[Screen] = field(default_factory=list)  # a pairs-timed test's matrices and flags
    nodes: list[NodeScreen] = field(default_factory=list)  # a node test's hosts judged
    places: list[Place] | None = None  # the run's flagged list, on the first block that screens

    def name_all(self) -> None:
        """Each series named by what differs between the block's series (fmt.differing)."""
        cut = differing([f.series.params for _, f in self.groups])
        self.names = {id(f): params_label(c, ", ") for (_, f), c in zip(self.groups, cut)}

    @property
    def setting(self) -> str:
        """What the block's series share, said once under its figure."""
        return shared_label([f.series.params for _, f in self.groups], ", ")

    def label(self, run: Run, f: SeriesFacts) -> str:
        name = self.names.get(id(f), "")
        return run.title() + (f": {name}" if name else "")


def _fit_row(label: str, t0, rinf, resid, sizes="", rinf_shown: str | None = None) -> dict:
    """rinf_shown: what stands for r_inf when it is no rate to show (fmt.rinf_text)."""
    return {
        "label": label,
        "t0": t0_text(t0, rinf),
        "rinf": rinf_shown or num(rinf),
        "nhalf": nhalf(t0 * rinf) if t0 is not None and rinf is not None else "-",
        "resid": f"{resid * 100:.0f} %",
        "sizes": sizes,
    }


def _test_section(t: TestBlock) -> dict:
    labelled = [(t.label(run, f), f) for run, f in t.groups]
    fits = [
        _fit_row(lab, f.hockney.t0_us, f.hockney.rinf_MBps, f.hockney.max_abs_residual, f.hockney.points, rinf_text(f))
        for lab, f in labelled
        if f.hockney
    ]
    for lab, f in labelled:
        if f.piecewise and len(f.piecewise.segments) > 1:
            fits += [
                _fit_row(
                    f"{lab}: segment {size(sg.first_size)} .. {size(sg.last_size)}",
                    sg.t0_us,
                    sg.rinf_MBps,
                    sg.max_abs_residual,
                )
                for sg in f.piecewise.segments
            ]
    sized = any(p.size is not None for _, f in labelled for p in f.series.points)
    extra = screening.report_parts(t.screens, t.name, t.nodes, t.places)  # the flagged list and the matrix first
    windowed = [f for _, f in labelled if f.series.info.timing != "loop"]  # no record decoded for the others
    if any(p.window is not None for f in windowed for p in f.series.points):
        fig = plots.collective_figure(t.name, labelled[0][0], [p for _, f in labelled for p in f.series.points])
        extra += [Markup(fig)] if fig else []
    # One distribution figure per run (its first series): enough to see the shape and the
    # outliers, and it keeps a large report quick to build.
    shown = set()
    for (run, f), (lab, _) in zip(t.groups, labelled):
        fig = None if run.id in shown else plots.distribution_figure(t.name, lab, f.series.points)
        if fig:
            shown.add(run.id)
            extra.append(Markup(fig))
    return {
        "name": t.name,
        "measures": t.measures,
        "timing": _timing_rows(labelled),
        "figure": Markup(plots.test_figure(t.name, labelled)) if sized else "",
        "fits": fits,
        "notes": t.notes,
        "extra_figures": extra,
        "setting": t.setting,
    }


def _timing_rows(labelled: list[tuple[str, SeriesFacts]]) -> list[dict]:
    """Window- and barrier-timed points: how many repetitions started late and were left out."""
    rows = []
    for lab, f in labelled:
        if f.series.info.timing == "loop":
            continue
        for p in f.series.points:
            w = p.window
            if w is None:
                continue
            share = f" ({w.invalid / w.repetitions * 100:.0f} %)" if w.repetitions else ""
            rows.append(
                {
                    "label": lab,
                    "size": size(p.size),
                    "procs": p.procs or "-",
                    "median": num(p.median),
                    "ci": f"{num(p.ci_lo)} – {num(p.ci_hi)}",
                    "invalid": f"{w.invalid} / {w.repetitions}{share}",
                    "timing": w.timing,
                    "sync": num(w.sync_error_ns) if w.timing == "window" else "-",
                }
            )
    return rows


def _summary_rows(blocks: list[TestBlock]) -> list[dict]:
    rows = []
    for t in blocks:
        for run, f in t.groups:
            lat = f.smallest
            h = f.hockney
            rows.append(
                {
                    "test": t.name,
                    "run": run.title(),
                    "params": t.names.get(id(f)) or "-",
                    "full": params_label(f.series.params, ", "),
                    "latency": f"{num(lat.median)} µs @ {size(lat.size)}",
                    "peak": peak_text(f),
                    "t0": num(h.t0_us) if h else "-",
                    "rinf": rinf_text(f),
                    "nhalf": nhalf(h.nhalf_bytes) if h else "-",
                }
            )
    return rows


def _model_rows(facts: list[RunFacts]) -> list[dict]:
    rows = []
    for fa in facts:
        who = fa.run.title()
        cut = differing([f.series.params for f in fa.hockney_models])
        for f, name in zip(fa.hockney_models, cut):
            h = f.hockney
            cells = [f"t0 = {num(h.t0_us)} µs", f"r∞ = {num(h.rinf_MBps)} MB/s", f"n½ = {nhalf(h.nhalf_bytes)}", ""]
            model = f"Hockney, {f.series.test}" + (f" ({params_label(name, ', ')})" if name else "")
            rows.append({"run": who, "model": model, "cells": cells})
        for g in fa.loggp:
            cells = [
                f"L = {num(g.L_us)} µs",
                f"o = {num(g.o_us)} µs",
                f"g = {num(g.g_us)} µs",
                f"G = {num(g.G_us_per_byte * 1000)} ns/B (1/G = {num(g.bandwidth_MBps)} MB/s)",
            ]
            rows.append({"run": who, "model": f"LogGP (PRTT, n={g.n})", "cells": cells})
        for line in collective_model_lines(fa):
            name, _, rest = line.partition(": ")
            rows.append({"run": who, "model": name, "cells": [rest], "wide": True})
    return rows


def _layer_rows(layers: list[Layer]) -> list[dict]:
    return [
        {
            "stack": ly.stack or "-",
            "name": ly.name,
            "latency": num(ly.latency_us),
            "min": num(ly.min_us),
            "rinf": num(ly.rinf_MBps),
            "nhalf": nhalf(ly.nhalf_bytes),
            "adds": "-" if ly.adds_us is None else f"{ly.adds_us:+.3g} µs" + (f" over {ly.over}" if ly.over else ""),
            "ratio": f"{ly.rinf_vs_below:.2f}×" if ly.rinf_vs_below else "-",
            "source": f"run {ly.run}: {ly.source}",
        }
        for ly in layers
    ]


def _overhead_rows(facts: list[RunFacts]) -> list[dict]:
    return [
        {
            "run": fa.run.id,
            "size": size(o.size),
            "get_us": num(o.get_us),
            "rtt": num(o.rtt_us),
            "over": f"{o.overhead_us:+.3g}",
            "pp": o.pingpong_run,
        }
        for fa in facts
        for o in fa.overhead
    ]


def _progress_rows(facts: list[RunFacts]) -> list[dict]:
    return [
        {
            "run": fa.run.id,
            "setting": setting_label(fa, g.setting),
            "size": size(g.size),
            "idle": num(g.idle_us),
            "busy": num(g.busy_us),
            "slice": num(g.slice_us) if g.slice_us else "-",
            "ratio": f"{g.ratio:.2f}×",
            "verdict": g.verdict,
        }
        for fa in facts
        for g in fa.progress
    ]


def _kernel_blocks(facts: list[RunFacts]) -> list[dict]:
    """Per run with kernel points: the point and operation tables and the scalability plots."""
    return [
        {
            "run": fa.run.id,
            "points": point_rows(fa),
            "ops": op_rows(fa),
            "figures": [Markup(f) for i in range(len(fa.scaling)) if (f := plots.scalability_figure(fa, i))],
            "steps": step_rows(fa),
            "overlaps": overlap_rows(fa),
            "gets": get_rows(fa),
            "switches": switch_rows(fa),
            "verified": verification_rows(fa),
            "phase_figures": [
                Markup(f)
                for sc in fa.scaling
                if fa.run.info(sc.test).level == "app" and (f := plots.phases_figure(fa, sc.test, sc.setting))
            ],
        }
        for fa in facts
        if fa.kernels
    ]


def render(facts: list[RunFacts], made: str, title: str | None = None, layers: list[Layer] | None = None) -> str:
    """`layers`: the layer table across the runs (analysis/layers.py; each run's own when None)."""
    blocks: dict[str, TestBlock] = {}
    for fa in facts:
        for f in fa.series:
            t = blocks.setdefault(f.series.test, TestBlock(f.series.test, f.series.points[0].measures))
            t.groups.append((fa.run, f))
    for t in blocks.values():
        t.name_all()
        for run, f in t.groups:
            fa = next(x for x in facts if x.run is run)
            t.notes += [f"{t.label(run, f)}: switch {x}" for x in series_notes(fa.transport, f.piecewise)]
            t.notes += [f"{t.label(run, f)}, {size(p.size)}: {p.note}" for p in f.series.points if p.note]
        t.screens = [sc for fa in facts for sc in fa.screens if sc.test == t.name]
        t.nodes = [ns for fa in facts for ns in fa.node_screens if ns.test == t.name]
    screening_blocks = [t for t in blocks.values() if t.screens or t.nodes]
    if screening_blocks and len(facts) == 1:
        screening_blocks[0].places = facts[0].flagged
        screening_blocks[0].nodes += [ns for ns in facts[0].node_screens if ns.test not in blocks]  # the canary's
    by_level: dict[str, list[TestBlock]] = {}
    for fa in facts:
        for f in fa.series:
            level = fa.run.info(f.series.test).level
            if blocks[f.series.test] not in by_level.setdefault(level, []):
                by_level[level].append(blocks[f.series.test])
    order = [lv for lv in LEVELS if lv in by_level] + [lv for lv in by_level if lv not in LEVELS]
    sections = []
    for lv in order:
        name, ref = LEVELS.get(lv, ("Other", ""))
        sections.append(
            {
                "id": name.split()[0].lower(),
                "title": name,
                "ref": ref,
                "tests": [_test_section(t) for t in by_level[lv]],
            }
        )
    env = environment("scope.views")  # control characters shown as escapes, as on every page
    if layers is None:
        layers = facts[0].layers if len(facts) == 1 else []
    return env.get_template("report.html.j2").render(
        title=title or "SCOPE report: " + ", ".join(fa.run.title() for fa in facts),
        version=__version__,
        made=made,
        css=CSS,
        references=cited([lv for lv in order], any(fa.loggp for fa in facts)),
        self_check=SELF_CHECK,
        banners=[
            f"Run {fa.run.id}: SIMULATED: {simulated_text(fa.run.context.sim)}"
            for fa in facts
            if fa.run.context and fa.run.context.sim
        ],
        warned=[(fa.run.id, len(fa.warnings), sorted({w.kind for w in fa.warnings})) for fa in facts if fa.warnings],
        sections=sections,
        summary=_summary_rows(list(blocks.values())),
        settings=[(t.name, t.setting) for t in blocks.values() if t.setting],
        models=_model_rows(facts),
        has_loggp=any(fa.loggp for fa in facts),
        layers=_layer_rows(layers) if len(layers) >= 2 else [],
        overhead=_overhead_rows(facts),
        progress=_progress_rows(facts),
        kernels=_kernel_blocks(facts),
        timelines=report_blocks(facts),
        provenance=[provenance(fa) for fa in facts],
        datasheets=[d for d in (datasheet_block(fa, LEVELS) for fa in facts) if d],
    )


def build(
    facts: list[RunFacts],
    out: Path,
    title: str | None = None,
    when: str | None = None,
    layers: list[Layer] | None = None,
) -> Path:
    """Render the derived runs into `out` (the caller loads and derives, and gives the layer
    table across them: a view only renders)."""
    made = when or datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    out.write_text(drawing.together(lambda: render(facts, made, title, layers)), encoding="utf-8")
    return out
