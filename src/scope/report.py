"""scope report: one self-contained HTML file (plots inline as SVG data URIs, no network
needed), grouped by SCOPE level, several runs overlaid and labelled."""

from __future__ import annotations

import base64
import html
import io
import json
import math
from pathlib import Path

import numpy as np

from scope import __version__
from scope.analysis.breakpoints import fit_piecewise
from scope.analysis.loggp import fit_loggp
from scope.show import fit_series
from scope.sizes import format_size
from scope.store import Store, now_utc, samples_of, series
from scope.warnings import run_warnings

LEVELS = [  # (prefix, title, SCOPE section)
    ("node.", "Single node", "§6.4"),
    ("shm.", "User-level channel", "ParaStation2 §5"),
    ("net.", "Network level", "§6.5.1"),
    ("p2p.", "MPI point-to-point (library level)", "§6.5.3"),
    ("coll.", "Collectives", "§6.5.4"),
    ("rma.", "One-sided communication", "Global Arrays over SCI"),
    ("io.", "Parallel I/O", "App. D, E"),
    ("kernel.", "Kernels", "§6.6-6.7"),
]

CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:0;color:#1d2330;background:#f6f7f9}
header{background:#1d2d50;color:#fff;padding:18px 32px}header h1{margin:0;font-size:22px}
header p{margin:4px 0 0;opacity:.8;font-size:13px}
main{max-width:1180px;margin:0 auto;padding:12px 32px 48px}
section{background:#fff;border-radius:8px;box-shadow:0 1px 3px rgba(0,0,0,.08);padding:16px 22px;margin:18px 0}
h2{font-size:19px;margin:4px 0 10px;border-bottom:2px solid #e3e7ef;padding-bottom:6px}
h3{font-size:16px;margin:18px 0 6px}
table{border-collapse:collapse;font-size:13px;margin:8px 0}
th,td{padding:4px 10px;border-bottom:1px solid #e8ebf0;text-align:right}th{background:#f0f2f6}
td.l,th.l{text-align:left}
.warn{background:#fff4e5;border-left:4px solid #f0a020;padding:6px 10px;margin:6px 0;font-size:13px}
.muted{color:#68707f;font-size:12px}
img.plot{max-width:100%;height:auto;display:block;margin:6px 0}
nav a{margin-right:14px;font-size:13px}
code{background:#f0f2f6;padding:1px 4px;border-radius:3px}
"""

# Sets data-images-ok on <body> once every plot has decoded: a check a headless browser reads.
SELF_CHECK = """
window.addEventListener('load',function(){var im=document.images,ok=true;
for(var i=0;i<im.length;i++){if(!im[i].complete||im[i].naturalWidth===0){ok=false}}
document.body.setAttribute('data-images-ok',ok?'yes':'no');
document.body.setAttribute('data-image-count',String(im.length));});
"""


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams.update(
        {
            "svg.fonttype": "none",
            "svg.hashsalt": "scope",
            "font.size": 9,
            "axes.grid": True,
            "grid.alpha": 0.3,
            "axes.spines.top": False,
            "axes.spines.right": False,
        }
    )
    return plt


def svg_img(fig, alt: str) -> str:
    plt = _plt()
    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight")
    plt.close(fig)
    data = base64.b64encode(buf.getvalue().encode()).decode()
    return f'<img class="plot" alt="{html.escape(alt)}" src="data:image/svg+xml;base64,{data}">'


def esc(x) -> str:
    return html.escape(str(x))


def level_of(test: str) -> tuple[str, str]:
    for prefix, title, sec in LEVELS:
        if test.startswith(prefix):
            return title, sec
    return "Other", ""


def run_label(run) -> str:
    base = f"run {run['id']}"
    if run["label"]:
        base += f" ({run['label']})"
    if run["origin"] and run["origin"] != "scope":
        base += f" [{run['origin'].upper()}]"
    return base


def _fmt(v, digits=3) -> str:
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "-"
    if v == 0:
        return "0"
    mag = math.floor(math.log10(abs(v)))
    return f"{v:,.{max(0, digits - 1 - mag)}f}"


def _params_text(params_json: str) -> str:
    p = json.loads(params_json)
    return ", ".join(f"{k}={'yes' if v is True else 'no' if v is False else v}" for k, v in p.items())


def _nhalf(t0_us: float, rinf_MBps: float) -> str:
    return format_size(max(t0_us * rinf_MBps, 0)) if math.isfinite(rinf_MBps) else "-"


def test_figure(test: str, groups: list[tuple[str, list]]) -> str:
    """Time and bandwidth against size, log axes, CI bands, the Hockney model over the points."""
    plt = _plt()
    fig, (ax_t, ax_b) = plt.subplots(1, 2, figsize=(11, 3.8))
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for i, (label, pts) in enumerate(groups):
        c = colors[i % len(colors)]
        pts = sorted((p for p in pts if p["size"] is not None), key=lambda p: p["size"])
        if not pts:
            continue
        xs = np.array([max(p["size"], 0.5) for p in pts], dtype=float)  # 0 B drawn at 0.5 on a log axis
        med = np.array([p["median"] for p in pts], dtype=float)
        lo = np.array([p["ci_lo"] if p["ci_lo"] is not None else p["median"] for p in pts], dtype=float)
        hi = np.array([p["ci_hi"] if p["ci_hi"] is not None else p["median"] for p in pts], dtype=float)
        ax_t.plot(xs, med, "o-", ms=3, lw=1.2, color=c, label=label)
        ax_t.fill_between(xs, lo, hi, color=c, alpha=0.2, lw=0)
        fit = fit_series(pts)
        if fit:
            grid = np.geomspace(max(xs.min(), 0.5), xs.max(), 200)
            ax_t.plot(
                grid,
                fit.t0_us + grid / fit.rinf_MBps,
                "--",
                lw=1,
                color=c,
                alpha=0.8,
                label=f"Hockney t0={_fmt(fit.t0_us)} us, r∞={_fmt(fit.rinf_MBps)} MB/s",
            )
        pw = fit_piecewise([p["size"] for p in pts], [p["median"] for p in pts])
        if pw:
            for k, x in enumerate(pw.switch_positions()):
                for ax in (ax_t, ax_b):
                    ax.axvline(
                        x,
                        color=c,
                        ls=":",
                        lw=1,
                        alpha=0.9,
                        label=f"switch {format_size(pw.switches[k][0])}→{format_size(pw.switches[k][1])}"
                        if ax is ax_t
                        else None,
                    )
        nz = [(p["size"], p) for p in pts if p["size"] and p["median"]]
        if nz:
            bx = np.array([s for s, _ in nz], dtype=float)
            bw = np.array([p["bytes_per_op"] / p["median"] for _, p in nz])
            bw_lo = np.array([p["bytes_per_op"] / (p["ci_hi"] or p["median"]) for _, p in nz])
            bw_hi = np.array([p["bytes_per_op"] / (p["ci_lo"] or p["median"]) for _, p in nz])
            ax_b.plot(bx, bw, "o-", ms=3, lw=1.2, color=c, label=label)
            ax_b.fill_between(bx, bw_lo, bw_hi, color=c, alpha=0.2, lw=0)
            if fit:
                grid = np.geomspace(bx.min(), bx.max(), 200)
                credit = nz[-1][1]["bytes_per_op"] / nz[-1][0]
                ax_b.plot(grid, credit * grid / (fit.t0_us + grid / fit.rinf_MBps), "--", lw=1, color=c, alpha=0.8)
    for ax in (ax_t, ax_b):
        ax.set_xscale("log", base=2)
        ax.set_xlabel("message size (bytes)")
    ax_t.set_yscale("log")
    ax_t.set_ylabel("time (µs)")
    ax_t.set_title(f"{test}: time, median with 95 % CI")
    ax_b.set_ylabel("bandwidth (MB/s = 10⁶ B/s)")
    ax_b.set_title(f"{test}: bandwidth")
    ax_t.legend(fontsize=7, loc="upper left")
    return svg_img(fig, f"{test} time and bandwidth against size")


def collective_figure(test: str, label: str, pts: list) -> str | None:
    """Collectives: time against process count per size, and each rank's own time (box plot)
    at the largest process count and middle size, from the per-rank data the record keeps."""
    recs = [(p, json.loads(p["record"])) for p in pts]
    recs = [(p, r) for p, r in recs if "per_rank" in r and p["median"]]
    if not recs:
        return None
    plt = _plt()
    fig, (ax_p, ax_r) = plt.subplots(1, 2, figsize=(11, 3.4))
    by_size: dict = {}
    for p, r in recs:
        by_size.setdefault(p["size"], []).append((r["params"].get("procs", 0), p["median"]))
    for size, vals in sorted(by_size.items(), key=lambda kv: kv[0] or 0):
        vals.sort()
        ax_p.plot([v[0] for v in vals], [v[1] for v in vals], "o-", ms=3, label=format_size(size))
    ax_p.set_xlabel("processes")
    ax_p.set_ylabel("time (µs)")
    ax_p.set_title(f"{test}: against process count", fontsize=9)
    ax_p.legend(fontsize=7, title="size", title_fontsize=7)
    top = max(r["params"].get("procs", 0) for _, r in recs)
    cand = [(p, r) for p, r in recs if r["params"].get("procs", 0) == top]
    p, r = cand[len(cand) // 2]
    starts, ends = r["per_rank"].get("start_us", []), r["per_rank"].get("end_us", [])
    own = [[e - s for s, e in zip(sr, er)] for sr, er in zip(starts, ends)]
    if own and own[0]:
        ax_r.boxplot(own, showfliers=False)
        ax_r.set_xticks(range(1, len(own) + 1), [str(i) for i in range(len(own))])
    ax_r.set_xlabel("rank")
    ax_r.set_ylabel("own time (µs)")
    ax_r.set_title(
        f"{test}: each rank's own time, {format_size(p['size'])}, {top} processes ({label.split(':')[0]})", fontsize=9
    )
    return svg_img(fig, f"{test} against process count and per rank")


def distribution_figure(test: str, label: str, pts: list) -> str | None:
    """Histograms of the raw samples at the smallest, a middle and the largest size."""
    with_samples = [p for p in sorted(pts, key=lambda p: p["size"] or 0) if p["samples"] is not None]
    if not with_samples:
        return None
    picks = [with_samples[0], with_samples[len(with_samples) // 2], with_samples[-1]]
    picks = list({p["size"]: p for p in picks}.values())
    plt = _plt()
    fig, axes = plt.subplots(1, len(picks), figsize=(11, 2.6), squeeze=False)
    for ax, p in zip(axes[0], picks):
        x = np.asarray(samples_of(p))
        x = x[np.isfinite(x)]
        cut = np.quantile(x, 0.995) if len(x) > 200 else x.max()
        ax.hist(x[x <= cut], bins=60, color="#3b6fb6", alpha=0.85)
        ax.axvline(p["median"], color="#d04020", lw=1)
        above = (x > cut).sum()
        ax.set_title(
            f"{format_size(p['size'])}: n={len(x)}, median {_fmt(p['median'])} µs"
            + (f", {above} beyond p99.5" if above else ""),
            fontsize=8,
        )
        ax.set_xlabel("time (µs)")
    axes[0][0].set_ylabel("samples")
    fig.suptitle(f"{test} — {label}: distribution of samples", fontsize=9, y=1.08)
    return svg_img(fig, f"{test} distributions")


def _clock_text(events) -> str:
    from scope.show import clock_text

    return clock_text(events) or "not used by these tests (no global clock needed)"


def build(store: Store, run_ids: list[int], out: Path, title: str | None = None) -> Path:
    runs = {rid: store.run(rid) for rid in run_ids}
    points = {rid: store.points(rid) for rid in run_ids}
    tests: dict[str, list[tuple[int, str, list]]] = {}
    for rid in run_ids:
        for (test, params), pts in series(points[rid]).items():
            tests.setdefault(test, []).append((rid, params, pts))

    body: list[str] = []
    by_level: dict[str, list[str]] = {}
    for test in tests:
        by_level.setdefault(level_of(test)[0], []).append(test)
    order = [t for _, t, _ in LEVELS if t in by_level] + (["Other"] if "Other" in by_level else [])
    nav = " ".join(f'<a href="#{esc(t.split()[0].lower())}">{esc(t)}</a>' for t in order)
    body.append(f"<nav>{nav} <a href='#provenance'>Provenance</a></nav>")

    # Summary of every series, the numbers people look for first.
    rows = []
    for test, groups in tests.items():
        for rid, params, pts in groups:
            lat = min(pts, key=lambda p: p["size"] or 0)
            peak = max(pts, key=lambda p: p["bw_median"] or 0)
            fit = fit_series(pts)
            rows.append(
                f"<tr><td class=l>{esc(test)}</td><td class=l>{esc(run_label(runs[rid]))}</td>"
                f"<td class=l>{esc(_params_text(params))}</td><td>{_fmt(lat['median'])} µs @ {format_size(lat['size'])}"
                f"</td><td>{_fmt(peak['bw_median'])} MB/s @ {format_size(peak['size'])}</td>"
                f"<td>{_fmt(fit.t0_us) if fit else '-'}</td><td>{_fmt(fit.rinf_MBps) if fit else '-'}</td>"
                f"<td>{_nhalf(fit.t0_us, fit.rinf_MBps) if fit else '-'}</td></tr>"
            )
    body.append(
        "<section id='summary'><h2>Summary</h2><table><tr><th class=l>test</th><th class=l>run</th>"
        "<th class=l>parameters</th><th>time at smallest size</th><th>peak bandwidth</th><th>t0 (µs)</th>"
        "<th>r∞ (MB/s)</th><th>n½</th></tr>" + "".join(rows) + "</table>"
        "<p class=muted>Hockney model t(n) = t0 + n/r∞, n½ = t0·r∞ (SCOPE eq. 6.11-6.13), fitted on "
        "relative residuals. Times are medians; bands are 95 % confidence intervals of the median.</p>"
        "</section>"
    )

    model_rows = []
    for rid in run_ids:
        for (test, params), pts in series(points[rid]).items():
            if test == "p2p.pingpong":
                fit = fit_series(pts)
                if fit:
                    model_rows.append(
                        f"<tr><td class=l>{esc(run_label(runs[rid]))}</td><td class=l>Hockney "
                        f"({esc(_params_text(params))})</td><td>t0 = {_fmt(fit.t0_us)} µs</td>"
                        f"<td>r∞ = {_fmt(fit.rinf_MBps)} MB/s</td>"
                        f"<td>n½ = {_nhalf(fit.t0_us, fit.rinf_MBps)}</td><td></td></tr>"
                    )
        for f in fit_loggp(points[rid]):
            model_rows.append(
                f"<tr><td class=l>{esc(run_label(runs[rid]))}</td><td class=l>LogGP (PRTT, n={f.n})</td>"
                f"<td>L = {_fmt(f.L_us)} µs</td><td>o = {_fmt(f.o_us)} µs</td>"
                f"<td>g = {_fmt(f.g_us)} µs</td><td>G = {_fmt(f.G_us_per_byte * 1000)} ns/B "
                f"(1/G = {_fmt(f.bandwidth_MBps)} MB/s)</td></tr>"
            )
    from scope.show import collective_model_lines

    for rid in run_ids:
        for line in collective_model_lines(points[rid]):
            name, _, rest = line.partition(": ")
            model_rows.append(
                f"<tr><td class=l>{esc(run_label(runs[rid]))}</td><td class=l>{esc(name)}</td>"
                f"<td class=l colspan=4>{esc(rest)}</td></tr>"
            )
    if model_rows:
        note = (
            "<p class=muted>LogGP by the PRTT method of Netgauge (Hoefler, Lichei, Rehm 2007): "
            "g + (s-1)G from (PRTT(n,0,s) - PRTT(1,0,s))/(n-1), o from PRTT(n,d,s) with d = PRTT(1,0,s), "
            "L from PRTT(1,0,s_min).</p>"
            if any("LogGP" in r for r in model_rows)
            else ""
        )
        body.append(
            "<section id='models'><h2>Models</h2><table>" + "".join(model_rows) + "</table>" + note + "</section>"
        )

    from scope.layers import layers_of

    layers = layers_of(store, run_ids)
    if len(layers) >= 2:
        rows, below = [], None
        for ly in layers:
            adds = f"{ly.min_us - below.min_us:+.3g} µs" if below else "-"
            ratio = f"{ly.rinf_MBps / below.rinf_MBps:.2f}×" if below and ly.rinf_MBps and below.rinf_MBps else "-"
            rows.append(
                f"<tr><td class=l>{esc(ly.name)}</td><td>{_fmt(ly.latency_us)}</td><td>{_fmt(ly.min_us)}</td>"
                f"<td>{_fmt(ly.rinf_MBps)}</td><td>{format_size(max(ly.nhalf_bytes or 0, 0))}</td><td>{adds}</td>"
                f"<td>{ratio}</td><td class=l>{esc(f'run {ly.run}: {ly.source}')}</td></tr>"
            )
            below = ly
        body.append(
            "<section id='layers'><h2>Layers</h2><table><tr><th class=l>layer</th><th>latency (µs, median)</th>"
            "<th>min (µs, SCOPE latency)</th><th>r∞ (MB/s)</th><th>n½</th><th>min adds over the layer below</th>"
            "<th>r∞ vs below</th>"
            "<th class=l>from</th></tr>" + "".join(rows) + "</table><p class=muted>In the shape of ParaStation2's "
            "Table 3: what each layer, from the cache line up, costs over the one below it.</p></section>"
        )

    for level in order:
        sec = next((s for _, t, s in LEVELS if t == level), "")
        parts = [
            f"<section id='{esc(level.split()[0].lower())}'><h2>{esc(level)} <span class=muted>{esc(sec)}</span></h2>"
        ]
        for test in by_level[level]:
            groups = tests[test]
            first = json.loads(groups[0][2][0]["record"])
            parts.append(f"<h3 id='{esc(test)}'>{esc(test)}</h3><p class=muted>{esc(first.get('measures', ''))}</p>")
            labelled = []
            for rid, params, pts in groups:
                label = run_label(runs[rid]) + (f": {_params_text(params)}" if params != "{}" else "")
                labelled.append((label, pts))
            if any(p["size"] is not None for _, pts in labelled for p in pts):
                parts.append(test_figure(test, labelled))
            fit_rows = []
            for label, pts in labelled:
                fit = fit_series(pts)
                if fit:
                    fit_rows.append(
                        f"<tr><td class=l>{esc(label)}</td><td>{_fmt(fit.t0_us)}</td>"
                        f"<td>{_fmt(fit.rinf_MBps)}</td><td>{_nhalf(fit.t0_us, fit.rinf_MBps)}</td>"
                        f"<td>{fit.max_abs_residual * 100:.0f} %</td><td>{fit.points}</td></tr>"
                    )
            for label, pts in labelled:
                pw = fit_piecewise([p["size"] for p in pts], [p["median"] for p in pts])
                if pw and len(pw.segments) > 1:
                    for sg in pw.segments:
                        fit_rows.append(
                            f"<tr><td class=l>{esc(label)}: segment {format_size(sg.first_size)} .. "
                            f"{format_size(sg.last_size)}</td><td>{_fmt(sg.t0_us)}</td>"
                            f"<td>{_fmt(sg.rinf_MBps)}</td><td>{_nhalf(sg.t0_us, sg.rinf_MBps)}</td>"
                            f"<td>{sg.max_abs_residual * 100:.0f} %</td><td></td></tr>"
                        )
            if fit_rows:
                parts.append(
                    "<table><tr><th class=l>series</th><th>t0 (µs)</th><th>r∞ (MB/s)</th><th>n½</th>"
                    "<th>max |residual|</th><th>sizes</th></tr>" + "".join(fit_rows) + "</table>"
                )
            if test.startswith(("coll.", "p2p.ring", "p2p.multipair", "p2p.pattern")):
                for label, _ in labelled[:1]:
                    cf = collective_figure(test, label, [p for _, pts2 in labelled for p in pts2])
                    if cf:
                        parts.append(cf)
            # One distribution figure per run (its first series): enough to see the shape and
            # the outliers, and it keeps a large report quick to build.
            shown = set()
            for (rid, _, _), (label, pts) in zip(groups, labelled):
                if rid in shown:
                    continue
                d = distribution_figure(test, label, pts)
                if d:
                    shown.add(rid)
                    parts.append(d)
        parts.append("</section>")
        body.append("".join(parts))

    prov = ["<section id='provenance'><h2>Provenance</h2>"]
    for rid in run_ids:
        r = runs[rid]
        ctx = json.loads(r["context"]) if r["context"] else {}
        timer = ctx.get("timer", {})
        warns = run_warnings(r, points[rid], store.events(rid))
        prov.append(f"<h3>{esc(run_label(r))}</h3><table>")
        items = [
            ("status", r["status"] + (f" ({r['reason']})" if r["reason"] else "")),
            ("started (UTC)", r["started_utc"]),
            ("origin", r["origin"] or "scope"),
        ]
        if r["source"]:
            items.append(("imported from", r["source"]))
        if ctx:
            hosts = sorted({p["host"] for p in ctx.get("placement", [])})
            items += [
                ("MPI library", (ctx.get("mpi", {}).get("library") or "").strip().splitlines()[0]),
                ("engine", f"{ctx.get('engine', {}).get('version')} built with {ctx.get('engine', {}).get('mpicc')}"),
                ("ranks / hosts", f"{ctx.get('ranks')} on {', '.join(hosts)}"),
                (
                    "timer",
                    f"{timer.get('selected')}: {_fmt(timer.get('overhead_ns'))} ns per read, resolution "
                    f"{_fmt(timer.get('resolution_ns'))} ns",
                ),
                ("clock synchronisation", _clock_text(store.events(rid))),
                ("oversubscribed", "yes" if ctx.get("oversubscribed") else "no"),
                (
                    "settings",
                    ", ".join(f"{k}={v}" for k, v in ctx.get("settings", {}).items() if k not in ("sizes", "tests")),
                ),
                ("command", " ".join(json.loads(r["command"]) if r["command"] else [])),
            ]
        prov += [f"<tr><th class=l>{esc(k)}</th><td class=l>{esc(v)}</td></tr>" for k, v in items]
        prov.append("</table>")
        prov += [
            f"<div class=warn><b>{esc(w.kind)}</b>: {esc(w.message)} <i>Hint: {esc(w.hint)}</i></div>" for w in warns
        ]
    prov.append("</section>")
    body.append("".join(prov))

    title = title or "SCOPE report: " + ", ".join(run_label(runs[r]) for r in run_ids)
    doc = (
        f"<!DOCTYPE html><html lang=en><head><meta charset=utf-8><title>{esc(title)}</title>"
        f"<meta name=viewport content='width=device-width, initial-scale=1'><style>{CSS}</style></head>"
        f"<body><header><h1>{esc(title)}</h1><p>made by scope {__version__} on {now_utc()}; units: µs, bytes, "
        f"MB/s = 10⁶ bytes/s</p></header><main>{''.join(body)}</main><script>{SELF_CHECK}</script></body></html>"
    )
    out.write_text(doc, encoding="utf-8")
    return out
