"""The global clock of a run, summarised from its `clock` records: how it was synchronised
(method, clock domains), what that cost, its error bound, and, where the truth is known
(every rank on one kernel), how often the bound held."""

from __future__ import annotations

from dataclasses import dataclass

from scope.model import Event


@dataclass
class ClockSummary:
    syncs: int
    predicted_ns: float | None  # the worst bound of any synchronisation or end check, worst rank
    measured_ns: float | None  # the worst true error, where the truth is known (else None)
    method: str | None = None  # tree | linear (None: records before clock domains)
    clock_domain: str | None = None  # host | rank
    domains: int | None = None  # clock domains: 1 where every rank reads one counter
    sync_s: float | None = None  # wall seconds of every synchronisation together
    checked: int = 0  # rank readings against the truth (a rank at each sync and at the end)
    within: int = 0  # of them, with the true error within the bound


def clock_summary(events: list[Event]) -> ClockSummary | None:
    """The worst of every synchronisation in the run, not only the last; the end-of-launch
    readings count against the bound as the synchronisations' do."""
    recs = [e.record for e in events if e.type == "clock"]
    if not recs:
        return None
    syncs = [r for r in recs if r.get("at", "sync") == "sync"]
    predicted = [r["max_predicted_error_ns"] for r in recs if r.get("max_predicted_error_ns") is not None]
    # before clock domains the truth was recorded on one host only, and said so by one_host
    known = [r for r in recs if r.get("truth") or (r.get("one_host") and "truth" not in r and "at" not in r)]
    measured = [r["max_error_ns"] for r in known if r.get("max_error_ns") is not None]
    checked = within = 0
    for r in known:
        for x in r.get("ranks", []):
            if x.get("error_ns") is not None and x.get("predicted_error_ns") is not None:
                checked += 1
                within += x["error_ns"] <= x["predicted_error_ns"]
    last = recs[-1]
    spent = [r["sync_s"] for r in syncs if r.get("sync_s") is not None]
    return ClockSummary(
        syncs=len(syncs),
        predicted_ns=max(predicted, default=None),
        measured_ns=max(measured, default=None),
        method=last.get("method") if "clock_domain" in last else None,
        clock_domain=last.get("clock_domain"),
        domains=len(last["domains"]) if last.get("domains") else None,
        sync_s=sum(spent) if spent else None,
        checked=checked,
        within=within,
    )
