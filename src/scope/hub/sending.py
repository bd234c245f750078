"""Alerts sent (issue 71): each delivery to its rule's channel (a generic JSON webhook, a
Slack/Mattermost incoming webhook, e-mail through the site's SMTP relay), retried with back-off
until it goes through, and the thread in each hub worker that judges new runs and sends what is
due.  Every message is made by one formatter (`message`) from the alert's row; a failure is kept
on the delivery (shown on the alerts page), never raised into a push."""

from __future__ import annotations

import json
import logging
import os
import smtplib
import threading
import urllib.request
from datetime import datetime, timedelta, timezone
from email.message import EmailMessage

from sqlalchemy import exc, select, update

from scope import secrets
from scope.hub import alerts, db, series
from scope.hub.tables import alert_rules, as_dict, clusters, deliveries
from scope.hub.tables import alerts as alert_rows

log = logging.getLogger("scope.hub")
GIVE_UP = 16  # attempts: with back-off doubling to an hour, about 12 hours of trying
SEND_TIMEOUT = 10  # seconds a receiver has to answer


def retry_after(attempts: int) -> float:
    """Seconds before the next attempt: SCOPE_HUB_RETRY_S (default 30) doubled each failure, at
    most an hour."""
    base = float(os.environ.get("SCOPE_HUB_RETRY_S") or 30)
    return min(3600.0, base * 2 ** max(attempts - 1, 0))


MOST_LINES = 20  # alerts a message lists one by one; the rest counted (an upgrade may touch hundreds)


def _said(a: dict) -> tuple[str, str]:
    """One alert's step and its line: series, step with its interval, what changed, the event."""
    where = series.where(a)
    kind = "slower than its history allows" if a["kind"] == "alarm" else "a step, confirmed by the next run"
    changed = "; ".join(f"{k}: {v[0]} -> {v[1]}" for k, v in a["changed"].items()) or "nothing SCOPE records"
    step = f"{a['step'] * 100:+.1f} % [{a['lo'] * 100:+.1f}, {a['hi'] * 100:+.1f}]"
    line = f"{a['test']} ({', '.join(where)}) {step} from run {a['run_id']} ({kind}). What changed: {changed}."
    if a.get("event"):
        bound = f", announced as at most {a['event_bound'] * 100:g} % slower" if a.get("event_bound") else ""
        filed = "filed as expected" if a["status"] == "expected" else f"past what was announced{bound}"
        line += f" Announced: {a['event']} ({a['event_utc']}{bound}): {filed}."
    return step.split(" [")[0], line


def _doc(a: dict, url: str) -> dict:
    return {"alert": a["id"], "kind": a["kind"], "test": a["test"], "params": a["params"], "size": a["size"],
            "ranks": a["ranks"], "step": a["step"], "step_ci": [a["lo"], a["hi"]], "run": a["run_id"],
            "changed": a["changed"], "event": a.get("event"), "status": a["status"], "url": url}  # fmt: skip


def message(rows: list[dict], cluster: str, base_url: str) -> dict:
    """A push's alerts as every channel says them, one message for the push whatever it raised:
    a subject, the text (a line an alert, the first MOST_LINES), and the JSON a webhook gets."""
    a = rows[0]
    url = f"{base_url}/runs/{a['raised_by']}"
    said = [_said(r) for r in rows]
    if len(rows) == 1:
        subject = f"SCOPE: {cluster} {a['test']} {said[0][0]} at run {a['run_id']}"
        text = f"{cluster}: {said[0][1]} {base_url}/runs/{a['run_id']}"
    else:
        worst = max(rows, key=lambda r: r["step"])
        subject = (f"SCOPE: {cluster}: {len(rows)} series changed at run {a['raised_by']} "
                   f"(worst {worst['test']} {worst['step'] * 100:+.1f} %)")  # fmt: skip
        lines = [f"- {line}" for _, line in said[:MOST_LINES]]
        if len(rows) > MOST_LINES:
            lines.append(f"- and {len(rows) - MOST_LINES} more: {base_url}/clusters/{cluster}/alerts")
        text = f"{cluster}: run {a['raised_by']} raised {len(rows)} alerts. {url}\n" + "\n".join(lines)
    doc = {"cluster": cluster, "raised_by": a["raised_by"], "url": url, "text": text,
           "alerts": [_doc(r, f"{base_url}/runs/{r['run_id']}") for r in rows]}  # fmt: skip
    return {"subject": subject, "text": text, "json": doc}


def expand(target: str) -> str:
    """A target's ${VAR}s from the hub's environment (a secret is never stored, only named)."""

    def one(m):
        value = os.environ.get(m.group(1))
        if value is None:
            raise RuntimeError(f"${{{m.group(1)}}} is not set in the hub's environment")
        return value

    return alerts.VAR.sub(one, target)


def hide(text: str, target: str) -> str:
    """An error's text with each ${VAR}'s value (a secret, perhaps) named again as ${VAR}."""
    for name in alerts.VAR.findall(target):
        value = os.environ.get(name)
        if value:
            text = text.replace(value, "${" + name + "}")
    return text


def send(channel: str, target: str, msg: dict) -> None:
    """One delivery; raises on any failure (kept on the delivery, retried)."""
    if channel == "email":
        relay = os.environ.get("SCOPE_HUB_SMTP") or ""
        if not relay:
            raise RuntimeError("no SMTP relay: start the hub with SCOPE_HUB_SMTP=HOST:PORT")
        host, _, port = relay.rpartition(":")
        mail = EmailMessage()
        mail["Subject"], mail["To"] = msg["subject"], target
        mail["From"] = os.environ.get("SCOPE_HUB_MAIL_FROM") or "scope-hub@localhost"
        mail.set_content(msg["text"])
        with smtplib.SMTP(host or relay, int(port or 25), timeout=SEND_TIMEOUT) as smtp:
            smtp.send_message(mail)
        return
    body = {"text": msg["text"]} if channel == "slack" else msg["json"]
    req = urllib.request.Request(expand(target), json.dumps(body).encode(), {"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=SEND_TIMEOUT) as r:  # noqa: S310 - http(s) only (alerts.check_target)
        if not 200 <= r.status < 300:
            raise RuntimeError(f"the receiver answered {r.status}")


def _utc(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def due(eng, now: datetime, most: int = 50) -> list[dict]:
    """Deliveries whose time has come, claimed for this worker (their next time moved on, so
    another worker looking at once leaves them)."""
    q = (
        select(deliveries.c.id, deliveries.c.attempts, deliveries.c.next_utc, deliveries.c.alert_id,
               deliveries.c.rule_id, alert_rules.c.channel, alert_rules.c.target, alert_rules.c.quiet,
               alert_rows.c.raised_by, alert_rows.c.cluster_id)
        .join(alert_rules, alert_rules.c.id == deliveries.c.rule_id)
        .join(alert_rows, alert_rows.c.id == deliveries.c.alert_id)
        .where(deliveries.c.delivered_utc.is_(None), deliveries.c.next_utc <= _utc(now),
               deliveries.c.attempts < GIVE_UP, alert_rules.c.removed_utc.is_(None))
        .order_by(deliveries.c.id)
        .limit(most)
    )  # fmt: skip
    claimed = []
    with eng.connect() as conn:
        rows = [as_dict(r) for r in conn.execute(q)]
    for r in rows:
        ends = alerts.quiet_until(r["quiet"], now)
        lease = _utc(ends if ends else now + timedelta(seconds=2 * SEND_TIMEOUT + 5))
        with db.writing(eng) as conn:
            mine = update(deliveries).where(deliveries.c.id == r["id"], deliveries.c.next_utc == r["next_utc"])
            if conn.execute(mine.values(next_utc=lease)).rowcount == 1 and not ends:
                claimed.append(r)  # in its rule's quiet hours: left until they end, not tried
    return claimed


def deliver(eng, base_url: str, now: datetime | None = None) -> int:
    """Every delivery that is due sent, one message a rule and a push (an upgrade that moves 200
    series sends one, not 200); returns how many alerts went through."""
    now = now or datetime.now(timezone.utc)
    groups: dict[tuple[int, int], list[dict]] = {}
    for d in due(eng, now, most=500):
        groups.setdefault((d["rule_id"], d["raised_by"]), []).append(d)
    sent = 0
    for ds in groups.values():
        d = ds[0]
        with eng.connect() as conn:
            name = conn.execute(select(clusters.c.name).where(clusters.c.id == d["cluster_id"])).scalar()
            rows = alerts.listed(conn, d["cluster_id"], ids=[x["alert_id"] for x in ds])
        rows.sort(key=lambda a: -a["step"])  # the worst first
        try:
            send(d["channel"], d["target"], message(rows, name, base_url))
            values = {"delivered_utc": _utc(datetime.now(timezone.utc)), "attempts": d["attempts"] + 1,
                      "last_error": None}  # fmt: skip
            sent += len(ds)
        except Exception as e:  # noqa: BLE001 - any failure of a receiver is kept and retried
            why = hide(secrets.scrubber().text(f"{type(e).__name__}: {e}"), d["target"])[:300]
            after = now + timedelta(seconds=retry_after(d["attempts"] + 1))
            values = {"attempts": d["attempts"] + 1, "next_utc": _utc(after), "last_error": why}
            log.warning("scope hub: %d alerts to %s not delivered: %s", len(ds), d["channel"], why)
        with db.writing(eng) as conn:
            conn.execute(update(deliveries).where(deliveries.c.id.in_([x["id"] for x in ds])).values(**values))
    return sent


def judge_new(eng) -> int:
    """Every run not yet judged, judged (each claimed by one worker); returns alerts made."""
    made = 0
    with eng.connect() as conn:
        ids = alerts.unjudged(conn)
    for rid in ids:
        with db.writing(eng) as conn:
            if not alerts.claim(conn, rid):
                continue
        with eng.connect() as conn:
            found = alerts.judge(conn, rid)
        if found:
            try:
                with db.writing(eng) as conn:
                    made += len(alerts.record(conn, found, db.now_utc()))
            except exc.IntegrityError:
                pass  # another worker recorded the same change
    return made


class Alerter(threading.Thread):
    """A hub worker's alert thread: wakes when a push is stored (`poke`) or every `every`
    seconds, judges new runs and sends what is due.  It never touches a push's request."""

    def __init__(self, eng, base_url: str, every: float | None = None):
        super().__init__(name="scope-hub-alerts", daemon=True)
        self.eng, self.base_url = eng, base_url
        self.every = every if every is not None else float(os.environ.get("SCOPE_HUB_ALERT_POLL_S") or 5)
        self.wake = threading.Event()

    def poke(self) -> None:
        self.wake.set()

    def run(self) -> None:
        while True:
            self.wake.wait(self.every)
            self.wake.clear()
            try:
                judge_new(self.eng)
                deliver(self.eng, self.base_url)
            except Exception:  # noqa: BLE001 - the thread lives on: the next round tries again
                log.exception("scope hub: judging or sending alerts failed")
