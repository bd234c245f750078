"""Formatting shared by every view: numbers with units, sizes, parameter labels, terminal
tables and escaping of text that came from outside (labels, file names)."""

from __future__ import annotations

import html
import math
import textwrap
import unicodedata

from scope.analysis.clock import ClockSummary
from scope.analysis.cluster import cluster_text
from scope.analysis.facts import RunFacts, SeriesFacts
from scope.analysis.hockney import unphysical
from scope.model import Run
from scope.sizes import format_size


def num(v, digits: int = 3) -> str:
    """Three significant figures, thousands separated; '-' for missing."""
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "-"
    if v == 0:
        return "0"
    mag = math.floor(math.log10(abs(v)))
    return f"{v:,.{max(0, digits - 1 - mag)}f}"


def size(n) -> str:
    return format_size(n) if n is not None else "-"


def nhalf(v) -> str:
    return format_size(max(v, 0)) if v is not None and math.isfinite(v) else "-"


def t0_text(t0_us, rinf_MBps=None) -> str:
    """A fitted t0, marked when the fit is unphysical (the warning says why)."""
    return num(t0_us) + (" (unphysical)" if unphysical(t0_us, rinf_MBps) else "")


def pct(v, digits: int = 1) -> str:
    return f"{v * 100:.{digits}f}" if v is not None and math.isfinite(v) else "-"


def params_label(params: dict, sep: str = " ") -> str:
    return sep.join(f"{k}={'yes' if v is True else 'no' if v is False else v}" for k, v in params.items())


def differing(settings: list[dict]) -> list[dict]:
    """Each setting cut to the parameters whose values differ among the `settings` shown
    together (a parameter only some have differs only if those hold several values): what
    names a series among its neighbours, as a plotting library names a hue; empty when they
    agree.  The rest is said once (shared_label)."""
    vary = {k for k in {k for s in settings for k in s} if len({repr(s[k]) for s in settings if k in s}) > 1}
    return [{k: v for k, v in s.items() if k in vary} for s in settings]


def shared_label(settings: list[dict], sep: str = " ") -> str:
    """The parameters with one value across the `settings` shown (each once, in order)."""
    cut = differing(settings)
    seen: dict = {}
    for s, c in zip(settings, cut):
        seen.update({k: v for k, v in s.items() if k not in c and k not in seen})
    return params_label(seen, sep)


def names_among(items: list[tuple[str, dict]]) -> tuple[list[str], list[str]]:
    """For rows shown together, (test, parameters) each: each one's name among the rows of its
    test (what differs between them, "" when it is alone), and per test the parameters its rows
    share, "test: a=1 b=2", said once beside the table."""
    by_test: dict[str, list[int]] = {}
    for i, (test, _) in enumerate(items):
        by_test.setdefault(test, []).append(i)
    names = [""] * len(items)
    shared = []
    for test, idx in by_test.items():
        settings = [items[i][1] for i in idx]
        for i, cut in zip(idx, differing(settings)):
            names[i] = params_label(cut)
        same = shared_label(settings)
        if same:
            shared.append(f"{test}: {same}")
    return names, shared


def safe(text) -> str:
    """Control characters shown as escapes, so text from outside cannot drive the terminal."""
    s = "" if text is None else str(text)
    if s.isprintable():  # the common case, checked in C
        return s
    return "".join(c.encode("unicode_escape").decode() if unicodedata.category(c) == "Cc" else c for c in s)


def html_text(text) -> str:
    """Text from a run as it stands in HTML or SVG: escaped, its control characters shown as escapes."""
    return html.escape(safe(text))


COLUMNS = 100  # a table wider than this wraps its headers (the data never wraps)


def table(headers: list[str], rows: list[list[str]], align: str | None = None) -> str:
    """A plain text table: a header, a rule, columns right- ('r') or left-aligned ('l'), two
    spaces apart.  Written out rather than drawn with rich: rich takes about 3 ms a row, 26 s
    for a run of 10 series of 4096 sizes, and these tables must scale to the largest run."""
    align = align or "l" + "r" * (len(headers) - 1)
    rows = [_cells(r) for r in rows]
    widths = [max(map(len, col)) for col in zip(headers, *rows)]
    heads = [[h] for h in headers]
    if sum(widths) + 2 * (len(widths) - 1) > COLUMNS:  # headers wrap to their column's data
        data = [max((len(str(r[i])) for r in rows), default=0) for i in range(len(headers))]
        # each to its data's width, its longest word, and no narrower than 10 (a tower of words reads
        # badly); 1 at least (textwrap refuses 0: an empty header over an empty column)
        wide = [max(1, d, min(len(h), 10), *map(len, h.split())) for h, d in zip(headers, data)]
        heads = [textwrap.wrap(h, w) or [""] for h, w in zip(headers, wide)]
        widths = [max([d, *map(len, hd)]) for d, hd in zip(data, heads)]
    depth = max(map(len, heads))
    heads = [[""] * (depth - len(hd)) + hd for hd in heads]  # a wrapped header sits on the rule

    # one format a row, its columns padded by str.format in C (a large run's table is 10^5 rows)
    form = "  ".join(f"{{:{'>' if a == 'r' else '<'}{w}}}" for w, a in zip(widths, align))
    top = [form.format(*[hd[k] for hd in heads]).rstrip() for k in range(depth)]
    return "\n".join([*top, "  ".join("─" * w for w in widths), *(form.format(*r).rstrip() for r in rows)])


def _cells(row) -> list[str]:
    """A table row's cells as text, control characters shown as escapes (safe): a row whose
    text is all printable, nearly every one, is checked in one pass."""
    cells = ["" if c is None else c if type(c) is str else str(c) for c in row]
    return cells if "".join(cells).isprintable() else [safe(c) for c in cells]


def clock_text(c: ClockSummary | None) -> str | None:
    if c is None:
        return None
    over = f" (worst of {c.syncs} synchronisations)" if c.syncs > 1 else ""
    how = ""
    if c.method:
        shared = "every rank reads one counter" if c.domains == 1 else f"{c.domains} clock domains"
        forced = ", each rank as its own host (--clock-domain rank)" if c.clock_domain == "rank" else ""
        took = f", {num(c.sync_s)} s synchronising" if c.sync_s is not None else ""
        how = f"{c.method}: {shared}{forced}{took}; "
    text = f"{how}error bound up to {num(c.predicted_ns)} ns"
    if c.measured_ns is not None:
        text += f"; true error up to {num(c.measured_ns)} ns"
        if c.checked:
            text += f", within the bound for {c.within} of {c.checked} rank readings"
    return text + over


def collective_model_lines(facts: RunFacts) -> list[str]:
    """One line per collective model of a run: parameters with standard errors, R², the
    residual and the hold-out prediction; or why it was not fitted."""
    out = []
    for m in facts.collective_models:
        name = f"SCOPE {m.op} model ({params_label(m.setting) or 'default'})"
        if m.refused:
            out.append(f"{name}: not fitted: {m.refused}")
            continue
        pars = ", ".join(
            f"{k} = {num(v)} ± {num(m.se.get(k))}" + (" us/byte" if k.startswith("t_w") else " us")
            for k, v in m.params.items()
        )
        line = f"{name}: {pars}; R² {m.r2:.3f}" if m.r2 is not None else f"{name}: {pars}"
        line += f"; max |residual| {m.max_abs_residual * 100:.0f} % over {m.points}"
        if m.holdout_procs:
            line += f"; fitted without p = {m.holdout_procs}, predicts it within {m.holdout_error * 100:.0f} %"
        out.append(line)
    return out


def launches_text(run: Run) -> str:
    """What the intervals of this run cover."""
    if run.origin == "events":
        return "bounds: each event's error bound is the global clock's (docs/clock-library.md: what it covers)"
    if run.imported:
        return "intervals: none (an imported average has no distribution)"
    n = max((p.launches for p in run.points), default=1)
    if n >= 2:
        looser = sum(1 for p in run.points if p.replication and p.replication.relaxed)
        return (
            f"{n} launches: the median is the median of launch medians; its 95 % CI covers launch-to-launch "
            "variation (launches, then samples, resampled); 'next launch' is where another launch's median "
            "would fall (95 %)"
            + (
                f"; at {looser} of {len(run.points)} points a later launch stopped once its own error was "
                "small beside the spread its earlier launches showed"
                if looser
                else ""
            )
        )
    return "1 launch: intervals cover this launch's samples only"


def spread(n: int, most: int) -> list[int]:
    """At most `most` of n positions (0: all), evenly spread, the first and last among them."""
    if not most or n <= most:
        return list(range(n))
    if most == 1:
        return [0]
    return sorted({round(i * (n - 1) / (most - 1)) for i in range(most)})


def peak_text(f: SeriesFacts) -> str:
    """A series' peak rate as analysis gives it (MB/s at a size, or a compute rate), or "-"."""
    r = f.peak_rate
    if r is None:
        return "-"
    return f"{num(r.value)} {r.unit}" + (f" @ {size(r.size)}" if r.size else "")


def rinf_text(f: SeriesFacts) -> str:
    """A series' Hockney r_inf, MB/s, or why it is not a rate (beyond what its link carries)."""
    if not f.hockney:
        return "-"
    if f.rinf_beyond_link:
        return f"- (fit {num(f.hockney.rinf_MBps)} is above the link's {num(f.link_MBps)})"
    return num(f.hockney.rinf_MBps)


def simulated_text(sim: dict) -> str:
    """What a simulated run ran on, said alike by show and the report (context.sim)."""
    clocks = sim.get("host_clocks")
    drawn = (
        f"; each host's clock off SimGrid's by up to {num(clocks.get('max_offset_us'))} us and "
        f"{num(clocks.get('max_drift_ppm'))} ppm (seed {safe(clocks.get('seed'))})"
        if isinstance(clocks, dict)
        else ""
    )
    return (
        f"SimGrid {safe(sim.get('simgrid'))} SMPI on the platform {safe(sim.get('platform'))} (sha256 "
        f"{safe(str(sim.get('platform_sha256'))[:12])}), {safe(sim.get('ranks_per_host'))} rank a host: times are "
        f"the simulated clock's, not a machine's{drawn}{calibration_text(sim.get('calibration'))}"
    )


def calibration_text(cal) -> str:
    """Where a calibrated platform's values came from (run/simcal.py's comment), or ''."""
    if not isinstance(cal, dict):
        return ""
    parts = [
        f"{safe(s.get('test'))} of run {safe(s.get('run'))}"
        + (f" ({safe(s.get('ranges'))} ranges)" if s.get("ranges") else "")
        + (f" (o {s['o_us']:.3g} us)" if type(s.get("o_us")) in (int, float) else "")
        for s in cal.get("sources") or []
        if isinstance(s, dict)
    ]
    what = cal.get("what_if") if isinstance(cal.get("what_if"), dict) else {}
    changed = ", ".join(f"{safe(k)} {safe(v)}" for k, v in what.items() if k != "topology" or v != "flat")
    return (
        "; calibrated from " + (", ".join(parts) or "runs not named") + (f"; written for {changed}" if changed else "")
    )


def nodes_text(ctx) -> str | None:
    """The nodes a run ran on; a simulated run's are the platform's hosts, not the machine that
    ran the simulation (whose /proc the engine read: issue 55)."""
    if ctx.sim:
        hosts = safe(ctx.sim.get("hosts"))
        return f"{hosts} simulated hosts of the platform (the machine the simulation ran on is not described)"
    return cluster_text(ctx.nodes)


HOSTS_NAMED = 8  # hosts a run's header names before it counts the rest


def hosts_text(hosts: list[str]) -> str:
    """The hosts a run ran on, the first HOSTS_NAMED named: a header of 1,024 host names was
    one line of 10 kB (issue 55)."""
    if len(hosts) <= HOSTS_NAMED:
        return ", ".join(hosts)
    return f"{', '.join(hosts[:HOSTS_NAMED])} and {len(hosts) - HOSTS_NAMED:,} more ({len(hosts):,} hosts)"
