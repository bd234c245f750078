"""What `scope run` refuses before launching that only the front end knows: ranks far beyond
this machine's cores, a problem larger than its memory, a file to write that cannot be written,
a --timeout the clock cannot keep, a run its tests refuse whole, a testbed screen whose ranks
would wrap unevenly.  Everything about the run's arguments (tests, parameters, sizes, process
counts, the --pattern file, option ranges) is the engine's to check: see plan.py."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from scope.cores import usable_cores
from scope.errors import ENVIRONMENT, USAGE, ScopeError

# More ranks per usable core than this is a mistake, not a measurement: refused without --force.
OVERSUBSCRIBE_MAX = 64


def check_cores(ranks: int, elsewhere: bool, force: bool) -> None:
    """A sane number of ranks per core when the run is on this machine."""
    if not elsewhere and not force and ranks > OVERSUBSCRIBE_MAX * usable_cores():
        raise ScopeError(
            f"{ranks} ranks on {usable_cores()} usable cores is more than {OVERSUBSCRIBE_MAX} per core",
            "use fewer ranks, --hosts for other machines, or --force",
            USAGE,
        )


def available_memory() -> int | None:
    """MemAvailable from /proc/meminfo, bytes; None where there is none."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def writable_output(path: str, flag: str = "-o", reads: tuple = ()) -> Path:
    """A file a command will write, checked before anything is measured or read: its folder
    exists and can be written, it is no directory, no FIFO or socket (opening one to write
    waits for a reader: issue 44, `export -o FIFO` hung), and none of the files the command
    reads (`reads`: the results database above all; `export 1 -o results.db`, or a report
    through a link to it, overwrote the store).  (What fails only when written, a full disk or
    /dev/full, is exit 3 where it is written.)"""
    out = Path(path)
    folder = out.parent
    if not folder.is_dir():
        raise ScopeError(f"cannot write {out}: folder {folder} does not exist", f"create it or choose another {flag}")
    if out.is_dir():
        raise ScopeError(f"cannot write {out}: it is a directory", f"name a file with {flag}")
    try:
        mode = out.stat().st_mode
    except OSError:
        mode = 0
    if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode):
        raise ScopeError(
            f"cannot write {out}: it is a {'FIFO' if stat.S_ISFIFO(mode) else 'socket'}", f"name a file with {flag}"
        )
    for r in reads:
        if r is not None and _same(out, Path(r)):
            raise ScopeError(f"cannot write {out}: it is {r}, which this command reads", f"choose another {flag}")
    if not os.access(folder, os.W_OK) and not (out.exists() and os.access(out, os.W_OK)):
        raise ScopeError(
            f"cannot write {out}: folder {folder} is not writable", f"choose a writable {flag}", ENVIRONMENT
        )
    return out


def _same(a: Path, b: Path) -> bool:
    """Whether two paths name one file (through links too), or would once `a` is written."""
    try:
        return a.exists() and b.exists() and os.path.samefile(a, b) or a.resolve() == b.resolve()
    except OSError:
        return False


def clock_fits_timeout(options: dict, tests: list[dict], ranks: int, timeout: float | None) -> None:
    """The silence a launch must keep before its first record on the global clock, against
    --timeout (seconds without a record before the job is stopped): --warm's spin, then a
    synchronisation of at least ceil(log2 H) rounds of --sync-span each (H: the clock's hosts;
    every rank is one under --clock-domain rank, at least one otherwise).  Known before launch,
    so refused then (issue 58: such a run was stopped as a deadlock, exit 4, with no points).
    `tests`: the descriptors of the tests the run plans; only window and barrier timing read the
    global clock."""
    if timeout is None or not any(t.get("timing") in ("window", "barrier") for t in tests):
        return
    warm, span = float(options.get("warm") or 0), float(options.get("sync-span") or 0)
    hosts = ranks if options.get("clock-domain") == "rank" else 1
    rounds = (hosts - 1) if options.get("clock") == "linear" else max(0, (hosts - 1).bit_length())
    silent = warm + rounds * span
    if silent >= timeout:
        parts = [f"--warm {warm:g}"] + ([f"{rounds} rounds of --sync-span {span:g}"] if rounds else [])
        raise ScopeError(
            f"--timeout {timeout:g} s is shorter than the {silent:g} s a launch spends before its first record on the "
            f"global clock ({' + '.join(parts)})",
            "raise --timeout, or lower --warm or --sync-span",
            USAGE,
        )


def refuse_empty(plan) -> None:
    """A run every point of which its tests refuse (kernel.multigrid -p n=4: n + 1 must be
    even) measures nothing: refused before launch with the test's own reason, where it used to
    end as a `complete` run of no points, exit 0 (issue 58)."""
    if not plan.tests or any(t.refused_points < t.points for t in plan.tests):
        return
    first = next(((t, r) for t in plan.tests for r in t.refused), None)
    if first is None:  # no point planned, none refused: the engine's skips say why
        return
    test, why = first
    raise ScopeError(
        f"{test.test} refuses every point asked of it: {why.reason}"
        + (f" (and {len(plan.tests) - 1} other tests theirs)" if len(plan.tests) > 1 else ""),
        "choose parameters or process counts the test runs (scope list says them)",
        USAGE,
    )


def even_screen(hosts: int, whole_hosts: bool, name: str, ranks: int, tests: list[dict]) -> None:
    """A pairs-timed screen on a testbed whose ranks would wrap onto its hosts unevenly (4 ranks
    on 3 hosts: rank 3 back on host 0) is refused before launch: its hosts would carry unequal
    numbers of ranks, some host pairs resting on one rank pair and some hosts on pairs within
    them, and on this 2-core machine such a sweep flagged a healthy link in 2 of 5 runs
    (bench/results/screen_testbed.md; issue 58).  Whole hosts (--ppn), or a multiple of them.
    `hosts`: the testbed hosts the run uses; `tests`: the descriptors of the tests it plans."""
    if whole_hosts or ranks <= hosts or ranks % hosts == 0:
        return
    if any(t.get("timing") == "pairs" for t in tests):
        raise ScopeError(
            f"{ranks} ranks on the {hosts} hosts of testbed '{name}' wrap unevenly (rank {hosts} is on host 0 "
            f"again): the screen's hosts would rest on unequal evidence",
            f"use a multiple of {hosts} ranks (-n {hosts}, -n {2 * hosts}), or --ppn",
        )
