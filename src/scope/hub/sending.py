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


def message(a: dict, cluster: str, base_url: str) -> dict:
    """An alert as every channel says it: a subject, a line of text, and the JSON a webhook gets."""
    where = series.where(a)
    kind = "slower than its history allows" if a["kind"] == "alarm" else "a step, confirmed by the next run"
    changed = "; ".join(f"{k}: {v[0]} -> {v[1]}" for k, v in a["changed"].items()) or "nothing SCOPE records"
    step = f"{a['step'] * 100:+.1f} % [{a['lo'] * 100:+.1f}, {a['hi'] * 100:+.1f}]"
    url = f"{base_url}/runs/{a['run_id']}"
    subject = f"SCOPE: {cluster} {a['test']} {step.split(' [')[0]} at run {a['run_id']}"
    text = (f"{cluster}: {a['test']} ({', '.join(where)}) {step} from run {a['run_id']} ({kind}). "
            f"What changed: {changed}. {url}")  # fmt: skip
    doc = {"cluster": cluster, "alert": a["id"], "kind": a["kind"], "test": a["test"], "params": a["params"],
           "size": a["size"], "ranks": a["ranks"], "step": a["step"], "step_ci": [a["lo"], a["hi"]],
           "run": a["run_id"], "raised_by": a["raised_by"], "changed": a["changed"], "url": url,
           "text": text}  # fmt: skip
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
               alert_rules.c.channel, alert_rules.c.target)
        .join(alert_rules, alert_rules.c.id == deliveries.c.rule_id)
        .where(deliveries.c.delivered_utc.is_(None), deliveries.c.next_utc <= _utc(now),
               deliveries.c.attempts < GIVE_UP, alert_rules.c.removed_utc.is_(None))
        .order_by(deliveries.c.id)
        .limit(most)
    )  # fmt: skip
    claimed = []
    with eng.connect() as conn:
        rows = [as_dict(r) for r in conn.execute(q)]
    for r in rows:
        lease = _utc(now + timedelta(seconds=2 * SEND_TIMEOUT + 5))
        with db.writing(eng) as conn:
            mine = update(deliveries).where(deliveries.c.id == r["id"], deliveries.c.next_utc == r["next_utc"])
            if conn.execute(mine.values(next_utc=lease)).rowcount == 1:
                claimed.append(r)
    return claimed


def deliver(eng, base_url: str, now: datetime | None = None) -> int:
    """Every delivery that is due sent once; returns how many went through."""
    now = now or datetime.now(timezone.utc)
    sent = 0
    for d in due(eng, now):
        with eng.connect() as conn:
            cid, name = conn.execute(
                select(clusters.c.id, clusters.c.name)
                .join(alert_rows, alert_rows.c.cluster_id == clusters.c.id)
                .where(alert_rows.c.id == d["alert_id"])
            ).first()
            (a,) = alerts.listed(conn, cid, alert_id=d["alert_id"])
        try:
            send(d["channel"], d["target"], message(a, name, base_url))
            values = {"delivered_utc": _utc(datetime.now(timezone.utc)), "attempts": d["attempts"] + 1,
                      "last_error": None}  # fmt: skip
            sent += 1
        except Exception as e:  # noqa: BLE001 - any failure of a receiver is kept and retried
            why = hide(secrets.scrubber().text(f"{type(e).__name__}: {e}"), d["target"])[:300]
            after = now + timedelta(seconds=retry_after(d["attempts"] + 1))
            values = {"attempts": d["attempts"] + 1, "next_utc": _utc(after), "last_error": why}
            log.warning("scope hub: alert %d to %s not delivered: %s", d["alert_id"], d["channel"], why)
        with db.writing(eng) as conn:
            conn.execute(update(deliveries).where(deliveries.c.id == d["id"]).values(**values))
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
