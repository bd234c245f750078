"""`scope predict KERNEL --sim`: the kernel's own code run under SimGrid's SMPI on a platform
calibrated from the same lower-level runs the analytic prediction reads (issue 73): its
messages on the calibrated network, its computation timed as SMPI times it (each burst between
MPI calls measured on this host and run on a simulated host of the calibrated speed), so a
prediction at process counts no machine here has is the kernel's, not a cost model's.

SMPI times a burst by this host's clock and scales it by smpi/host-speed (this host's flop/s)
over the platform host's speed: both are the calibrated speed (node.dgemm's rate a core, or
1 Gflop/s without one), so a burst takes the time it took here. The platform is one host with
a core a rank, as the measured runs had (more ranks than this machine's cores are simulated
each on a core of its own: said as oversubscribed where the measurement was)."""

from __future__ import annotations

import tempfile
from pathlib import Path

from scope.analysis.kernels import kernel_points
from scope.analysis.simcal import DEFAULT_FLOPS, HINT, calibrate
from scope.errors import USAGE, ScopeError
from scope.model import Run
from scope.run.request import RunOptions
from scope.run.runner import execute, raise_for
from scope.run.simcal import WhatIf, calibrated_xml, computation_config
from scope.store import Store


def simulated(store: Store, test: str, setting: dict, procs: list[int], runs: list[Run]) -> tuple[dict, dict]:
    """({procs: simulated median us}, what was simulated on: the calibration's record and the
    simulated run's id)."""
    cal = calibrate(runs)
    if isinstance(cal, str):
        raise ScopeError(f"cannot simulate {test}: {cal}", HINT, USAGE)
    speed = cal.flops_per_core or DEFAULT_FLOPS
    ranks = max(procs)
    params = [f"{k}={v}" for k, v in setting.items()]
    with tempfile.TemporaryDirectory(prefix="scope-simpredict-") as tmp:
        plat = Path(tmp) / "calibrated.xml"
        plat.write_text(calibrated_xml(cal, WhatIf(hosts=1, cores=ranks)))
        o = RunOptions(
            tests=[test],
            ranks=ranks,
            engine={"procs": ",".join(map(str, procs)), "param": params},
            label=f"predict --sim of {test}",
            progress=True,
            launches=1,
            sim=str(plat),
            sim_ppn=ranks,
            sim_cfg=computation_config(cal.record()),
            sim_clocks="none",
        )
        result = execute(o, store)
        raise_for(result)
    run = store.load_run(result.run_id, samples=False)
    out = {k.procs: k.median for k in kernel_points(run) if k.test == test}
    return out, {"run": result.run_id, "calibration": cal.record(), "host_speed_flops": speed}
