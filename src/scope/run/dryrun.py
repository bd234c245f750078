"""`scope run --dry-run`: the run as it would launch, after every check, with nothing launched,
stored or written (docs/json.md, `scope-dry-run`)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from scope.run import sim
from scope.run.launcher import build_launch
from scope.run.prepared import PreparedRun
from scope.run.recorder import free_stream_dir
from scope.run.simplatform import read_platform
from scope.run.simrun import settings


@dataclass
class DryRun:
    """What `scope run --dry-run` found: the run as it would launch, every check passed, nothing
    launched or stored (docs/json.md, `scope-dry-run`)."""

    doc: dict


def dry_run(p: PreparedRun) -> DryRun:
    """Every option as the run would use it: the first launch's command line and the
    environment it adds, the engine's options as its plan parsed them, and what the front end
    keeps for itself (launches, timeout, label, saved stream, module)."""
    o, tc, argv, plan, budget, bed, given = p.options, p.toolchain, p.argv, p.plan, p.budget, p.testbed, p.given
    if o.save_stream:
        free_stream_dir(o.save_stream)
    launch = build_launch(tc, p.exe, [*argv, "--launch", "1"], p.where)
    added = {k: v for k, v in launch.env.items() if os.environ.get(k) != v and not k.startswith("SCOPE_WATCH_")}
    doc_config = settings(o, read_platform(o.sim).calibration) if o.sim else None  # SimGrid's settings
    doc = {
        "format": "scope-dry-run",
        "argv": launch.argv,
        "env": added,
        "ranks": o.ranks,
        "tests": plan.names,
        "points": plan.points,
        "options": dict(plan.options, **{"no-canary": bool(given.get("no-canary"))}),  # as launched
        "launches": o.launches,
        "fixed_launches": o.fixed_launches,
        "timeout_s": o.timeout or max(120.0, 30.0 * budget),
        "label": o.label,
        "progress": o.progress,
        "force": o.force,
        "save_stream": o.save_stream,
        "testbed": bed.get("name") if bed else None,
        "ppn": o.ppn,
        "toolchain": tc.choice(),
        "module": o.module[1] if o.module else None,
        "sim": {
            "platform": o.sim,
            "ranks_per_host": o.sim_ppn,
            "config": doc_config,
            "host_clocks": sim.host_clocks(o.sim_clocks),
        }
        if o.sim
        else None,  # fmt: skip
    }
    if o.sim:  # smpirun's command line, without building the simulation engine for a dry run
        _, run = sim.tools()
        first = [*argv, "--launch", "1"]
        doc["argv"] = sim.launch_argv(run, o.ranks, o.sim, Path("HOSTFILE"), Path("SIM-ENGINE"), first, doc_config)
    return DryRun(doc)
