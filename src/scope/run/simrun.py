"""A run on a simulated platform (`scope run --sim`, docs/sim.md): what is checked before
anything is built, and the launches and context of the run itself; run/sim.py holds SimGrid's
side (platforms, settings, clocks)."""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from scope.analysis.simnet import undetached_config
from scope.run import sim
from scope.run.launcher import Launch, watch_env
from scope.run.request import RunOptions
from scope.run.simplatform import read_platform
from scope.run.toolchain import sim_engine_path


def check_simulation(o: RunOptions) -> None:
    """What a simulated run is refused for before anything is built: no SimGrid, a platform
    that is none or holds what SimGrid would abort on, more ranks than its cores, a setting or
    clock draw that is no such thing, more memory maps than the kernel allows."""
    sim.tools()
    sim.check_maps(o.ranks)  # the machine's limit first: no platform could lift it
    sim.check_cores(read_platform(o.sim), o.ranks, o.sim_ppn)
    sim.config_of(o.sim_cfg, o.ranks)
    sim.host_clocks(o.sim_clocks)


def settings(o: RunOptions, calibration: dict | None) -> list[str]:
    """The SimGrid settings of the run (sim.config_of), and where its platform is calibrated
    and its sends are not all detached, the latency factors that keep the host's time in the
    one-way time (analysis/simcal.py, undetached_config); a --sim-cfg of them is the user's."""
    config = sim.config_of(o.sim_cfg, o.ranks)
    if not any(c.startswith("smpi/lat-factor:") for c in config):
        config += undetached_config(calibration, sim.detached_thresh(config))
    return config


@dataclass(frozen=True)
class Simulated:
    launch: Callable[[list[str]], Launch]  # a launch of the simulation engine with these arguments
    context: dict  # what the run's context records of the simulation (run/sim.py, context_of)
    hint: str | None  # the [sim-scale] warning, where the run is large and lacks --sim-cfg scale
    folder: Path  # the run's hostfile and SMPI's copies of the engine, removed with the run (close)

    def close(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)


def simulation(o: RunOptions) -> Simulated:
    """A simulated run's launches (smpirun on the platform, the simulation engine), what its
    context records, and whether it is told of --sim-cfg scale; SimGrid reads the platform and
    settings once first (sim.preflight), so what it refuses leaves no run behind."""
    smpicc, smpirun = sim.tools()
    platform = read_platform(o.sim)
    per_host = sim.check_cores(platform, o.ranks, o.sim_ppn)
    exe = sim_engine_path(smpicc)
    folder = Path(tempfile.mkdtemp(prefix="scope-sim-"))
    try:
        hf = sim.hostfile(platform.hosts, o.ranks, o.sim_ppn, folder / "hostfile")
        clocks = sim.host_clocks(o.sim_clocks)
        env = dict(os.environ, **watch_env(), **sim.engine_env(clocks), **o.env)
        config = settings(o, platform.calibration)
        here = [*config, f"smpi/tmpdir:{folder}"]  # SMPI's per-rank copies of the engine go with the folder
        sim.preflight(smpirun, exe, o.sim, hf, here)
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise

    def launch(engine_args: list[str]) -> Launch:
        return Launch(sim.launch_argv(smpirun, o.ranks, o.sim, hf, exe, engine_args, here), env, "smpirun", [])

    context = sim.context_of(o.sim, platform.sha256, platform.hosts, per_host, config, clocks)
    if platform.calibration:  # which runs and fits the platform's values came from
        context["calibration"] = platform.calibration
    return Simulated(launch, context, sim.scale_hint(o.ranks, config), folder)
