"""The measurements of scope tune: where each launch set runs (layouts), one stored run of a
collective with an algorithm or a file in force, and the MPI's own version string."""

from __future__ import annotations

import io
import sys
from dataclasses import dataclass

from scope.analysis.tuning import DEFAULT
from scope.errors import ScopeError, Terminated
from scope.run.request import RunOptions
from scope.run.runner import execute
from scope.run.testbed import fits, load
from scope.tune.drivers import Driver
from scope.tune.options import TuneOptions


@dataclass(frozen=True)
class Layout:
    """Where one tuning launch set runs: `ranks` processes, measured at `procs`, `ppn` per
    testbed host (None: as the launcher places them)."""

    ranks: int
    procs: str
    ppn: int | None = None

    def __str__(self) -> str:
        return f"{self.ranks} ranks at {self.ppn} per host" if self.ppn else f"{self.ranks} ranks"


def layouts(o: TuneOptions) -> list[Layout]:
    """The placements to tune for: the launch as given, or with --ppn every (ppn, procs) the
    testbed can hold, each launched at exactly its process count so that every point has that
    many processes per host (MPICH's comm_avg_ppn sees the same)."""
    if not o.ppn:
        return [Layout(o.ranks, o.procs)]
    if not o.testbed:
        raise ScopeError("--ppn places processes on testbed hosts", "add --testbed NAME, or leave --ppn out")

    hosts = len(load(o.testbed)["hosts"])
    ppns, procs = counts(o.ppn, "--ppn"), counts(str(o.ranks) if o.procs == "all" else o.procs, "--procs")
    out = [Layout(p, str(p), k) for k in ppns for p in procs if fits(p, k, hosts)]
    if not out:
        raise ScopeError(
            f"no process count in {o.procs} fits {o.ppn} per host on {hosts} hosts",
            "use process counts that are multiples of --ppn, at most ppn x hosts",
        )
    return out


def counts(text: str, flag: str) -> list[int]:
    try:
        out = sorted({int(x) for x in text.split(",")})
    except ValueError:
        out = []
    if not out or out[0] < 1:
        raise ScopeError(f"{flag} expects whole numbers, e.g. 1,2; got '{text}'")
    return out


def launch(o: TuneOptions, store, coll: str, label: str, env: dict, launches: int, at: Layout):
    """One stored run of the collective as the tuning measures it (sizes, budget, MPI, testbed
    from the command line; ranks, procs and ppn from the layout), with `env` in force."""

    o = RunOptions(
        tests=[f"coll.{coll}"],
        ranks=at.ranks,
        engine={"sizes": o.sizes, "procs": at.procs, "budget": o.budget},
        env=env,
        label=label + (f" ppn={at.ppn}" if at.ppn else ""),
        mpicc=o.mpicc,
        testbed=o.testbed,
        ppn=at.ppn,
        timeout=o.timeout,
        progress=False,
        launches=launches,
    )
    return execute(o, store, out=io.StringIO())


def stop_if_interrupted(r) -> None:
    """Ctrl-C or an ending signal during a launch stops the whole tuning at once (exit 130 or
    128 + N, no file written): the run that was stopped is closed, nothing more is launched."""
    if r.outcome.interrupted:
        raise Terminated(r.outcome.terminated) if r.outcome.terminated else KeyboardInterrupt()


def why(r) -> str:
    """What stopped a run, in the MPI's words where it gave some: one line."""
    return str((r.errors[0].get("message") if r.errors else None) or r.reason or r.status).splitlines()[0]


def measure(o: TuneOptions, store, drv: Driver, coll: str, algs: dict[str, str], where: list[Layout]):
    """One run per algorithm and layout, the default first.  {algorithm: run ids},
    {ppn: {algorithm: points}}, {algorithm: why not}: an algorithm whose run fails or hangs
    (stopped by the timeout) is left out where it did, with the reason; a refusal of the
    options (exit 2, checked before as well) or an interruption stops the tuning."""
    runs: dict[str, list[int]] = {}
    points: dict[int | None, dict[str, list]] = {}
    refused: dict[str, str] = {}
    for i, alg in enumerate([DEFAULT, *algs]):
        print(f"scope tune: {coll} {alg} ({i + 1} of {len(algs) + 1})", file=sys.stderr)
        env = {} if alg == DEFAULT else drv.force(coll, algs[alg])
        for at in where:
            r = launch(o, store, coll, f"tune {coll} {alg}", env, o.launches, at)
            stop_if_interrupted(r)
            runs.setdefault(alg, []).append(r.run_id)
            if r.status == "complete" and r.points:
                points.setdefault(at.ppn, {}).setdefault(alg, []).extend(store.load_run(r.run_id, samples=False).points)
            else:
                refused[alg] = why(r)[:160] + (f" (run {r.run_id}, {at})" if len(where) > 1 else f" (run {r.run_id})")
    return runs, points, refused
