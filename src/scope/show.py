"""Terminal views of stored runs: the run list, a table per test, the post-run summary."""

from __future__ import annotations

import json
import math

from scope.analysis.breakpoints import Piecewise, fit_piecewise
from scope.analysis.hockney import HockneyFit, fit_hockney
from scope.analysis.loggp import LogGP, fit_loggp
from scope.sizes import format_size
from scope.store import Store, series
from scope.warnings import run_warnings


def table(headers: list[str], rows: list[list[str]], align: str | None = None) -> str:
    """Columns right-aligned ('r') or left-aligned ('l'), two spaces apart."""
    align = align or "l" + "r" * (len(headers) - 1)
    widths = [max(len(str(x)) for x in col) for col in zip(headers, *rows)]

    def fmt(cells):
        return "  ".join(str(c).rjust(w) if a == "r" else str(c).ljust(w) for c, w, a in zip(cells, widths, align))

    return "\n".join([fmt(headers), fmt(["-" * w for w in widths]), *(fmt(r) for r in rows)])


def num(v, digits: int = 3) -> str:
    """Three significant figures, thousands separated; '-' for missing."""
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "-"
    if v == 0:
        return "0"
    mag = math.floor(math.log10(abs(v)))
    decimals = max(0, digits - 1 - mag)
    return f"{v:,.{decimals}f}"


def params_label(params_json: str) -> str:
    p = json.loads(params_json)
    return " ".join(f"{k}={'yes' if v is True else 'no' if v is False else v}" for k, v in p.items())


def fit_series(points) -> HockneyFit | None:
    return fit_hockney([p["size"] for p in points], [p["median"] for p in points])


def fit_line(fit: HockneyFit | None) -> str:
    if fit is None:
        return "Hockney fit: not enough sizes with a time that grows with size"
    return (
        f"Hockney fit t = t0 + n/r_inf: t0 = {num(fit.t0_us)} us, r_inf = {num(fit.rinf_MBps)} MB/s, "
        f"n_half = {format_size(max(fit.nhalf_bytes, 0))}; max |residual| {fit.max_abs_residual * 100:.0f} % "
        f"over {fit.points} sizes"
    )


def piecewise_lines(pw: Piecewise | None) -> list[str]:
    if pw is None or len(pw.segments) < 2:
        return []
    where = ", ".join(f"{format_size(a)} -> {format_size(b)}" for a, b in pw.switches)
    lines = [f"Protocol switches (piecewise Hockney fit): {where}"]
    for sg in pw.segments:
        lines.append(
            f"  {format_size(sg.first_size)} .. {format_size(sg.last_size)}: t0 = {num(sg.t0_us)} us, "
            f"r_inf = {num(sg.rinf_MBps)} MB/s, max |residual| {sg.max_abs_residual * 100:.0f} %"
        )
    return lines


def loggp_line(f: LogGP) -> str:
    return (
        f"LogGP (PRTT method, n = {f.n}): L = {num(f.L_us)} us, o = {num(f.o_us)} us, g = {num(f.g_us)} us, "
        f"G = {num(f.G_us_per_byte * 1000)} ns/byte (1/G = {num(f.bandwidth_MBps)} MB/s); "
        f"max |residual| of g + (s-1)G {f.gap_residual_max * 100:.0f} %"
    )


def models_block(points) -> list[str]:
    """Hockney (from ping-pong) and LogGP side by side, when the run has the data for them."""
    out = []
    pp = [p for p in points if p["test"] == "p2p.pingpong"]
    for (_, params), pts in series(pp).items():
        fit = fit_series(pts)
        if fit:
            out.append(
                f"Hockney (p2p.pingpong {params_label(params)}): t0 = {num(fit.t0_us)} us, "
                f"r_inf = {num(fit.rinf_MBps)} MB/s, n_half = {format_size(max(fit.nhalf_bytes, 0))}"
            )
    out += [loggp_line(f) for f in fit_loggp(points)]
    out += collective_model_lines(points)
    return ["", "Models", *("  " + x for x in out)] if any(("LogGP" in x or "SCOPE" in x) for x in out) else []


def collective_model_lines(points) -> list[str]:
    from scope.analysis.collectives import fit_collective

    out = []
    for op in ("barrier", "bcast", "reduce"):
        data = [
            (p["size"] or 0, json.loads(p["params"]).get("procs", 0), p["median"])
            for p in points
            if p["test"] == f"coll.{op}" and p["median"]
        ]
        m = fit_collective(op, data)
        if m:
            pars = ", ".join(
                f"{k} = {num(v)}" + (" us/byte" if k.startswith("t_w") else " us") for k, v in m.params.items()
            )
            out.append(f"SCOPE {op} model: {pars}; max |residual| {m.max_abs_residual * 100:.0f} % over {m.points}")
    return out


def run_header(store: Store, run_id: int) -> list[str]:
    r = store.run(run_id)
    ctx = json.loads(r["context"]) if r["context"] else {}
    lib = (r["mpi_library"] or "unknown MPI").strip().splitlines()[0]
    hosts = json.loads(r["hosts"]) if r["hosts"] else []
    timer = ctx.get("timer", {})
    lines = [
        f"run {run_id}  {r['started_utc']}  {r['status']}"
        + (f" ({r['reason']})" if r["reason"] else "")
        + (f"  label: {r['label']}" if r["label"] else ""),
        f"  {lib}; {r['ranks']} ranks on {', '.join(hosts) or '?'}; timer {timer.get('selected', '?')} "
        f"({num(timer.get('overhead_ns'))} ns per read)",
    ]
    if r["origin"] and r["origin"] != "scope":
        lines[1] = f"  imported from {r['origin'].upper()}: {r['source']}; one average per size, no distribution"
    if r["oversubscribed"]:
        lines.append("  OVERSUBSCRIBED: more ranks than cores, timings do not represent the hardware")
    return lines


def collective_table(pts, ranks: list[int] | None) -> list[str]:
    """Window/barrier-timed points: validity, skews, MPIBench's shares above n x minimum."""
    import numpy as np

    from scope.analysis.collectives import (
        effective_bandwidth_MBps,
        outliers,
        overlap,
        shares_above_min,
        subset_completion,
    )
    from scope.store import samples_of

    rows = []
    for p in pts:
        rec = json.loads(p["record"])
        win, skew = rec.get("window") or {}, rec.get("skew") or {}
        x = samples_of(p)
        med, label = p["median"], ""
        if ranks:
            try:
                sub = subset_completion(rec, ranks)
            except ValueError as e:
                return [f"  {e}"]
            x = sub
            med = float(np.median(sub)) if sub else None
        sh = shares_above_min(x)
        out = outliers(x)
        extra = rec.get("extra") or {}
        ov = overlap(med, extra.get("compute_us"), extra.get("pure_us"))
        procs = json.loads(p["params"]).get("procs", 0)
        op = p["test"].split(".", 1)[1]
        beff = effective_bandwidth_MBps(op, p["size"] or 0, procs, med) if med and p["size"] else None
        rows.append(
            [
                format_size(p["size"]) if p["size"] is not None else "-",
                str(procs or "-"),
                num(med) + label,
                num(beff) if beff else "-",
                f"{p['ci_rel'] * 100:.1f}" if p["ci_rel"] is not None and not ranks else "-",
                f"{win.get('invalid', 0)}/{win.get('repetitions', 0)}",
                num((skew.get("arrival_us") or {}).get("median")),
                num((skew.get("exit_us") or {}).get("median")),
                f"{sh.get(2, 0) * 100:.0f}/{sh.get(4, 0) * 100:.0f}",
                str(out["count"]),
                f"{ov * 100:.0f} %" if ov is not None else "-",
                rec.get("timing", "-"),
            ]
        )
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
        "overlap",
        "timing",
    ]
    lines = [table(head, rows)]
    if ranks:
        lines.append(f"ranks {','.join(map(str, ranks))} only: completion = their last exit - common start")
    return lines


def clock_text(events) -> str | None:
    """The run's last clock synchronisation: predicted error, and the measured one on one host."""
    recs = [json.loads(e["record"]) for e in events if e["type"] == "clock"]
    if not recs:
        return None
    rec = recs[-1]
    text = f"predicted error up to {num(rec.get('max_predicted_error_ns'))} ns"
    if rec.get("one_host"):
        text += f"; measured error on one host {num(rec.get('max_error_ns'))} ns"
    return text


def clock_lines(events) -> list[str]:
    text = clock_text(events)
    return [f"  global clock: {text}"] if text else []


def show_run(store: Store, run_id: int, test_filter: str | None = None, ranks: list[int] | None = None) -> str:
    import fnmatch

    out = run_header(store, run_id)
    points = store.points(run_id)
    events = store.events(run_id)
    out += clock_lines(events)
    for w in run_warnings(store.run(run_id), points, events):
        out.append("  " + w.line())
    for (test, params), pts in series(points).items():
        if test_filter and not fnmatch.fnmatchcase(test, test_filter):
            continue
        rec = json.loads(pts[0]["record"])
        out.append("")
        out.append(f"{test}  {params_label(params)}  [{rec.get('measures', '')}]")
        if "timing" in rec:
            out += collective_table(pts, ranks)
            continue
        fit = fit_series(pts)
        resid = dict(zip(fit.sizes, fit.residuals)) if fit else {}
        rows = []
        for p in pts:
            r = resid.get(p["size"])
            rows.append(
                [
                    format_size(p["size"]),
                    num(p["median"]),
                    f"{num(p['ci_lo'])}-{num(p['ci_hi'])}",
                    f"{p['ci_rel'] * 100:.1f}" if p["ci_rel"] is not None else "-",
                    f"{num(p['p5'])}-{num(p['p95'])}",
                    num(p["bw_median"]) if p["size"] else "-",
                    f"{r * 100:+.0f}" if r is not None else "-",
                    str(p["count"]),
                    p["stop"] + (" (cold)" if p["warmup_converged"] == 0 else ""),
                ]
            )
        out.append(
            table(
                ["size", "median us", "95% CI us", "+/-%", "p5-p95 us", "MB/s", "fit resid %", "n", "stop"],
                rows,
            )
        )
        out.append(fit_line(fit))
        out += piecewise_lines(fit_piecewise([p["size"] for p in pts], [p["median"] for p in pts]))
    out += models_block(points)
    from scope.layers import layers_of, render

    layers = layers_of(store, [run_id])
    if len(layers) >= 2:
        out += ["", "Layers (what each adds over the one below)", render(layers)]
    bad = [e for e in events if e["type"] in ("error", "skip")]
    if bad:
        out.append("")
        for e in bad:
            what = f"{e['test']} {params_label(e['params'])}" if e["params"] else (e["test"] or "")
            out.append(f"{e['type']}: {what}: {e['message']}")
    return "\n".join(out)


def summary(store: Store, run_id: int) -> str:
    """The few numbers a person wants after a run, one line per test series."""
    points = store.points(run_id)
    rows = []
    for (test, params), pts in series(points).items():
        lat = min(pts, key=lambda p: p["size"] or 0)
        peak = max(pts, key=lambda p: p["bw_median"] or 0)
        fit = fit_series(pts)
        rows.append(
            [
                test,
                params_label(params) or "-",
                f"{num(lat['median'])} us @ {format_size(lat['size'])} (+/-{(lat['ci_rel'] or 0) * 100:.1f}%)",
                f"{num(peak['bw_median'])} MB/s @ {format_size(peak['size'])}" if peak["size"] else "-",
                f"{num(fit.t0_us)} us / {num(fit.rinf_MBps)} MB/s / {format_size(max(fit.nhalf_bytes, 0))}"
                if fit
                else "-",
            ]
        )
    head = run_header(store, run_id)
    warns = [w.line() for w in run_warnings(store.run(run_id), points, store.events(run_id))]
    body = (
        table(
            ["test", "parameters", "time at smallest size", "peak bandwidth", "Hockney t0 / r_inf / n_half"],
            rows,
            "llrrr",
        )
        if rows
        else "(no points measured)"
    )
    return "\n".join([*head, *("  " + w for w in warns), "", body])


def runs_table(store: Store) -> str:
    rows = []
    for r in store.runs():
        lib = (r["mpi_library"] or "").strip().splitlines()[0] if r["mpi_library"] else "-"
        rows.append(
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
    if not rows:
        return "no runs yet: start one with 'scope run'"
    return table(["run", "started (UTC)", "status", "ranks", "points", "tests", "MPI", "label"], rows, "rllrrlll")
