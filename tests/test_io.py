"""The parallel I/O level (io.write, io.read, io.rewrite on MPI-IO): what a pass credits, that
every block lands where it belongs, that evicting the page cache makes reads go to the device,
and that the files never outlive the run."""

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from scope.store import Store
from tests.conftest import as_at_a_terminal, run_scope

pytestmark = pytest.mark.mpi

MiB = 1 << 20
SMALL = ["--sizes", "64K,1M", "-p", f"total={8 * MiB}", "--budget", "0.3", "--quiet"]


def leftovers(where):
    return [p.name for p in where.iterdir() if p.name.startswith("scope-io")]


def test_each_pass_credits_the_whole_file_and_checks_every_block(engine, db, tmp_path):
    p = run_scope(
        "run", "io.write", "io.read", "io.rewrite", "--procs", "1,2", "--io-dir", tmp_path, *SMALL, db=db, timeout=900
    )
    assert p.returncode == 0, p.stderr
    run = Store(db).load_run(1)
    assert {(pt.test, pt.size, pt.params["procs"]) for pt in run.points} == {
        (t, s, n) for t in ("io.write", "io.read", "io.rewrite") for s in (64 * 1024, MiB) for n in (1, 2)
    }  # all 12 verified: a block in the wrong place or with wrong bytes would be an error instead
    for pt in run.points:
        assert pt.bytes_per_op == 8 * MiB  # whole blocks: 8 MiB splits evenly at both sizes and counts
        assert pt.bw_median == pytest.approx(8 * MiB / pt.median, rel=1e-6)  # MB/s = bytes / us
        assert f"{8 * MiB // pt.params['procs'] // pt.size} blocks per rank" in pt.note
        assert pt.record["timing"] == "barrier" and "untimed step" in pt.record["timing_reason"]
    assert json.loads(Store(db).run(1)["context"])["io"]["dir"] == str(tmp_path)
    assert not leftovers(tmp_path)


def test_a_bad_byte_read_back_is_an_error(engine, db, tmp_path):
    p = run_scope("run", "io.read", "--io-dir", tmp_path, *SMALL, db=db, env={"SCOPE_TEST_CORRUPT": "0"})
    errors = [e for e in Store(db).events(1) if e["type"] == "error"]
    assert errors and "data check failed" in errors[0]["message"] and p.returncode != 0


def test_reads_run_with_pages_evicted_and_kept(engine, db, tmp_path):
    """Same file, same blocks: with its pages kept, a read pass is a memory copy; evicted, each
    block comes from the device (here a virtual disk the host caches: still several times
    slower than this guest's page cache)."""
    p = run_scope(
        "run", "io.read", "-n", "1", "--sizes", "1M", "-p", f"total={64 * MiB}", "-p", "cache=evict,keep",
        "--io-dir", tmp_path, "--budget", "1", "--quiet", db=db,
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    by = {pt.params["cache"]: pt for pt in Store(db).load_run(1).points}
    assert set(by) == {"evict", "keep"}
    assert all(pt.record["validated"] == 2 and pt.median > 0 for pt in by.values())
    # that an evicted read is several times slower than a kept one is a claim about this
    # machine's device and page cache: bench/claims.py


def test_what_cannot_run_is_a_skip_with_its_reason(engine, db, tmp_path):
    p = run_scope(
        "run", "io.write", "--io-dir", tmp_path, "--sizes", "4,64K", "-p", f"total={MiB}",
        "-p", "file=per_process", "-p", "calls=independent,collective", "--budget", "0.2", "--quiet", db=db,
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    reasons = {e["message"] for e in Store(db).events(1) if e["type"] == "skip"}
    assert any("at least 8 bytes" in r for r in reasons)
    assert any("collective calls need a shared file" in r for r in reasons)
    assert len(Store(db).load_run(1).points) == 1  # 64 KiB, independent, a file per process


def test_a_directory_that_cannot_hold_the_file_is_refused_before_launch(db, tmp_path):
    a_file = tmp_path / "f"
    a_file.write_text("")
    p = run_scope("run", "io.write", "--io-dir", a_file, db=db)
    assert p.returncode == 2 and "is not a directory" in p.stderr and "\n" not in p.stderr.strip()
    p = run_scope("run", "io.write", "--io-dir", tmp_path, "-p", f"total={1 << 40}", db=db)
    assert p.returncode != 0 and "needs 1,209,463 MB" in p.stderr and "MB free" in p.stderr
    assert not db.exists() or not Store(db).runs()  # nothing launched, nothing stored


def test_the_files_are_removed_when_the_run_is_interrupted_mid_point(engine, db, tmp_path):
    """Rank 0 held (SCOPE_TEST_HANG) after the file is written and before the pass: Ctrl-C then
    stops the run, which is stored as incomplete, and its directory goes with it."""
    io = tmp_path / "io"
    io.mkdir()
    cmd = [sys.executable, "-m", "scope", "--db", str(db), "run", "io.read", "--io-dir", str(io), *SMALL]
    env = dict(os.environ, SCOPE_TEST_HANG="SCOPE_IO_TEST=hold", SCOPE_IO_TEST="hold")
    proc = subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, preexec_fn=as_at_a_terminal
    )
    deadline = time.monotonic() + 120
    while not list(io.glob("scope-io-*/scope-io.shared")) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert list(io.glob("scope-io-*/scope-io.shared")), "the file never appeared"
    proc.send_signal(signal.SIGINT)
    proc.communicate(timeout=60)
    assert proc.returncode != 0
    assert Store(db).load_run(1).status == "incomplete"
    assert not os.listdir(io)


@pytest.mark.skipif(os.geteuid() != 0, reason="mounts a 1 MiB tmpfs (root)")
def test_a_full_file_system_is_a_fault_of_the_machine_not_bad_data(engine, db, tmp_path):
    """The disk fills after scope's free-space check (SCOPE_TEST_FREE_BYTES stands in for the
    check; the full tmpfs is real): exit 3 naming the file system, the run incomplete with that
    reason, its io directory removed; once this read as bad bytes in a complete run."""
    small = tmp_path / "small"
    small.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(small)]).returncode:
        pytest.skip("tmpfs cannot be mounted here")
    try:
        p = run_scope("run", "io.write", "-p", "total=4194304", "--sizes", "256K", "--io-dir", small, "--budget", "1",
                      "--launches", "1", "--quiet", db=db, env={"SCOPE_TEST_FREE_BYTES": str(10**11)})  # fmt: skip
        assert p.returncode == 3, p.stderr
        assert f"no space left on the file system of {small}/scope-io-" in p.stderr
        run = Store(db).load_run(1)
        assert run.status == "incomplete" and "fault of the machine: no space left" in run.reason
        assert [e.record["kind"] for e in run.events if e.type == "fault"] == ["no_space"]
        assert not [e for e in run.events if e.type == "error"]  # no "bad bytes"
        assert list(small.iterdir()) == []
    finally:
        subprocess.run(["umount", str(small)])
