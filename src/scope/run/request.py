"""What is asked of a run (RunOptions), stored in its context so that the run can be measured
again as it was (`scope compare --rerun`): the tests, ranks, engine options by name, launcher,
hosts, environment, MPI compiler and testbed; not its label, progress or saved streams."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

from scope.errors import ScopeError


@dataclass
class RunOptions:
    tests: list[str] = field(default_factory=list)
    ranks: int = 2
    engine: dict[str, object] = field(default_factory=dict)  # the engine options given, by name
    launcher: str = "mpiexec"
    hosts: list[str] | None = None
    launcher_args: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    mpicc: str | None = None
    label: str | None = None
    timeout: float | None = None
    progress: bool = True
    testbed: str | None = None
    ppn: int | None = None  # processes per testbed host (default: ranks spread over all hosts)
    force: bool = False  # run even far beyond the cores (more than OVERSUBSCRIBE_MAX per core)
    launches: int = 1  # separate launches of the job: the replicates (analysis/replicates.py)
    fixed_launches: bool = False  # every launch to its share of the precision (no --earlier-launches)
    module: tuple | None = None  # (modules.Module, what the context records of it)
    save_stream: str | None = None  # a directory: each launch's records as stored, for `scope import`
    dry_run: bool = False  # every check, then the run as it would launch; nothing launched or stored
    canary: bool = False  # probe the machine even in a run of one point and one launch
    sim: str | None = None  # a SimGrid platform file: the run is simulated (run/sim.py)
    sim_ppn: int = 1  # ranks per simulated host
    sim_cfg: list[str] = field(default_factory=list)  # SimGrid settings (KEY:VALUE, or exact)
    sim_clocks: str | None = None  # SEED:MAX_OFFSET_US:MAX_DRIFT_PPM or none (None: SIM_HOST_CLOCKS)
    engine_exe: Path | None = None  # the engine the command line was read against (None: found here)


KEPT = ("tests", "ranks", "engine", "launcher", "hosts", "launcher_args", "env", "mpicc", "testbed", "ppn", "force")


def request_of(o: RunOptions) -> dict:
    return {k: getattr(o, k) for k in KEPT} | {"launches": o.launches}


def options_of(request: dict | None, run_id: int, **overrides) -> RunOptions:
    """The options a stored request asked for, with `overrides` (e.g. one launch, a label)."""
    if not request:
        raise ScopeError(
            f"run {run_id} does not record what was asked of it (made before SCOPE kept that, or imported)",
            "measure both settings again with 'scope run', or compare the stored runs as they are",
        )
    o = RunOptions(**{k: request[k] for k in KEPT if k in request})
    return replace(o, **overrides)
