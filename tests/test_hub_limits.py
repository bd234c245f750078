"""The hub's limits (issue 67), against a live hub: gzip bombs pushed together hold one bomb's
memory, a full or read-only database answers 503 with its cause while reads serve what they
can, `scope hub serve` on a database it cannot use is one line and exit 3, and heavy work is
drawn once and bounded."""

from __future__ import annotations

import contextlib
import gzip
import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from scope.hub.guard import Gate, HubError, OnePerKey
from tests.conftest import run_scope
from tests.hub_server import Hub
from tests.test_hub import token

MB = 1 << 20


def peak_rss_mb(pid: int) -> float:
    """The process's peak resident memory (VmHWM), MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmHWM")


@pytest.mark.service
def test_six_gzip_bombs_at_once_hold_one_bombs_memory(tmp_path, local):
    """Six pushes at once, each 600 KB on the wire inflating past the 512 MiB a 64 MiB upload
    may grow to: each refused (400), and the hub's peak resident memory stays under 1 GB (each
    inflated to its limit at once would take 3 GB)."""
    url = str(tmp_path / "hub.db")
    alpha = token(url, "alpha")
    bomb = gzip.compress(b"{" + b" " * (600 * MB), compresslevel=9)
    assert len(bomb) < MB  # under the line past which a push waits its turn on the wire
    with Hub(url) as hub:
        assert hub.push(local[2]["layers"], alpha)[0] == 201
        answers: list[int] = []

        def push():
            answers.append(hub.push(bomb, alpha)[0])

        threads = [threading.Thread(target=push) for _ in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(300)
        peak = peak_rss_mb(hub.proc.pid)
        assert answers == [400] * 6
        assert hub.get_json("/api/health")["runs"] == 1
    assert peak < 1000, f"peak resident {peak:.0f} MB"


@contextlib.contextmanager
def small_disk(where: Path, size: str):
    """A tmpfs of `size` mounted at `where` (root only), unmounted after."""
    where.mkdir()
    p = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)], capture_output=True)
    if p.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {p.stderr.decode().strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


@pytest.mark.system
def test_a_full_and_a_read_only_database(tmp_path, local):
    """SQLite on a disk that fills: the push that does not fit is a JSON 503 naming the cause,
    nothing half-stored; pages already stored still serve, a cluster page not yet drawn is drawn
    and served without being kept; the disk made read-only, the same; `scope hub serve` on it
    is one line and exit 3, not an internal error."""
    with small_disk(tmp_path / "disk", "1m") as disk:
        url = str(disk / "hub.db")
        alpha = token(url, "alpha")
        with Hub(url) as hub:
            pushed, code, answer = 0, 201, {}
            for i in range(40):  # a bundle is ~100 kB: the 1 MB disk fills within a few
                doc = json.loads(gzip.decompress(local[2]["windows"]))
                doc["run"]["label"] = f"fill {i}"
                code, answer = hub.push(gzip.compress(json.dumps(doc).encode()), alpha)
                if code != 201:
                    break
                pushed += 1
            assert code == 503 and "full" in answer["error"] and answer["hint"], (code, answer)
            assert 0 < pushed and hub.get_json("/api/health")["runs"] == pushed
            assert hub.get("/clusters/alpha")[0] == 200 and hub.get("/api/runs/1/bundle")[0] == 200
        subprocess.run(["mount", "-o", "remount,ro", str(disk)], check=True)
        argv = [sys.executable, "-m", "scope", "hub", "serve", "--db", url, "--port", "0"]
        p = subprocess.run(argv, capture_output=True, text=True, timeout=60)
        assert p.returncode == 3 and len(p.stderr.strip().splitlines()) == 1, p.stderr
        assert "cannot be used" in p.stderr and "Traceback" not in p.stderr
        assert run_scope("hub", "token", "list", "--db", url).returncode == 0  # reading it needs no write
    p = run_scope("hub", "serve", "--db", "postgresql://nobody@127.0.0.1:9/none", "--port", "0")
    assert p.returncode == 3 and len(p.stderr.strip().splitlines()) == 1, p.stderr  # unreachable: the same


@pytest.mark.unit
def test_one_drawing_per_key_and_a_bounded_gate():
    """Four readers asking for one run's report together: one drawing, shared; a fifth kind of
    heavy work past its bound is answered 429 at once, not queued."""
    drawn: list[int] = []
    kept: dict[int, str] = {}
    once = OnePerKey()

    def reader():
        with once(7):
            if 7 not in kept:
                time.sleep(0.2)  # the drawing, while the others arrive
                drawn.append(7)
                kept[7] = "report"

    threads = [threading.Thread(target=reader) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert drawn == [7] and once.held == {}
    gate = Gate(2, "comparing runs")
    with gate(), gate():
        with pytest.raises(HubError) as e:
            with gate():
                pass
        assert e.value.status == 429 and e.value.retry_after
    with gate():  # released: free again
        pass
