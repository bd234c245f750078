"""The engine's output as records: the one reader of its JSON Lines (a launch's stream, and
what an engine command such as --list --json, --plan or --timers prints)."""

from __future__ import annotations

import msgspec

from scope.errors import ENVIRONMENT, ScopeError
from scope.records import problem


def parse_record(text: str) -> dict | None:
    """One line of the engine's stream as a record, or None for anything else (a launcher's
    banner, a cut line): the one reader of the engine's JSON Lines."""
    if not text.startswith("{"):
        return None
    try:  # msgspec: a point record with its samples in a few ms less than json's, on the core a rank may need
        rec = msgspec.json.decode(text)
    except (msgspec.DecodeError, RecursionError):  # nested past the decoder's depth: no record either
        return None
    return rec if isinstance(rec, dict) and "type" in rec else None


def engine_records(stdout: str) -> list[dict]:
    """Every record in the output of an engine command (--list --json, --plan, --timers), each
    checked against its declared type (scope/records)."""
    out = [r for r in map(parse_record, stdout.splitlines()) if r is not None]
    wrong = next((p for p in map(problem, out) if p), None)
    if wrong:
        raise ScopeError(
            f"the engine wrote a record this front end cannot read: {wrong}", "rebuild with 'scope build'", ENVIRONMENT
        )
    return out
