"""A real one-node Slurm cluster for the tests: Debian's munged, slurmctld and slurmd, started
in a private directory with their own key, sockets, ports and state, and stopped afterwards.
Where the daemons are not installed or cannot start (not root), the fixture skips with why."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest

DAEMONS = ("munged", "slurmctld", "slurmd", "srun", "sbatch", "sinfo")


def _why_not() -> str | None:
    missing = [d for d in DAEMONS if not shutil.which(d)]
    if missing:
        return f"Slurm is not installed ({', '.join(missing)} missing; make slurm installs it from Debian)"
    if os.geteuid() != 0:
        return "starting slurmd needs root"
    return None


def _conf(d: Path, host: str, base_port: int) -> str:
    cpus = os.cpu_count() or 1
    mem_mb = int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**20 * 0.8)
    return f"""ClusterName=scopetest
SlurmctldHost={host}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket={d}/munge.socket
CredType=cred/munge
StateSaveLocation={d}/state
SlurmdSpoolDir={d}/spool
SlurmctldPidFile={d}/slurmctld.pid
SlurmdPidFile={d}/slurmd.pid
SlurmctldPort={base_port}
SlurmdPort={base_port + 1}
SlurmctldLogFile={d}/slurmctld.log
SlurmdLogFile={d}/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
NodeName={host} CPUs={cpus} RealMemory={mem_mb} State=UNKNOWN
PartitionName=scope Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
"""


def _pid(path: Path) -> int | None:
    try:
        return int(path.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


@pytest.fixture(scope="session")
def slurm(tmp_path_factory):
    """{"SLURM_CONF": path}: the environment the CLI needs to use the cluster."""
    why = _why_not()
    if why:
        pytest.skip(why)
    d = tmp_path_factory.mktemp("slurm")
    for sub in ("state", "spool"):
        (d / sub).mkdir()
    key = d / "munge.key"
    key.write_bytes(os.urandom(1024))
    key.chmod(0o600)
    host = socket.gethostname().split(".")[0]
    conf = d / "slurm.conf"
    conf.write_text(_conf(d, host, 20000 + os.getpid() % 20000))
    env = dict(os.environ, SLURM_CONF=str(conf))
    started: list[Path] = []
    try:
        try:
            subprocess.run(
                ["munged", f"--key-file={key}", f"--socket={d}/munge.socket", f"--pid-file={d}/munged.pid",
                 f"--log-file={d}/munged.log", f"--seed-file={d}/munged.seed", "--force"],
                check=True, capture_output=True, timeout=30,
            )  # fmt: skip
            started.append(d / "munged.pid")
            for daemon in ("slurmctld", "slurmd"):
                subprocess.run([daemon, "-f", str(conf)], check=True, capture_output=True, env=env, timeout=60)
                started.append(d / f"{daemon}.pid")
        except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as e:
            pytest.skip(f"the Slurm daemons would not start here: {e}")
        state = ""
        deadline = time.monotonic() + 60
        while state not in ("idle", "mixed", "allocated") and time.monotonic() < deadline:
            time.sleep(0.5)
            state = subprocess.run(["sinfo", "-h", "-o", "%T"], capture_output=True, text=True, env=env).stdout.strip()
        if state not in ("idle", "mixed", "allocated"):
            pytest.skip(f"the one-node Slurm did not come up (sinfo: '{state}')")
        yield {"SLURM_CONF": str(conf)}
    finally:
        for pidfile in reversed(started):
            pid = _pid(pidfile)
            if pid:
                try:
                    os.kill(pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
        time.sleep(1)
