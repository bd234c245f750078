"""A program's own events on the global clock (issue 57): the terminal's table, and the
report's figure of every rank on one time axis with each event's error bound, and below it
the bound against each event's true error where the truth is known.  They draw the facts of
analysis/timeline.py and the events as stored; they compute nothing."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator

import msgspec
import numpy as np
from markupsafe import Markup

from scope.analysis.facts import RunFacts
from scope.analysis.timeline import RankTimeline, TimelineFacts
from scope.model import RankEvents
from scope.views.fmt import safe, spread
from scope.views.plots import pyplot, svg_img

RANKS_DRAWN = 64  # ranks a figure draws at most, evenly spread
EVENTS_DRAWN = 4096  # events a rank's row draws at most, evenly spread
ROWS_SHOWN = 64  # ranks the terminal's table lists at most


def about(t: TimelineFacts) -> str:
    domains = "a clock domain per rank" if t.clock_domain == "rank" else "a clock domain per host"
    return (
        f"{t.events:,} events of {len(t.ranks):,} ranks over {t.span_ns / 1e3:,.1f} µs "
        f"(timer {t.timer}, clock {t.method}, {domains})"
    )


def truth_text(t: TimelineFacts) -> str:
    if not t.truth_known:
        return "true error: not known (the ranks do not read one counter; each event's bound is the clock's claim)"
    planted = ", offsets and drifts planted by SCOPE_TEST_CLOCK" if t.planted else ""
    return (
        f"true error within its bound: {t.within:,} of {t.events:,} events (every rank reads one counter{planted}; "
        f"worst true error {t.max_error_ns or 0:,.1f} ns, bounds up to {t.max_bound_ns:,.1f} ns)"
    )


def timeline_lines(t: TimelineFacts | None) -> list[str]:
    """show's timeline: what it is, its truth, its names, and the table of ranks."""
    if t is None:
        return []
    out = ["", f"Timeline: {about(t)}", f"  {truth_text(t)}"]
    out.append("  events by name: " + ", ".join(f"{safe(n)} ({t.counts[n]:,})" for n in t.names))
    return out + timeline_table(t)


def timeline_table(t: TimelineFacts) -> list[str]:
    """A line a rank (at most ROWS_SHOWN, evenly spread): its events, largest bound and true error."""
    out = [f"  {'rank':>6}  {'host':<16}  {'clock of':>8}  {'depth':>5}  {'events':>8}  {'max bound (ns)':>14}"
               f"  {'max true error (ns)':>19}  {'within':>13}"]  # fmt: skip
    shown = spread(len(t.ranks), ROWS_SHOWN)
    for i in shown:
        r = t.ranks[i]
        bound = f"{r.max_bound_ns:,.1f}" if r.max_bound_ns is not None else "-"
        err = f"{r.max_error_ns:,.1f}" if r.max_error_ns is not None else "-"
        within = f"{r.within:,}/{r.events:,}" if r.within is not None else "-"
        out.append(f"  {r.rank:>6}  {safe(r.host)[:16]:<16}  {r.clock_of:>8}  {r.depth:>5}  {r.events:>8,}  {bound:>14}"
                   f"  {err:>19}  {within:>13}")  # fmt: skip
    if len(shown) < len(t.ranks):
        out.append(f"  ({len(shown)} of {len(t.ranks):,} ranks listed, evenly spread)")
    return out


def timeline_figure(t: TimelineFacts, ranks: list[RankEvents]) -> str | None:
    """Every rank's events on one axis (µs from the first event), each with its bound as an
    error bar; below, each event's bound and, where known, its true error (ns)."""
    if not t.events:
        return None
    plt = pyplot()
    two = t.truth_known
    fig, axes = plt.subplots(2 if two else 1, 1, figsize=(11, 5.4 if two else 3.2), squeeze=False)
    fig.subplots_adjust(hspace=0.55)
    ax = axes[0][0]
    rows = spread(len(ranks), RANKS_DRAWN)
    # each drawn rank's events (at most EVENTS_DRAWN, evenly spread) and their times, for both panels
    picks = {i: np.asarray(spread(len(ranks[i]), EVENTS_DRAWN), dtype=np.int64) for i in rows}
    xs = {i: (np.frombuffer(ranks[i].t_ns)[picks[i]] - t.t0_ns) / 1e3 for i in rows}
    colour = {n: plt.cm.tab10(i % 10) for i, n in enumerate(t.names)}
    seen: set[str] = set()
    for y, i in enumerate(rows):
        r, pick, x = ranks[i], picks[i], xs[i]
        b = np.frombuffer(r.bound_ns)[pick] / 1e3
        which = np.frombuffer(r.name_of, dtype=np.int64)[pick]
        for k, name in enumerate(r.names):
            m = which == k
            if not m.any():
                continue
            ax.errorbar(x[m], np.full(int(m.sum()), y), xerr=b[m], fmt="|", ms=9, color=colour[name], elinewidth=2,
                        capsize=2, label=None if name in seen else name[:24])  # fmt: skip
            seen.add(name)
    ax.set_ylim(-0.5, len(rows) - 0.5)
    ax.set_yticks(range(len(rows)), [str(ranks[i].rank) for i in rows], fontsize=7 if len(rows) > 16 else None)
    ax.set_ylabel("rank" if len(rows) == len(ranks) else f"rank ({len(rows)} of {len(ranks):,})")
    ax.set_xlabel("global time from the first event (µs); bars: each event's error bound")
    ax.set_title(f"Timeline: {about(t)}", fontsize=9)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    if two:
        low = axes[1][0]
        for i in rows:
            r, row, pick, x = ranks[i], t.ranks[i], picks[i], xs[i]
            line = low.plot(x, np.frombuffer(r.bound_ns)[pick], "-", lw=1, label=f"rank {r.rank} bound")[0]
            if row.errors_ns is not None:
                low.plot(x, row.errors_ns[pick], ".", ms=3, color=line.get_color(), label=f"rank {r.rank} true error")
        low.set_xlabel("global time from the first event (µs)")
        low.set_ylabel("ns")
        low.set_title("each event's error bound (line) and its true error (dots)", fontsize=9)
        if len(rows) <= 8:
            low.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return svg_img(fig, f"timeline of {len(ranks)} ranks' events with their error bounds")


EVENT_COLUMNS = ["run", "rank", "host", "seq", "name", "t_ns", "t_from_first_us", "bound_ns", "true_error_ns", "within"]


def _rank_events(t: TimelineFacts, r: RankEvents, row: RankTimeline) -> Iterator[dict]:
    """One rank's events in the order stamped, with each one's true error where known."""
    for i in range(len(r)):
        err = float(row.errors_ns[i]) if row.errors_ns is not None else None
        yield {
            "rank": r.rank,
            "host": r.header.host,
            "seq": i,
            "name": r.names[r.name_of[i]],
            "t_ns": r.t_ns[i],
            "t_from_first_us": (r.t_ns[i] - t.t0_ns) / 1e3,
            "bound_ns": r.bound_ns[i],
            "true_error_ns": err,
            "within": None if err is None else err <= r.bound_ns[i],
        }


def events_csv(run_id: int, t: TimelineFacts, ranks: list[RankEvents]) -> str:
    """`scope export RUN --format csv` of an events run: an event a row, rank by rank."""
    out = io.StringIO()
    w = csv.DictWriter(out, fieldnames=EVENT_COLUMNS, lineterminator="\n")
    w.writeheader()
    for r, row in zip(ranks, t.ranks):
        for e in _rank_events(t, r, row):
            e["true_error_ns"] = "" if e["true_error_ns"] is None else e["true_error_ns"]
            e["within"] = "" if e["within"] is None else int(e["within"])
            w.writerow({"run": run_id, **e})
    return out.getvalue()


def timeline_doc(t: TimelineFacts | None, ranks: list[RankEvents]) -> dict | None:
    """The JSON export's `timeline` (docs/json.md): the figures show prints, and per rank its
    clock's header and its events."""
    if t is None:
        return None
    return {
        "events": t.events,
        "span_ns": t.span_ns,
        "t0_ns": t.t0_ns,
        "truth_known": t.truth_known,
        "within": t.within,
        "max_error_ns": t.max_error_ns,
        "max_bound_ns": t.max_bound_ns,
        "counts": t.counts,
        "ranks": (  # consumed as written (views/jsonout.py streams it): never a list of every event
            {"header": msgspec.to_builtins(r.header), "events": _rank_events(t, r, row)}
            for r, row in zip(ranks, t.ranks)
        ),
    }


def report_blocks(facts: list[RunFacts]) -> list[dict]:
    """A program's events (issue 57): the figure of its ranks on one axis, and the terminal's table."""
    out = []
    for fa in facts:
        t = fa.timeline
        if t is None:
            continue
        fig = timeline_figure(t, fa.run.timeline)
        out.append(
            {
                "run": fa.run.id,
                "about": about(t),
                "truth": truth_text(t),
                "figure": Markup(fig) if fig else "",
                "table": "\n".join(timeline_table(t)),
            }
        )
    return out
