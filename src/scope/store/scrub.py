"""Migration 13 of the local store (issue 67): what runs stored before secrets.py's rule hold of
the environment and of free text, brought under it, in place: a context's credentials
redacted and its machine-only variables (the watchdog's pid, the store's path) dropped, the
recorded command, the reason and stderr of a run, and every event's text scrubbed.

A step of the migrations, so it runs once per store, inside their one transaction.  Only rows
it changes are written."""

from __future__ import annotations

import json
import sqlite3

from scope import secrets


def _json(text: str | None, clean) -> str | None:
    if not text:
        return text
    try:
        value = json.loads(text)
    except ValueError:
        return secrets.scrubber().text(text)  # not JSON (written by another tool): scrubbed as text
    return json.dumps(clean(value))


def scrub_store(db: sqlite3.Connection) -> None:
    scrub = secrets.scrubber()  # with the credentials of the migrating process's environment
    rows = db.execute("SELECT id, command, context, reason, stderr FROM runs").fetchall()
    for rid, command, context, reason, stderr in rows:
        new = (
            _json(command, lambda v: scrub.argv(v) if isinstance(v, list) else scrub.walk(v)),
            _json(context, lambda v: secrets.context(v, scrub) if isinstance(v, dict) else scrub.walk(v)),
            reason and scrub.text(reason),
            stderr and scrub.text(stderr),
        )
        if new != (command, context, reason, stderr):
            db.execute("UPDATE runs SET command = ?, context = ?, reason = ?, stderr = ? WHERE id = ?", (*new, rid))
    for eid, message, hint, record in db.execute("SELECT id, message, hint, record FROM events").fetchall():
        new = (message and scrub.text(message), hint and scrub.text(hint), _json(record, scrub.walk))
        if new != (message, hint, record):
            db.execute("UPDATE events SET message = ?, hint = ?, record = ? WHERE id = ?", (*new, eid))
