"""Alerts (issue 71): a pushed run judged against the history of every series it measured, and
what it raises recorded (a thin row: the series, the change's run, its size and interval, what
changed) with one delivery a rule that asks for it.  Judging runs after the push is stored and
answered (hub/sending.py's thread, or the next one to look), never inside it: a push is stored at
its usual speed whatever the detector or a receiver does.

A rule's target may hold a secret (a Slack webhook's path, a password) only as ${VAR}, read from
the hub's environment when it sends: the database holds no secret (secrets.py's rule)."""

from __future__ import annotations

import json
import re
import urllib.parse
from datetime import timedelta

from sqlalchemy import select, update

from scope import secrets
from scope.analysis.history import raised_by
from scope.analysis.provenance import differ
from scope.errors import USAGE, ScopeError
from scope.hub import documents, events, series
from scope.hub.runs import as_series
from scope.hub.tables import alert_rules, alerts, as_dict, clusters, deliveries, observations, runs

CHANNELS = ("webhook", "slack", "email")
DEFAULT_SLOWDOWN = 0.05  # a cluster without rules still records what is 5 % slower
STATUSES = ("open", "acknowledged", "expected", "false")
ADDRESS = re.compile(r"[^@\s<>\"',;]{1,64}@[A-Za-z0-9.-]{1,253}")
SECRET_HOSTS = ("hooks.slack.com",)  # the whole path of such a webhook is its credential
VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]{0,63})\}")
QUIET = re.compile(documents.QUIET)


def check_target(channel: str, target: str) -> str:
    """A rule's target, refused (one line, the fix named) when it is not an address of its kind
    or when it holds a secret in the clear."""
    if channel == "email":
        if not ADDRESS.fullmatch(target):
            raise ScopeError(f"{target[:80]!r} is not an e-mail address", "e.g. --email hpc-ops@example.org", USAGE)
        return target
    shown = VAR.sub("x", target)  # a ${VAR} stands for what the hub's environment holds
    u = urllib.parse.urlsplit(shown)
    if u.scheme not in ("http", "https") or not u.hostname or any(c.isspace() for c in target):
        raise ScopeError(
            f"{target[:80]!r} is not an http(s) address", "e.g. --webhook https://ci.example.org/hook", USAGE
        )
    clear = target.split("${")[0]
    held = u.password or any(secrets.credential(k) for k, _ in urllib.parse.parse_qsl(u.query))
    if held or (u.hostname in SECRET_HOSTS and "${" not in target) or secrets.URL_PASSWORD.search(clear):
        raise ScopeError(
            "this address holds a secret, and the hub stores no secret",
            "give that part as ${VAR} (https://hooks.slack.com/services/${SLACK_HOOK}), VAR set where the hub runs",
            USAGE,
        )
    return target


def check_quiet(quiet: str | None) -> str | None:
    """Quiet hours as a rule keeps them ("22:00-06:00", UTC; may span midnight), or None."""
    if quiet is None:
        return None
    m = QUIET.fullmatch(str(quiet).strip())
    if not m or m.group(1, 2) == m.group(3, 4):
        raise ScopeError(f"{str(quiet)[:40]!r} is not quiet hours", "HH:MM-HH:MM in UTC, e.g. --quiet 22:00-06:00",
                         USAGE)  # fmt: skip
    return m.group(0)


def quiet_until(quiet: str | None, now) -> object | None:
    """When quiet hours holding `now` (a UTC datetime) end, or None when `now` is outside them."""
    if not quiet:
        return None
    a, b = (int(x[:2]) * 60 + int(x[3:]) for x in quiet.split("-"))
    m = now.hour * 60 + now.minute
    inside = a <= m < b if a < b else (m >= a or m < b)
    if not inside:
        return None
    wait = (b - m) % (24 * 60)
    return (now.replace(second=0, microsecond=0) + timedelta(minutes=wait)) if wait else None


def add_rule(conn, cluster_id: int, channel: str, target: str, max_slowdown: float, tests, now: str,
             quiet: str | None = None) -> int:  # fmt: skip
    row = {"cluster_id": cluster_id, "channel": channel, "target": check_target(channel, target),
           "max_slowdown": max_slowdown, "tests": json.dumps(list(tests)) if tests else None,
           "created_utc": now, "quiet": check_quiet(quiet)}  # fmt: skip
    return int(conn.execute(alert_rules.insert().values(**row)).inserted_primary_key[0])


def rules(conn, cluster_id: int | None = None) -> list[dict]:
    q = select(alert_rules, clusters.c.name.label("cluster")).join(clusters, clusters.c.id == alert_rules.c.cluster_id)
    q = q.where(alert_rules.c.removed_utc.is_(None))
    if cluster_id is not None:
        q = q.where(alert_rules.c.cluster_id == cluster_id)
    out = [as_dict(r) for r in conn.execute(q.order_by(alert_rules.c.id))]
    for r in out:
        r["tests"] = json.loads(r["tests"]) if r["tests"] else None
    return out


def remove_rule(conn, rule_id: int, now: str) -> bool:
    q = update(alert_rules).where(alert_rules.c.id == rule_id, alert_rules.c.removed_utc.is_(None))
    return conn.execute(q.values(removed_utc=now)).rowcount == 1


def unjudged(conn, most: int = 20) -> list[int]:
    q = select(runs.c.id).where(runs.c.judged.is_(None)).order_by(runs.c.id).limit(most)
    return [r for (r,) in conn.execute(q)]


def claim(conn, run_id: int) -> bool:
    """This worker judges the run (another that asks at the same time finds it taken)."""
    return conn.execute(update(runs).where(runs.c.id == run_id, runs.c.judged.is_(None)).values(judged=1)).rowcount == 1


def _wants(rule: dict, test: str, step: float) -> bool:
    return step > rule["max_slowdown"] and (not rule["tests"] or any(test.startswith(t) for t in rule["tests"]))


def judge(conn, run_id: int) -> list[dict]:
    """The changes run `run_id` raises in the series it measured (analysis/history.raised_by,
    past the least slowdown a rule of its cluster asks for), as alert rows to record."""
    cid = conn.execute(select(runs.c.cluster_id).where(runs.c.id == run_id)).scalar()
    if cid is None:
        return []
    ids = [i for (i,) in conn.execute(select(observations.c.series_id).where(observations.c.run_id == run_id))]
    kept = []
    for sid in ids:  # each series' points, not its runs' provenance: read below for the changes only
        head, rows = series.history(conn, cid, sid, provenance=False)
        if len(rows) >= 4:
            kept.append((sid, as_series(head, rows)))
    least = min([r["max_slowdown"] for r in rules(conn, cid)] or [DEFAULT_SLOWDOWN])
    by_series = {id(s): sid for sid, s in kept}
    raised = raised_by([s for _, s in kept], run_id, least)
    needed = {r for c in raised for r in (c.series.obs[c.index - 1].run, c.run)}
    provenance = dict(conn.execute(select(runs.c.id, runs.c.provenance).where(runs.c.id.in_(needed))).all())
    known = events.listed(conn, cid) if raised else []
    out = []
    for c in raised:
        prior = c.series.obs[c.index - 1]
        before = json.loads(provenance.get(prior.run) or "{}")
        after = json.loads(provenance.get(c.run) or "{}")
        changed = {k: list(v) for k, v in differ(before, after).items()}
        announced = events.between(known, prior.started, c.series.obs[c.index].started)
        excusing = [e for e in announced if events.excuses(e, c.step)]
        event = (excusing or announced or [None])[-1]  # what the site said happened between the two runs
        out.append({"cluster_id": cid, "series_id": by_series[id(c.series)], "run_id": c.run, "raised_by": run_id,
                    "kind": c.kind, "step": c.step, "lo": c.step_lo, "hi": c.step_hi, "changed": json.dumps(changed),
                    "test": c.series.test, "event_id": event and event["id"], "expected": bool(excusing)})  # fmt: skip
    return out


def record(conn, found: list[dict], now: str) -> list[int]:
    """Alerts recorded, each with a delivery a live rule that wants it; a step confirming an
    alarm already recorded turns that alert into a step (no second delivery).  Returns the
    ids of the alerts made."""
    made, live = [], {}  # a cluster's rules, read once however many alerts it raised
    for a in found:
        test, expected = a.pop("test"), a.pop("expected")
        old = conn.execute(
            select(alerts.c.id).where(alerts.c.series_id == a["series_id"], alerts.c.run_id == a["run_id"])
        ).scalar()
        if old is not None:
            conn.execute(update(alerts).where(alerts.c.id == old).values(kind=a["kind"], step=a["step"], lo=a["lo"],
                                                                         hi=a["hi"], updated_utc=now))  # fmt: skip
            continue
        status = "expected" if expected else "open"  # an announced change within its bound pages nobody
        aid = int(conn.execute(alerts.insert().values(**a, status=status, created_utc=now,
                                                      updated_utc=now)).inserted_primary_key[0])  # fmt: skip
        made.append(aid)
        if a["cluster_id"] not in live:
            live[a["cluster_id"]] = rules(conn, a["cluster_id"])
        for r in [] if expected else live[a["cluster_id"]]:
            if _wants(r, test, a["step"]):
                conn.execute(deliveries.insert().values(alert_id=aid, rule_id=r["id"], attempts=0, next_utc=now))
    return made


def listed(conn, cluster_id: int, most: int = 200, ids: list[int] | None = None) -> list[dict]:
    """A cluster's alerts (or those of `ids`), newest first, each with its series and its
    deliveries' states."""
    s, e = series.series, events.events
    q = (
        select(alerts, s.c.test, s.c.params, s.c.size, s.c.ranks, s.c.kind.label("series_kind"),
               e.c.text.label("event"), e.c.at_utc.label("event_utc"), e.c.bound.label("event_bound"))
        .join(s, s.c.id == alerts.c.series_id)
        .outerjoin(e, e.c.id == alerts.c.event_id)
        .where(alerts.c.cluster_id == cluster_id)
    )  # fmt: skip
    if ids is not None:
        q, most = q.where(alerts.c.id.in_(ids)), len(ids)
    out = [as_dict(r) for r in conn.execute(q.order_by(alerts.c.id.desc()).limit(most))]
    d = (
        select(
            deliveries.c.alert_id,
            deliveries.c.rule_id,
            deliveries.c.attempts,
            deliveries.c.delivered_utc,
            deliveries.c.last_error,
            alert_rules.c.channel,
        )
        .join(alert_rules, alert_rules.c.id == deliveries.c.rule_id)
        .where(deliveries.c.alert_id.in_([a["id"] for a in out]))
        .order_by(deliveries.c.id)
    )  # fmt: skip: the deliveries of every alert listed, read once
    sent: dict[int, list[dict]] = {}
    for r in conn.execute(d) if out else ():
        row = as_dict(r)
        sent.setdefault(row.pop("alert_id"), []).append(row)
    for a in out:
        a["params"] = series.params_of(a["params"])
        a["changed"] = json.loads(a["changed"] or "{}")
        a["deliveries"] = sent.get(a["id"], [])
    return out


def precision(rows: list[dict]) -> dict:
    """What triage says of the detector: alerts confirmed (acknowledged), false, expected (a
    planned change) and open; its precision the confirmed share of those judged either way."""
    n = {k: sum(1 for a in rows if a["status"] == k) for k in STATUSES}
    judged = n["acknowledged"] + n["false"]
    return {**n, "precision": n["acknowledged"] / judged if judged else None}


def by_rule(rows: list[dict], live: list[dict]) -> None:
    """Each rule's triage (into rule["triage"]): precision among the alerts its threshold and
    tests take, so a site sees what each detector setting would have sent it, and how often
    rightly."""
    for r in live:
        r["triage"] = precision([a for a in rows if _wants(r, a["test"], a["step"])])


def triage(conn, alert_id: int, cluster_id: int | None, status: str, note: str | None, now: str) -> bool:
    """An alert's status set (`cluster_id`: only if it is that cluster's; None: an admin's, any)."""
    q = update(alerts).where(alerts.c.id == alert_id)
    if cluster_id is not None:
        q = q.where(alerts.c.cluster_id == cluster_id)
    return conn.execute(q.values(status=status, note=note, updated_utc=now)).rowcount == 1
