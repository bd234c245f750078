"""Real Slurm clusters for the tests, of Debian's munged, slurmctld and slurmd, each in a private
directory with its own key, sockets, ports and state, stopped afterwards:

- `slurm`: one node, this machine;
- `slurm_testbed`: two nodes, one per network namespace of a testbed (`scope testbed up`):
  slurmctld and each slurmd are started in their namespace (nsenter, which keeps this
  machine's /sys and its cgroups, as slurmd needs), each slurmd as its own node (-N), reached
  at its namespace's address.  Clients (srun, sbatch, scope) run in the first namespace.

Where the daemons are not installed or cannot start (not root), the fixtures skip with why."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest

from tests.conftest import run_scope

DAEMONS = ("munged", "slurmctld", "slurmd", "srun", "sbatch", "sinfo", "nsenter")


def _why_not() -> str | None:
    missing = [d for d in DAEMONS if not shutil.which(d)]
    if missing:
        return f"Slurm is not installed ({', '.join(missing)} missing; make slurm installs it from Debian)"
    if os.geteuid() != 0:
        return "starting slurmd needs root"
    return None


def _conf(d: Path, host: str, ctl_addr: str | None, nodes: list[tuple[str, str | None]], port: int) -> str:
    """nodes: (name, address or None for this host)."""
    cpus = os.cpu_count() or 1
    mem_mb = int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**20 * 0.8 / len(nodes))
    lines = [
        "ClusterName=scopetest",
        f"SlurmctldHost={host}" + (f"({ctl_addr})" if ctl_addr else ""),
        "SlurmUser=root",
        "SlurmdUser=root",
        "AuthType=auth/munge",
        f"AuthInfo=socket={d}/munge.socket",
        "CredType=cred/munge",
        f"StateSaveLocation={d}/state",
        f"SlurmdSpoolDir={d}/spool/%n",
        f"SlurmctldPidFile={d}/slurmctld.pid",
        f"SlurmdPidFile={d}/slurmd.%n.pid",
        f"SlurmctldPort={port}",
        f"SlurmdPort={port + 1}",
        f"SlurmctldLogFile={d}/slurmctld.log",
        f"SlurmdLogFile={d}/slurmd.%n.log",
        "ProctrackType=proctrack/linuxproc",
        "TaskPlugin=task/none",
        "SelectType=select/cons_tres",
        "SelectTypeParameters=CR_Core",
        "ReturnToService=2",
        # job ids new to this host each cluster (from the µs clock): MPICH names its shared
        # memory after the job's PMI name ("3.0"), so a segment a crashed job 3 left in /dev/shm
        # made every later cluster's job 3 fail in MPI_Init (MPIDI_POSIX_comm_bootstrap: "Out of
        # memory")
        f"FirstJobId={1 + time.time_ns() // 1000 % 60_000_000}",
    ]
    for name, addr in nodes:
        where = f" NodeAddr={addr} NodeHostname={host}" if addr else ""
        lines.append(f"NodeName={name}{where} CPUs={cpus} RealMemory={mem_mb} State=UNKNOWN")
    lines.append("PartitionName=scope Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES")
    return "\n".join(lines) + "\n"


def _stop(d: Path) -> None:
    for pidfile in sorted(d.glob("slurmd.*.pid")) + [d / "slurmctld.pid", d / "munged.pid"]:
        try:
            os.kill(int(pidfile.read_text().split()[0]), signal.SIGTERM)
        except (OSError, ValueError, IndexError):
            pass
    time.sleep(1)


def _cluster(d: Path, nodes: list[tuple[str, str | None, str | None]], ctl: tuple[str | None, str | None]):
    """Starts munged, slurmctld (in namespace ctl[1], at address ctl[0]) and a slurmd per node
    (name, address, namespace); the client's environment, or a skip."""
    host = socket.gethostname().split(".")[0]
    for sub in ["state", *(f"spool/{n}" for n, _, _ in nodes)]:
        (d / sub).mkdir(parents=True)
    key = d / "munge.key"
    key.write_bytes(os.urandom(1024))
    key.chmod(0o600)
    conf = d / "slurm.conf"
    conf.write_text(_conf(d, host, ctl[0], [(n, a) for n, a, _ in nodes], 20000 + os.getpid() % 20000))
    env = dict(os.environ, SLURM_CONF=str(conf))

    def inside(ns: str | None) -> list[str]:
        return ["nsenter", f"--net=/run/netns/{ns}"] if ns else []

    try:
        subprocess.run(
            ["munged", f"--key-file={key}", f"--socket={d}/munge.socket", f"--pid-file={d}/munged.pid",
             f"--log-file={d}/munged.log", f"--seed-file={d}/munged.seed", "--force"],
            check=True, capture_output=True, timeout=30,
        )  # fmt: skip
        subprocess.run([*inside(ctl[1]), "slurmctld", "-f", str(conf)], check=True, capture_output=True, env=env)
        for name, addr, ns in nodes:
            argv = [*inside(ns), "slurmd", "-f", str(conf)] + (["-N", name] if addr else [])
            subprocess.run(argv, check=True, capture_output=True, env=env, timeout=60)
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as e:
        pytest.skip(f"the Slurm daemons would not start here: {e}")
    state = ""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        out = subprocess.run([*inside(ctl[1]), "sinfo", "-h", "-o", "%T"], capture_output=True, text=True, env=env)
        state = out.stdout.split()
        if len(state) == 1 and state[0] in ("idle", "mixed", "allocated"):
            # MPICH over OFI's tcp provider, not UCX: the UCX address MPICH puts through PMI is
            # long, and Slurm 22.05's mpi/pmi2 cut some such puts and rejected them ("value not
            # properly terminated"), failing every rank's MPI_Init: on some days 10 launches in
            # 10 with UCX_TLS=tcp,self; with UCX_TLS=tcp still one sbatch job in a suite run. An
            # OFI tcp address is tens of bytes (docs/slurm.md). One node still shares memory
            # through MPICH's own shm.
            return {"SLURM_CONF": str(conf), "MPIR_CVAR_CH4_NETMOD": "ofi", "FI_PROVIDER": "tcp"}
        time.sleep(0.5)
    pytest.skip(f"the Slurm cluster did not come up (sinfo: {state})")


@pytest.fixture(scope="session")
def slurm(tmp_path_factory):
    """The environment the CLI needs to use the one-node cluster: SLURM_CONF, and MPICH's
    netmod (_cluster says why)."""
    why = _why_not()
    if why:
        pytest.skip(why)
    d = tmp_path_factory.mktemp("slurm")
    try:
        yield _cluster(d, [(socket.gethostname().split(".")[0], None, None)], (None, None))
    finally:
        _stop(d)


TESTBED = "slurmtb"


@pytest.fixture(scope="session")
def slurm_testbed(tmp_path_factory):
    """(environment, namespace of the first node): two nodes, one per testbed namespace."""
    why = _why_not() or (None if shutil.which("ip") and shutil.which("tc") else "the testbed needs iproute2")
    if why:
        pytest.skip(why)
    run_scope("testbed", "down", "--name", TESTBED)
    up = run_scope("testbed", "up", "--hosts", "2", "--name", TESTBED)
    if up.returncode != 0:
        pytest.skip(f"no testbed here: {up.stderr.strip()}")
    d = tmp_path_factory.mktemp("slurmtb")
    first = f"{TESTBED}-h0"
    try:
        nodes = [(f"{TESTBED}{i}", f"198.18.0.{i + 1}", f"{TESTBED}-h{i}") for i in range(2)]
        yield _cluster(d, nodes, ("198.18.0.1", first)), first
    finally:
        _stop(d)
        run_scope("testbed", "down", "--name", TESTBED)
