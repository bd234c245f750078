"""How each MPI names, forces and takes its collective algorithms (MPICH's control variables,
Open MPI's coll/tuned), and the algorithms it offers."""

from __future__ import annotations

import contextlib
import os
import subprocess
from pathlib import Path

from scope.analysis.tuning import algorithms_from
from scope.errors import ScopeError
from scope.run.launcher import OPENMPI_AS_ROOT
from scope.run.stream import engine_records
from scope.run.toolchain import mpi_library
from scope.tune.files import OMPI_COLL_ID, openmpi_rules_error, write_mpich, write_openmpi

COLLECTIVES = ("allreduce", "bcast", "allgather", "alltoall", "reduce", "barrier")


class Driver:
    """How one MPI names, forces and takes its collective algorithms."""

    flavor = "mpich"

    def cvar(self, coll: str) -> str:
        return f"MPIR_CVAR_{coll.upper()}_INTRA_ALGORITHM"

    def offered(self, rec: dict) -> dict[str, str]:
        """name -> the value that forces it, from the cvar's record (MPICH: names in the text)."""
        return {a: a for a in algorithms_from(rec.get("description") or "")}

    def force(self, coll: str, value: str) -> dict[str, str]:
        return {self.cvar(coll): value, "MPIR_CVAR_COLLECTIVE_FALLBACK": "error"}

    def with_file(self, path: Path) -> dict[str, str]:
        return {"MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE": str(path)}

    def check(self, path: Path, exe) -> str | None:
        """A dry run: MPICH parses the file at start-up and refuses one it cannot."""
        return mpi_version(exe, self.with_file(path))[1] or None

    def write(self, path: str, tuned: dict, ids: dict, exe, version: str) -> Path:

        return write_mpich(path, tuned, exe, version)


class OpenMPIDriver(Driver):
    """coll/tuned: algorithms are an MPI_T enumeration whose values are their ids (0 = the fixed
    decision); forcing one and reading a rules file both need use_dynamic_rules."""

    flavor = "openmpi"

    def cvar(self, coll: str) -> str:
        return f"coll_tuned_{coll}_algorithm"

    def offered(self, rec: dict) -> dict[str, str]:
        return {c["name"]: str(c["value"]) for c in rec.get("choices") or [] if c.get("value")}

    def force(self, coll: str, value: str) -> dict[str, str]:
        return {"OMPI_MCA_coll_tuned_use_dynamic_rules": "1", f"OMPI_MCA_{self.cvar(coll)}": value}

    def with_file(self, path: Path) -> dict[str, str]:
        return {"OMPI_MCA_coll_tuned_use_dynamic_rules": "1", "OMPI_MCA_coll_tuned_dynamic_rules_filename": str(path)}

    def check(self, path: Path, exe) -> str | None:
        """Open MPI ignores a rules file it cannot parse without a word: SCOPE checks the grammar,
        and every algorithm id against those this Open MPI offers (MPI_T, as ompi_info lists)."""
        offered = {}
        for coll, cid in OMPI_COLL_ID.items():
            with contextlib.suppress(ScopeError):  # a collective this MPI names nothing for
                offered[cid] = {int(v) for v in algorithms(exe, self, coll).values()}
        why = openmpi_rules_error(path.read_text(), offered)
        return f"{why} (Open MPI would ignore the file silently)" if why else None

    def write(self, path: str, tuned: dict, ids: dict, exe, version: str) -> Path:

        return write_openmpi(path, tuned, {c: {a: int(v) for a, v in m.items()} for c, m in ids.items()}, version)


def driver_for(flavor: str) -> Driver:
    if flavor == "openmpi":
        return OpenMPIDriver()
    if flavor == "mpich":
        return Driver()
    raise ScopeError(f"scope tune drives MPICH and Open MPI, not {flavor}", "use --mpicc with one of them")


def algorithms(exe, drv: Driver, coll: str) -> dict[str, str]:
    """The algorithms the MPI names for a collective (MPI_T, through the engine)."""
    cvar = drv.cvar(coll)
    p = subprocess.run(
        [str(exe), "--cvars", cvar], capture_output=True, text=True, timeout=60, env={**os.environ, **OPENMPI_AS_ROOT}
    )
    recs = engine_records(p.stdout)
    rec = next((r for r in recs if r.get("name") == cvar), None)
    if p.returncode or not rec:
        raise ScopeError(
            f"this MPI names no algorithms for {coll} ({cvar} is not among its control variables)",
            "see docs/tuning.md for the MPIs scope tune drives",
        )
    return drv.offered(rec)


def mpi_version(exe, env: dict | None = None) -> tuple[str, str]:
    """The MPI library's own version string; with `env`, from a singleton engine started with it
    (and its stderr when the MPI would not start, e.g. on a tuning file it cannot parse).
    Without, the engine reads it without starting MPI: an Open MPI singleton leaves its
    shared-memory segment behind in /dev/shm."""
    if not env:
        return mpi_library(exe), ""
    p = subprocess.run(
        [str(exe), "--timers"],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **OPENMPI_AS_ROOT, **(env or {})},
    )
    version = next((r.get("mpi_library", "") for r in engine_records(p.stdout) if r.get("type") == "timers"), "")
    return version.splitlines()[0].strip() if version else "", "" if p.returncode == 0 else p.stderr.strip()
