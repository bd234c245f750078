"""Launching the engine with mpiexec or srun and reading its records as they arrive.

Like pyperf's manager: start the job, read records from its stdout with a timeout, check the
exit status, keep stderr on failure.  Lines that are not records (a launcher's banner) are
kept aside, never parsed for numbers."""

from __future__ import annotations

import contextlib
import os
import selectors
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from scope.cores import host_name, usable_cores
from scope.errors import ENVIRONMENT, SIGNALS_SEEN, ScopeError, Terminated, interruption
from scope.run.leftovers import clean_leftovers, die_with, present
from scope.run.sim import simgrid_reason
from scope.run.slurm import srun_args
from scope.run.stream import parse_record
from scope.run.testbed import launch_segments, testbed_env
from scope.run.toolchain import Toolchain

# MPICH busy-polls; with more ranks than cores the throttle lets ranks yield (DEVELOPERS.md).
THROTTLE_ENV = {
    "MPIR_CVAR_CH4_PROGRESS_THROTTLE": "1",
    "MPIR_CVAR_CH4_PROGRESS_THROTTLE_NO_PROGRESS_COUNT": "16",
}


# Open MPI refuses to start as root unless told twice
OPENMPI_AS_ROOT = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}


def oversubscribed(ranks: int, hosts: list[str] | None) -> bool:
    """Known before launch only for a local run; the engine checks every host itself."""
    return not hosts and ranks > usable_cores()


@dataclass
class Launch:
    argv: list[str]
    env: dict[str, str]
    launcher: str
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Where:
    """Where a launch's ranks go: how many, by which launcher (with its own arguments and the
    environment added), onto which hosts or testbed."""

    ranks: int
    launcher: str = "mpiexec"
    hosts: list[str] | None = None
    extra: list[str] | None = None
    env: dict[str, str] | None = None
    testbed: dict | None = None


def build_launch(tc: Toolchain, exe: Path, engine_args: list[str], where: Where) -> Launch:
    ranks, launcher, hosts, extra, env, testbed = (
        where.ranks, where.launcher, where.hosts, where.extra, where.env, where.testbed
    )  # fmt: skip
    full_env = dict(os.environ, **watch_env())
    # OpenBLAS's thread pool spins beside the ranks at every launch's start; without it the
    # engine would start itself again to be rid of it (engine/main.c, one_blas_thread)
    full_env.setdefault("OPENBLAS_NUM_THREADS", "1")
    notes = []
    if testbed is not None:
        if launcher != "mpiexec" or tc.flavor != "mpich" or tc.mpiexec is None:
            raise ScopeError(
                "testbed runs need MPICH's mpiexec (hydra starts one rank per namespace)",
                "use the default MPICH from this environment",
                ENVIRONMENT,
            )
        full_env.update(testbed_env(testbed, ranks))
        full_env.update(env or {})
        argv = [str(tc.mpiexec), *(extra or []), *launch_segments(testbed, ranks, str(exe), engine_args)]
        if ranks > usable_cores():
            for k, v in THROTTLE_ENV.items():
                full_env.setdefault(k, v)
        return Launch(argv, full_env, "mpiexec+testbed", notes)
    full_env.update(env or {})
    if launcher == "srun":
        mpi = srun_args(tc.flavor, extra or [])
        notes += [f"srun {' '.join(mpi)} (the PMI {tc.flavor} speaks)"] if mpi else []
        argv = ["srun", "-n", str(ranks), *mpi, *(extra or []), str(exe), *engine_args]
    elif launcher == "mpiexec":
        if tc.mpiexec is None:
            raise ScopeError(
                f"no mpiexec next to {tc.mpicc} or on PATH",
                "install the MPI's launcher or use --launcher srun",
                ENVIRONMENT,
            )
        argv = [str(tc.mpiexec), "-n", str(ranks)]
        if hosts:
            argv += ["-hosts" if tc.flavor == "mpich" else "--host", ",".join(hosts)]
        over = oversubscribed(ranks, hosts)
        if over and tc.flavor == "openmpi":
            argv.append("--oversubscribe")
        if tc.flavor == "openmpi" and os.geteuid() == 0:
            for k, v in OPENMPI_AS_ROOT.items():
                if k not in full_env:
                    full_env[k] = v
                    notes.append(f"{k}={v} (running as root)")
        argv += [*(extra or []), str(exe), *engine_args]
        if over:
            for k, v in THROTTLE_ENV.items():
                if k not in full_env:
                    full_env[k] = v
                    notes.append(f"{k}={v}")
    else:
        raise ScopeError(f"unknown launcher '{launcher}'", "use --launcher mpiexec or --launcher srun")
    return Launch(argv, full_env, launcher, notes)


@dataclass
class Outcome:
    returncode: int
    saw_end: bool
    stderr: str
    noise: list[str]
    timed_out: bool = False
    interrupted: bool = False
    bad_lines: int = 0
    terminated: int = 0  # the signal that ended SCOPE (SIGTERM, SIGHUP, SIGQUIT), 0: none

    @property
    def ran_through(self) -> bool:
        """The engine reached its end record and exited as a finished run does (1: with errors)."""
        return self.saw_end and self.returncode in (0, 1) and not self.interrupted


def watch_env() -> dict[str, str]:
    """Whom the engine's ranks watch so that they die with it (engine/watchdog.c): this process,
    when it started (a reused pid is not taken for it) and its host."""
    me = os.getpid()
    return {"SCOPE_WATCH_PID": str(me), "SCOPE_WATCH_START": str(_start_ticks(me)), "SCOPE_WATCH_HOST": host_name()}


def _start_ticks(pid: int) -> int:
    """When a process started, in clock ticks since boot (/proc/PID/stat field 22; 0: unknown)."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return 0
    return int(text.rsplit(")", 1)[1].split()[19])


def run_records(
    launch: Launch,
    on_record: Callable[[dict], None],
    idle_timeout: float,
    on_quiet: Callable[[], None] | None = None,
    quiet_s: float = 0.5,
) -> Outcome:
    """Run the launch, call on_record for each JSON record as it arrives, and on_quiet after
    each quiet_s without one (the store commits what it holds: a record is never kept waiting
    for the next one, which a long point may hold back for minutes)."""
    before = present()
    seen = len(SIGNALS_SEEN)
    errf = tempfile.TemporaryFile(mode="w+")
    try:
        proc = subprocess.Popen(
            launch.argv,
            stdout=subprocess.PIPE,
            stderr=errf,
            stdin=subprocess.DEVNULL,
            env=launch.env,
            start_new_session=True,
            preexec_fn=die_with(os.getpid(), signal.SIGKILL),
        )
    except FileNotFoundError:
        raise ScopeError(
            f"cannot start '{launch.argv[0]}'", "is the launcher installed and on PATH?", ENVIRONMENT
        ) from None
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)
    noise: list[str] = []
    buf = b""
    saw_end = timed_out = interrupted = False
    terminated = 0
    bad = 0
    last = time.monotonic()

    def handle(line: bytes) -> None:
        nonlocal saw_end, bad
        text = line.decode("utf-8", "replace").strip()
        if not text:
            return
        rec = parse_record(text)
        if rec is not None:
            saw_end |= rec["type"] == "end"
            on_record(rec)
            return
        bad += text.startswith("{")
        noise.append(text[:200])

    try:
        while True:
            _raise_dropped(seen)
            events = sel.select(timeout=quiet_s)
            if not events and on_quiet is not None:
                on_quiet()
            if events:
                chunk = os.read(proc.stdout.fileno(), 1 << 20)
                if not chunk:
                    break
                last = time.monotonic()
                buf += chunk
                *lines, buf = buf.split(b"\n")
                for line in lines:
                    handle(line)
            elif time.monotonic() - last > idle_timeout:
                timed_out = True
                _kill(proc)
                break
        if buf:
            handle(buf)
        proc.wait(timeout=30)
        _raise_dropped(seen)
    except KeyboardInterrupt as e:
        interrupted = True
        terminated = e.signum if isinstance(e, Terminated) else 0
        _kill(proc)
    finally:
        sel.close()
        if proc.poll() is None:
            _kill(proc)
        errf.seek(0)
        stderr = errf.read()
        errf.close()
        if proc.returncode != 0:
            _reap_group(proc.pid)  # the ranks gone too, so their segments are no longer in use
            clean_leftovers(before)
    return Outcome(
        proc.returncode if proc.returncode is not None else -1,
        saw_end,
        stderr,
        noise,
        timed_out,
        interrupted,
        bad,
        terminated,
    )


def _reap_group(pgid: int, wait_s: float = 5.0) -> None:
    """Waits until no process of the job's group is left, killing what stays past a second:
    the launcher exits before its ranks do, and a rank still mapping MPICH's segment kept it
    from clean_leftovers (issue 58: a run stopped when its database was locked left
    /dev/shm/mpich_shm_* behind through nine later runs)."""
    deadline, killed = time.monotonic() + wait_s, False
    while time.monotonic() < deadline:
        try:
            os.killpg(pgid, 0)
        except (ProcessLookupError, PermissionError):
            return
        if not killed and time.monotonic() > deadline - wait_s + 1.0:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pgid, signal.SIGKILL)
            killed = True
        time.sleep(0.02)


def _raise_dropped(seen: int) -> None:
    """The interruption of a signal taken since `seen` signals (errors.SIGNALS_SEEN) whose
    exception Python dropped: a Ctrl-C landing in the hooks a fork runs (Popen's) is printed as
    "Exception ignored" and the launch would run on (a `scope tune` went on to its next
    algorithm and exited 0). Raised here, it stops the launch as a Ctrl-C does."""
    if len(SIGNALS_SEEN) > seen:
        raise interruption(SIGNALS_SEEN[-1])


def _kill(proc: subprocess.Popen) -> None:
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            return
        try:
            proc.wait(timeout=5)
            return
        except subprocess.TimeoutExpired:
            continue


# What launchers print when a host cannot be reached: the true cause, worth a reason line.
HOST_ERRORS = ("could not resolve", "name or service not known", "unable to resolve", "no route to host")


def failure_reason(out: Outcome, idle_timeout: float, budget_s: float | None = None) -> str:
    """One line saying why a run stopped early, from the exit status and what the launcher said."""
    if out.terminated:
        name = signal.Signals(out.terminated).name
        why = "a scheduler's time limit, or kill" if name == "SIGTERM" else "its terminal closed, or quit"
        return f"terminated by {name} ({why})"
    if out.interrupted:
        return "interrupted by the user"
    text = out.stderr + "\n" + "\n".join(out.noise)
    for line in text.splitlines():
        if any(h in line.lower() for h in HOST_ERRORS):
            return f"a host could not be reached: {line.strip()[:160]}"
    if out.timed_out:
        if budget_s is not None and idle_timeout < 2 * budget_s:
            return (
                f"no record for {idle_timeout:g} s, the --timeout, which is shorter than a point may take "
                f"(budget {budget_s:g} s per point, warm-up and checks besides): raise --timeout"
            )
        return f"no record for {idle_timeout:g} s: a rank hung or deadlocked, so the job was stopped"
    for line in text.splitlines():
        s = line.strip().strip("=").strip()
        if "EXIT STRING" in s or "signal" in s.lower() and ("killed" in s.lower() or "terminated" in s.lower()):
            return f"a rank died ({s.split(':', 1)[-1].strip()}); exit status {out.returncode}"
    simgrid = simgrid_reason(out.stderr)
    if simgrid:
        return f"SimGrid stopped the simulation: {simgrid}"
    if out.returncode < 0:
        return f"the launcher was killed by signal {-out.returncode}"
    last = [ln for ln in out.stderr.strip().splitlines() if ln.strip()]
    detail = f": {last[-1].strip()[:160]}" if last else ""
    return f"the MPI job ended with exit status {out.returncode} before the run finished{detail}"
