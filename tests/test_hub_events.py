"""Known events, quiet hours and one message a push (issue 71), without a server: the rules as
functions of their input (times, windows, alert rows), and `scope hub event` on a database."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from scope.errors import ScopeError
from scope.hub import alerts, events
from scope.hub.pages import event_marks
from scope.hub.sending import MOST_LINES, message
from tests.conftest import run_scope

pytestmark = pytest.mark.unit


def at(text: str) -> datetime:
    return datetime.strptime(text, "%Y-%m-%dT%H:%M").replace(tzinfo=timezone.utc)


def test_quiet_hours_hold_a_delivery_until_they_end():
    assert alerts.quiet_until(None, at("2026-12-05T23:00")) is None
    over_midnight = "22:00-06:00"
    assert alerts.quiet_until(over_midnight, at("2026-12-05T23:10")) == at("2026-12-06T06:00")
    assert alerts.quiet_until(over_midnight, at("2026-12-06T05:59")) == at("2026-12-06T06:00")
    assert alerts.quiet_until(over_midnight, at("2026-12-06T06:00")) is None  # the end is not quiet
    assert alerts.quiet_until(over_midnight, at("2026-12-06T21:59")) is None
    assert alerts.quiet_until("09:30-17:00", at("2026-12-05T12:00")) == at("2026-12-05T17:00")
    assert alerts.quiet_until("09:30-17:00", at("2026-12-05T09:29")) is None
    assert alerts.check_quiet(" 22:00-06:00 ") == over_midnight
    for bad in ("24:00-06:00", "22:00", "22:00-22:00", "10pm-6am"):
        with pytest.raises(ScopeError):
            alerts.check_quiet(bad)


def test_an_event_is_between_the_two_runs_it_falls_between():
    known = [{"id": 1, "at_utc": "2026-11-06T18:00:00Z", "text": "MPICH 5.1", "bound": 0.3},
             {"id": 2, "at_utc": "2026-11-09T00:00:00Z", "text": "later", "bound": None}]  # fmt: skip
    before, after = "2026-11-06T10:00:00Z", "2026-11-07T10:00:00Z"
    assert [e["id"] for e in events.between(known, before, after)] == [1]
    assert events.between(known, after, "2026-11-08T10:00:00Z") == []
    assert [e["id"] for e in events.between(known, None, "2026-11-09T00:00:00Z")] == [1, 2]  # at the run: before it
    assert events.excuses(known[0], 0.25) and not events.excuses(known[0], 0.31)
    assert events.excuses(known[1], 5.0)  # no bound: any slowdown
    started = ["2026-11-05T10:00:00Z", "2026-11-06T10:00:00Z", "2026-11-07T10:00:00Z"]
    assert event_marks(started, known) == [(2, "MPICH 5.1")]  # drawn before the third run; "later" is past the last


def test_an_event_time_is_utc_and_its_text_one_line():
    assert events.at_of("2026-12-05T03:00") == "2026-12-05T03:00:00Z"
    assert events.at_of("2026-12-05T04:00+01:00") == "2026-12-05T03:00:00Z"
    assert events.at_of("2026-12-05 03:00:07Z") == "2026-12-05T03:00:07Z"
    for bad in ("yesterday", "2026-02-31T00:00", "0001-01-01", ""):
        with pytest.raises(ScopeError):
            events.at_of(bad)
    assert events.check_text("  MPICH 4.2 -> 5.0 ") == "MPICH 4.2 -> 5.0"
    for bad in ("", "   ", "a\nb", "x" * 201, "nul\x00", "\ud800"):
        with pytest.raises(ScopeError):
            events.check_text(bad)
    for bad in (0, -0.1, 10, True, "30%"):
        with pytest.raises(ScopeError):
            events.check_bound(bad)


def alert(i: int, step: float, **more) -> dict:
    return {"id": i, "series_id": i, "run_id": 7, "raised_by": 7, "kind": "alarm", "step": step, "lo": step - 0.05,
            "hi": step + 0.05, "changed": {"MPI": ["MPICH 5.0", "MPICH 5.1"]}, "status": "open", "test": "p2p.pingpong",
            "params": {}, "size": 8 << i, "ranks": 2, **more}  # fmt: skip


def test_one_message_a_push_whatever_it_raised():
    one = message([alert(1, 0.25)], "alpha", "https://hub.example.org")
    assert one["subject"] == "SCOPE: alpha p2p.pingpong +25.0 % at run 7"
    assert "MPI: MPICH 5.0 -> MPICH 5.1" in one["text"] and len(one["json"]["alerts"]) == 1
    rows = [alert(i, 0.05 + 0.01 * i) for i in range(30)]
    many = message(rows, "alpha", "https://hub.example.org")
    assert many["subject"].startswith("SCOPE: alpha: 30 series changed at run 7 (worst p2p.pingpong +34.0 %)")
    lines = many["text"].splitlines()
    assert len(lines) == 1 + MOST_LINES + 1 and lines[-1].startswith("- and 10 more: ")
    assert len(many["json"]["alerts"]) == 30 and many["json"]["raised_by"] == 7
    expected = message([alert(1, 0.25, event="MPICH 5.1", event_utc="2026-11-06T18:00:00Z", event_bound=0.3,
                              status="expected")], "alpha", "")["text"]  # fmt: skip
    said = "Announced: MPICH 5.1 (2026-11-06T18:00:00Z, announced as at most 30 % slower): filed as expected"
    assert said in expected


def test_scope_hub_event_announces_lists_and_removes(tmp_path):
    url = str(tmp_path / "hub.db")
    announce = ["alpha", "MPICH 4.2 -> 5.0", "--at", "2026-12-05T03:00", "--bound", "30%"]
    p = run_scope("hub", "event", *announce, "--db", url)
    assert p.returncode == 0 and "event 1 of alpha at 2026-12-05T03:00:00Z" in p.stdout, p.stderr
    listed = run_scope("hub", "event", "alpha", "--db", url).stdout
    assert "MPICH 4.2 -> 5.0  (at most 30 % slower)" in listed
    for args, said in ((["alpha", "x", "--at", "soon"], "is not a time"),
                       (["alpha", "x", "--bound", "lots"], "--bound 'lots' is not a slowdown"),
                       (["alpha", "--bound", "5%"], "--at and --bound go with an event's text"),
                       (["alpha", "--remove", "9"], "no live event 9 of alpha"),
                       (["no/such", "x"], "")):  # fmt: skip
        p = run_scope("hub", "event", *args, "--db", url)
        assert p.returncode == 2 and said in p.stderr and "Traceback" not in p.stderr, p.stderr
    assert run_scope("hub", "event", "alpha", "--remove", "1", "--db", url).returncode == 0
    assert run_scope("hub", "event", "alpha", "--db", url).stdout == ""
