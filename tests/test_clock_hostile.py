"""The clock library given hostile arguments (issue 69): every call the header calls out of its
domain answers EINVAL (a collective one on every rank, none left waiting), a NULL clock reads NaN,
an event name `scope import` would refuse is refused at the call, two clocks never write one
file, and the Python binding raises ClockError where C would read freed memory."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT, run_scope
from tests.test_clock_library import _run, installed  # noqa: F401  (the module's fixture)


def _flags(prefix: Path) -> list[str]:
    env = dict(os.environ, PKG_CONFIG_PATH=str(prefix / "lib" / "pkgconfig"))
    out = subprocess.run(["pkg-config", "--cflags", "--libs", "scope-clock"], capture_output=True, text=True,
                         env=env, check=True).stdout  # fmt: skip
    return shlex.split(out)


@pytest.mark.build
def test_the_c_library_answers_every_argument_out_of_its_domain(installed, tmp_path):  # noqa: F811
    prefix, _ = installed
    exe = tmp_path / "hostile"
    mpicc = Path(sys.prefix) / "bin" / "mpicc"
    cc = subprocess.run([str(mpicc), "-Wall", "-Wextra", "-Werror", str(ROOT / "tests" / "c" / "clock_hostile.c"),
                         "-o", str(exe), *_flags(prefix), "-lm"], capture_output=True, text=True)  # fmt: skip
    assert cc.returncode == 0, cc.stderr
    p = _run([str(exe), str(tmp_path / "ev")], {})
    assert p.returncode == 0, p.stderr  # no abort: MPI_COMM_NULL was an argument, not a fatal MPI error
    said = dict(line.rsplit(" ", 1) for line in p.stdout.splitlines())
    assert said == {
        "init COMM_NULL": "1", "null reads NaN": "1", "span 1e6": "1", "init": "0", "keep one bad rank": "-1",
        "events_open": "0", "names": "1", "twin init": "0", "twin prefix": "5", "finalize": "0",
        "after finalize NaN": "1",
    }  # fmt: skip
    lines = (tmp_path / "ev.0.jsonl").read_text().splitlines()
    assert len(lines) == 3  # the header and the two names within the rule: nothing refused was written


BINDING = r"""
import sys
from mpi4py import MPI
from scope.clock import Clock, ClockError

def said(call):
    try:
        call()
        return "accepted"
    except ClockError as e:
        return "refused: " + str(e).split(" (")[0]

out = [said(lambda: Clock(MPI.COMM_NULL))]
with Clock(MPI.COMM_WORLD) as c:
    c.events_open(sys.argv[1])
    for name in ("", "x" * 65, "a\nb", "\x1b[2J", "\udcff", "a\0b", "halo"):
        out.append(said(lambda: c.event(name)))
    twin = Clock(MPI.COMM_WORLD)
    out.append(said(lambda: twin.events_open(sys.argv[1])))
    twin.close()
    out.append(said(lambda: Clock(MPI.COMM_WORLD, span_s=1e6)))
    out.append(said(lambda: c.keep(1e3 if MPI.COMM_WORLD.rank == 0 else -1, 0)))
for call in (c.local_ns, c.global_ns, c.sync, lambda: c.keep(1, 1), lambda: c.timer, lambda: c.sync_seconds,
             lambda: c.event("x"), c.events_close):
    out.append(said(call))
c.close()  # a second close is nothing
if MPI.COMM_WORLD.rank == 0:
    print("\n".join(out), flush=True)
"""


@pytest.mark.build
def test_the_python_binding_raises_where_c_would_crash(installed, tmp_path):  # noqa: F811
    pytest.importorskip("mpi4py")
    prefix, _ = installed
    env = {"SCOPE_CLOCK_LIB": str(prefix / "lib" / "libscopeclock.so.1"), "PYTHONPATH": str(ROOT / "src")}
    p = _run([sys.executable, "-c", BINDING, str(tmp_path / "ev")], env)
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert lines[0] == "refused: Clock needs a communicator, not MPI.COMM_NULL"
    assert all(x.startswith("refused: an argument out of its domain") for x in lines[1:6]), lines
    assert lines[6] == "refused: an event name holds a NUL character" and lines[7] == "accepted"
    assert lines[8] == "refused: another clock of this process writes that events file"
    assert lines[9].startswith("refused: an argument out of its domain")  # span_s past 60 s
    assert lines[10].startswith("refused: an argument out of its domain")  # rank 1's bad keep, on rank 0 too
    assert lines[11:] == ["refused: the clock is closed"] * 8, lines[11:]


@pytest.mark.unit
def test_a_library_that_is_not_scopes_is_a_clock_error(tmp_path):
    import ctypes.util

    libz = ctypes.util.find_library("z")
    if not libz:
        pytest.skip("no libz to stand in for a foreign library")
    code = (
        "import sys, types; from scope.clock import ClockError, _load; import ctypes\n"
        "try:\n    _load(ctypes.c_int)\nexcept ClockError as e:\n    print('ClockError:', e)\n"
    )
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env=dict(os.environ, SCOPE_CLOCK_LIB=libz, PYTHONPATH=str(ROOT / "src")))  # fmt: skip
    assert p.stdout.startswith("ClockError: ") and "is not SCOPE's clock library" in p.stdout, p.stderr


@pytest.mark.unit
def test_a_refused_clock_lib_build_leaves_no_folder_it_made(tmp_path):
    prefix = tmp_path / "new" / "deep"
    p = run_scope("build", "--clock-lib", "--prefix", prefix, "--mpicc", tmp_path / "no-such-mpicc")
    assert p.returncode != 0 and "Traceback" not in p.stderr, p.stderr
    assert not (tmp_path / "new").exists()
