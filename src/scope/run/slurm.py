"""Slurm as clusters use it: the allocation a run is in (read, not assumed), srun's arguments for
the MPI at hand, and what the run records of the job.

srun starts the ranks itself, and they find each other through Slurm's PMI server.  When the
MPI and that PMI do not speak the same protocol, every rank starts as its own MPI_COMM_WORLD of
one: the runner checks the world size the engine reports against the tasks asked for."""

from __future__ import annotations

import os
import re
import shutil
import subprocess

from scope.errors import ENVIRONMENT, USAGE, ScopeError

# The PMI an MPI's ranks speak under srun, when the user's --launcher-args name none: MPICH's
# libpmi client speaks PMI-2 (and PMI-1), which Slurm's mpi/pmi2 plugin serves.
PMI_FOR = {"mpich": "pmi2"}


def srun_args(flavor: str, given: list[str]) -> list[str]:
    """srun's extra arguments: --mpi=PLUGIN for the MPI unless the user chose one."""
    if any(a.startswith("--mpi") for a in given) or flavor not in PMI_FOR:
        return []
    return [f"--mpi={PMI_FOR[flavor]}"]


def expand_hostlist(text: str) -> list[str]:
    """Slurm's compressed host list (node[01-03,07],login1) as names: scontrol's own expansion
    where it is installed, else the same rules here."""
    if not text:
        return []
    if shutil.which("scontrol"):
        p = subprocess.run(["scontrol", "show", "hostnames", text], capture_output=True, text=True)
        if p.returncode == 0 and p.stdout.strip():
            return p.stdout.split()
    out = []
    for part in re.findall(r"[^,\[]+(?:\[[^\]]*\])?[^,]*", text):
        m = re.fullmatch(r"(.*?)\[([^\]]*)\](.*)", part)
        if not m:
            out.append(part)
            continue
        head, ranges, tail = m.groups()
        for r in ranges.split(","):
            lo, _, hi = r.partition("-")
            width = len(lo)
            for i in range(int(lo), int(hi or lo) + 1):
                out.append(f"{head}{i:0{width}d}{tail}")
    return out


def allocation(env: dict[str, str] | None = None) -> dict | None:
    """The Slurm job a process runs in (its environment), or None outside one."""
    env = dict(os.environ) if env is None else env
    job = env.get("SLURM_JOB_ID") or env.get("SLURM_JOBID")
    if not job:
        return None
    nodes = expand_hostlist(env.get("SLURM_JOB_NODELIST") or env.get("SLURM_NODELIST") or "")
    return {
        "job_id": job,
        "nodelist": nodes,
        "nodes": len(nodes),
        "ntasks": int(env["SLURM_NTASKS"]) if env.get("SLURM_NTASKS", "").isdigit() else None,
        "tasks_per_node": env.get("SLURM_TASKS_PER_NODE"),
        "partition": env.get("SLURM_JOB_PARTITION"),
    }


def default_ranks(launcher: str) -> int | None:
    """Inside an allocation, srun's natural size: the tasks the job was given."""
    a = allocation() if launcher == "srun" else None
    return a["ntasks"] if a and a["ntasks"] else None


def world_mismatch(size: int, asked: int, launcher: str) -> ScopeError:
    if launcher == "srun":
        hint = "srun and the MPI do not share a PMI: give --launcher-args='--mpi=pmi2' (or the plugin your MPI uses)"
    else:
        hint = "the launcher belongs to another MPI than the engine's build: use that MPI's mpiexec (--mpicc)"
    return ScopeError(
        f"the ranks started as MPI worlds of {size}, not one world of {asked}: the processes did not find each other",
        hint,
        USAGE,
    )


def check_srun(env: dict[str, str] | None = None) -> None:
    """Before a run is created: srun is there and, outside an allocation, a Slurm controller
    answers (`scontrol ping`), else exit 3 in Slurm's own words (not an empty stored run)."""
    env = os.environ if env is None else env
    if not shutil.which("srun"):
        raise ScopeError("srun is not on PATH", "run on a Slurm node, or --launcher mpiexec", ENVIRONMENT)
    if env.get("SLURM_JOB_ID"):
        return  # inside an allocation: its controller placed this very process
    try:
        p = subprocess.run(["scontrol", "ping"], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise ScopeError(
            f"no Slurm controller answers: {e}", "start slurmctld, or --launcher mpiexec", ENVIRONMENT
        ) from None
    said = (p.stdout + p.stderr).strip().splitlines()
    if p.returncode != 0 or any("DOWN" in line for line in said):
        reason = said[-1].removeprefix("scontrol: ") if said else f"scontrol ping exited {p.returncode}"
        raise ScopeError(
            f"no Slurm controller answers: {reason}", "start slurmctld, or --launcher mpiexec", ENVIRONMENT
        )
