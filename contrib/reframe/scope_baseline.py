"""A ReFrame test for HPC sites: SCOPE's point-to-point baseline on a system, its figures
reported as ReFrame performance variables (so ReFrame's references and perflogs track them).

    reframe -c contrib/reframe/scope_baseline.py -r                     # scope on PATH
    reframe -c contrib/reframe/scope_baseline.py -r -S scope=/path/to/bin/scope -S ranks=2

The run goes through `scope run` as a user starts it (SCOPE builds its engine for the MPI it
finds, `--launcher srun` inside an allocation when `launcher=srun`); the figures are read from
`scope show --json` (docs/json.md), never from the printed tables.  Variables: `scope` (the
command), `ranks`, `launcher` (mpiexec or srun) and `scope_args` (default: the fixed baseline
module, `--module baseline`)."""

import json
import os

import reframe as rfm
import reframe.utility.sanity as sn
from reframe.core.builtins import performance_function, run_after, sanity_function, variable

PINGPONG, STREAM = "p2p.pingpong", "p2p.stream"


@sn.deferrable
def scope_figure(path, test, what):
    """A figure of one test from `scope show --json`: latency (µs at its smallest size),
    bandwidth (MB/s, its largest), t0 (µs) or rinf (MB/s) of the Hockney fit."""
    with open(path) as f:
        doc = json.load(f)
    points = [p for p in doc["points"] if p.get("test") == test and p.get("stats", {}).get("median") is not None]
    if what == "latency":
        return min(points, key=lambda p: p["params"].get("size", 0))["stats"]["median"]
    if what == "bandwidth":
        return max(p["bandwidth_MBps"]["median"] or 0 for p in points)
    fit = next(f["hockney"] for f in doc["fits"] if f["test"] == test and f["hockney"])
    return fit["t0_us"] if what == "t0" else fit["rinf_MBps"]


@rfm.simple_test
class ScopeBaseline(rfm.RunOnlyRegressionTest):
    descr = "SCOPE's point-to-point baseline: latency, bandwidth and the Hockney fit"
    valid_systems = ["*"]
    valid_prog_environs = ["*"]
    scope = variable(str, value="scope")
    ranks = variable(int, value=2)
    launcher = variable(str, value="mpiexec")
    scope_args = variable(str, value="--module baseline")
    num_tasks = 1  # scope launches the MPI job itself
    tags = {"scope", "benchmark", "network"}

    @run_after("init")
    def set_command(self):
        self.executable = self.scope
        db = "scope-results.db"
        self.executable_opts = ["--db", db, "run", *self.scope_args.split(), "-n", str(self.ranks),
                                "--launcher", self.launcher, "--quiet"]  # fmt: skip
        self.postrun_cmds = [f"{self.scope} --db {db} show last --json > scope-show.json"]

    @sanity_function
    def stored_a_run(self):
        return sn.all([sn.assert_found(r"Results: run \d+", self.stdout), sn.assert_eq(self.job.exitcode, 0)])

    def _figure(self, test, what):
        return scope_figure(os.path.join(self.stagedir, "scope-show.json"), test, what)

    @performance_function("us")
    def latency(self):
        return self._figure(PINGPONG, "latency")

    @performance_function("us")
    def hockney_t0(self):
        return self._figure(PINGPONG, "t0")

    @performance_function("MB/s")
    def hockney_rinf(self):
        return self._figure(PINGPONG, "rinf")

    @performance_function("MB/s")
    def stream_bandwidth(self):
        return self._figure(STREAM, "bandwidth")
