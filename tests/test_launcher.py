"""The record reader against a stand-in engine: records, noise, a hang, a crash."""

import json
import os
import sys

import pytest

from scope.run.launcher import Launch, failure_reason, run_records

pytestmark = pytest.mark.unit


def fake(tmp_path, body: str) -> Launch:
    script = tmp_path / "fake_engine.py"
    script.write_text("import json, sys, time\n" + body)
    return Launch([sys.executable, str(script)], {"PATH": "/usr/bin:/bin"}, "test")


def test_records_arrive_and_noise_is_kept_aside(tmp_path):
    launch = fake(
        tmp_path,
        """
print(json.dumps({"type": "context", "schema": 1}), flush=True)
print("=== some launcher banner ===", flush=True)
print('{"type": "point", broken', flush=True)
print(json.dumps({"type": "point", "index": 0}), flush=True)
print(json.dumps({"type": "end", "status": "ok"}), flush=True)
sys.stderr.write("a warning\\n")
""",
    )
    got = []
    out = run_records(launch, got.append, idle_timeout=30)
    assert [r["type"] for r in got] == ["context", "point", "end"]
    assert out.saw_end and out.returncode == 0 and out.bad_lines == 1
    assert any("banner" in n for n in out.noise)
    assert "a warning" in out.stderr


def test_a_silence_after_a_record_is_reported_so_it_is_committed_without_the_next(tmp_path):
    """A long point holds the next record back for minutes: the reader reports each quiet
    interval (on_quiet), so the store commits the context at once rather than with the point
    (issue 52 made the store commit once a burst). A handshake, not a race: the stand-in ends
    only once the reader has reported a silence after its first record."""
    quiet = tmp_path / "quiet"
    launch = fake(
        tmp_path,
        f"""
print(json.dumps({{"type": "context", "schema": 1}}), flush=True)
import os
deadline = time.monotonic() + 60
while not os.path.exists({str(quiet)!r}) and time.monotonic() < deadline:
    time.sleep(0.05)
print(json.dumps({{"type": "end", "status": "ok"}}), flush=True)
""",
    )
    got, silences = [], []

    def on_quiet():
        silences.append([r["type"] for r in got])
        quiet.touch()

    out = run_records(launch, got.append, idle_timeout=120, on_quiet=on_quiet, quiet_s=0.2)
    assert out.saw_end and [r["type"] for r in got] == ["context", "end"]
    assert ["context"] in silences  # reported while only the context had come


def test_records_are_delivered_before_the_process_ends(tmp_path):
    # a handshake, not a race against the clock: the stand-in prints its first record, then
    # waits for the reader to have delivered it (the callback makes a file) before it ends
    seen = tmp_path / "delivered"
    launch = fake(
        tmp_path,
        f"""
import os
print(json.dumps({{"type": "point", "index": 0}}), flush=True)
for _ in range(600):
    if os.path.exists({str(seen)!r}):
        print(json.dumps({{"type": "end"}}), flush=True)
        sys.exit(0)
    time.sleep(0.05)
sys.exit(3)
""",
    )
    got = []
    out = run_records(launch, lambda r: (got.append(r), seen.touch()), idle_timeout=60)
    assert [r["type"] for r in got] == ["point", "end"] and out.saw_end and out.returncode == 0


def test_a_hung_job_is_stopped(tmp_path):
    pid = tmp_path / "pid"
    launch = fake(
        tmp_path,
        f"""
import os
open({str(pid)!r}, "w").write(str(os.getpid()))
print(json.dumps({{"type": "point", "index": 0}}), flush=True)
time.sleep(600)
""",
    )
    got = []
    out = run_records(launch, got.append, idle_timeout=2)
    assert out.timed_out and not out.saw_end and len(got) == 1
    assert not os.path.exists(f"/proc/{pid.read_text()}")  # stopped, not left sleeping
    assert "no record for 2 s" in failure_reason(out, 2)
    assert "hung or deadlocked" in failure_reason(out, 2, budget_s=0.5)
    short = failure_reason(out, 2, budget_s=5)  # --timeout below the budget: not blamed on a hang
    assert "raise --timeout" in short and "deadlocked" not in short


def test_an_unreachable_host_is_named(tmp_path):
    launch = fake(
        tmp_path,
        """
sys.stderr.write("ssh: Could not resolve hostname nosuchhost: Name or service not known\\n")
sys.exit(255)
""",
    )
    out = run_records(launch, lambda r: None, idle_timeout=30)
    reason = failure_reason(out, 30)
    assert reason.startswith("a host could not be reached") and "nosuchhost" in reason


def test_a_crash_is_explained(tmp_path):
    launch = fake(
        tmp_path,
        """
print(json.dumps({"type": "point", "index": 0}), flush=True)
sys.stderr.write("segfault in rank 1\\n")
sys.exit(11)
""",
    )
    out = run_records(launch, lambda r: None, idle_timeout=30)
    assert out.returncode == 11 and not out.saw_end
    reason = failure_reason(out, 30)
    assert "exit status 11" in reason and "segfault in rank 1" in reason


def test_json_records_parse_nan_as_null(tmp_path):
    launch = fake(tmp_path, 'print(\'{"type": "point", "stats": {"ci_rel": null}}\', flush=True)\n')
    got = []
    run_records(launch, got.append, idle_timeout=30)
    assert got[0]["stats"]["ci_rel"] is None
    assert json.dumps(got[0])


def test_a_ctrl_c_python_dropped_still_stops_the_launch(tmp_path):
    """A SIGINT whose KeyboardInterrupt Python only printed (it landed in the hooks a fork runs,
    as Popen starts a launch: "Exception ignored") is still in errors.SIGNALS_SEEN: the launch
    stops as a Ctrl-C stops it, at its next record or quiet spell, not when the engine ends. The
    engine here prints a record a second for a minute; the signal is seen once its first record
    is in, so the count of records says where it stopped."""
    import signal

    from scope.errors import SIGNALS_SEEN

    launch = fake(tmp_path, "for i in range(60):\n    print(json.dumps({'type': 'point', 'index': i}), flush=True)\n"
                            "    time.sleep(1)\n")  # fmt: skip
    got = []

    def on_record(rec):
        got.append(rec)
        if len(got) == 1:
            SIGNALS_SEEN.append(signal.SIGINT)  # what cli/main's handler records before raising

    n = len(SIGNALS_SEEN)
    try:
        out = run_records(launch, on_record, idle_timeout=30)
    finally:
        del SIGNALS_SEEN[n:]
    assert out.interrupted and out.terminated == 0 and not out.saw_end
    assert len(got) <= 2 and out.returncode != 0  # stopped within a quiet spell of the first record
