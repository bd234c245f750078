"""One measurement run: validate what was asked, build the engine, launch it, store each
record as it arrives, and close the run as complete or incomplete with the reason."""

from __future__ import annotations

import contextlib
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from scope.analysis.kernels import PHASED_LEVELS
from scope.catalog.baseline import DEFAULT_TESTS, launches
from scope.catalog.options import engine_argv, from_records
from scope.cores import usable_cores
from scope.envvars import check_engine_hooks
from scope.errors import ENVIRONMENT, RUN_FAILED, ScopeError
from scope.run.checks import available_memory, check_cores, clock_fits_timeout, even_screen, refuse_empty
from scope.run.combine import combine_launches
from scope.run.dryrun import dry_run
from scope.run.freeze import freeze_predictions
from scope.run.iofiles import io_directory
from scope.run.launcher import Outcome, build_launch, failure_reason, oversubscribed, run_records
from scope.run.launches import earlier_launches, launch_share
from scope.run.plan import ask, too_large
from scope.run.prepared import PreparedRun
from scope.run.progress import Progress
from scope.run.recorder import COMMIT_EVERY_S, Recorder, ended, save_stream
from scope.run.request import RunOptions, request_of
from scope.run.simrun import check_simulation, simulation
from scope.run.slurm import check_srun
from scope.run.testbed import hosts_used, load, parse_size, payload_ceiling_MBps
from scope.run.toolchain import describe, engine_digest, engine_path, find_toolchain
from scope.store import Store


@dataclass
class RunResult:
    run_id: int
    status: str
    reason: str | None
    outcome: Outcome
    points: int
    errors: list[dict]
    notes: list[str]
    skips: list[dict] = field(default_factory=list)
    faults: list[dict] = field(default_factory=list)  # the machine's: a full file system ...


def execute(o: RunOptions, store: Store, out=None) -> RunResult:
    """Asks the engine's plan (its checks of tests, parameters, sizes, process counts, the
    pattern file and every option), checks what only this machine knows, then launches and
    stores.  Warnings and progress go to `out`, else to sys.stderr as it is at the call (not
    at import: a caller that redirects stderr gets them)."""
    out = out if out is not None else sys.stderr
    if o.ranks < 1:
        raise ScopeError(f"--ranks must be at least 1, got {o.ranks}", "e.g. -n 2")
    if o.ppn and not o.testbed:
        raise ScopeError("--ppn places ranks on testbed hosts", "add --testbed NAME, or leave --ppn out")
    if not o.sim and (o.sim_cfg or o.sim_ppn != 1 or o.sim_clocks):
        raise ScopeError(
            "--sim-cfg, --sim-ppn and --sim-clocks set up a simulated run", "add --sim PLATFORM, or leave them out"
        )
    if o.sim and (o.hosts or o.testbed or o.launcher == "srun"):
        raise ScopeError("--sim runs on a simulated platform", "leave out --hosts, --testbed and --launcher srun")
    if o.sim:
        check_simulation(o)
    if o.hosts and (o.testbed or o.launcher == "srun"):  # issue 58: --hosts was silently dropped
        where = f"--testbed {o.testbed}" if o.testbed else "--launcher srun (the allocation)"
        raise ScopeError(f"--hosts and {where} both place the ranks", "give one of them")
    try:  # the run API's callers too (scope.api): the command line checked it the same way
        launches(o.launches)
    except ValueError as e:
        raise ScopeError(f"--launches {e}", "e.g. --launches 3") from None
    check_engine_hooks()  # the engine's test hooks in range, before anything is built or launched
    tc = find_toolchain(o.mpicc)
    exe = o.engine_exe or engine_path(tc)
    described = describe(exe)
    registry = [r for r in described if r.get("type") == "test"]
    table = from_records(described)
    given = dict(o.engine)
    argv = engine_argv(given, table)
    files = [f"--{t.name}" for t in table if t.kind == "path"]
    plan = ask(exe, ["--tests", ",".join(o.tests or DEFAULT_TESTS), *argv], o.ranks, files)
    refuse_empty(plan)
    if plan.points == 1 and o.launches == 1 and not o.canary:
        # the machine probes (~0.1 s of every core at each end of a launch) tell launches and
        # runs apart; one point in one launch has no launch to tell apart, and paid 60 % of its
        # engine's time for them (issue 52): probed only when asked (--canary)
        given["no-canary"] = True
    if not o.sim:  # simulated ranks are threads of one process: no core is theirs
        check_cores(o.ranks, bool(o.hosts or o.testbed), o.force)
    planned = [t for t in registry if t["name"] in plan.names]  # the descriptors of the tests to run
    clock_fits_timeout(plan.options, planned, o.ranks, o.timeout)
    if o.launcher == "srun":
        check_srun()
    refusal = None if o.sim else too_large(plan, None if o.hosts else available_memory())  # a testbed is this host
    if refusal:
        raise refusal
    pattern = given.get("pattern")
    pattern_text = Path(str(pattern)).read_text(errors="replace") if pattern else None  # the engine checked it
    bed = testbed_of(o)
    if bed is not None:
        even_screen(hosts_used(bed, o.ranks), bool(bed.get("ppn")), bed["name"], o.ranks, planned)
    budget = float(plan.options["budget"])
    if o.launches > 1:
        given.update(launch_share(plan.options, o.launches))
    with io_directory(plan, registry) as io:
        if io:
            given["io-dir"] = io[0]
        argv = ["--tests", ",".join(plan.names), *engine_argv(given, table)]
        prepared = PreparedRun(o, tc, exe, argv, registry, plan, budget, given, pattern_text, io, bed)
        if o.dry_run:
            return dry_run(prepared)
        return _launch_and_store(prepared, store, out)


def testbed_of(o: RunOptions) -> dict | None:
    """The testbed the run goes across, with its processes per host; refused before launch
    when they do not fit."""
    if not o.testbed:
        return None
    bed = load(o.testbed)
    if o.ppn:
        bed = dict(bed, ppn=o.ppn)
        hosts_used(bed, o.ranks)
    return bed


@contextlib.contextmanager
def closed_on_signal(store: Store, run_id: int):
    """A signal where no launch is running to take it (while one starts, or while what it
    reported is stored) closes the run as a launch's own handling would, then goes on up:
    no run is left `running` by a process that is gone."""
    try:
        yield
    except KeyboardInterrupt as e:
        stopped = Outcome(-1, False, "", [], interrupted=True, terminated=getattr(e, "signum", 0))
        with contextlib.suppress(ScopeError):
            if store.run(run_id)["status"] == "running":
                store.finish_run(run_id, "incomplete", failure_reason(stopped, 0.0))
        raise


CLOSE_WAIT_S = 30.0  # how long a run stopped by its store keeps trying to close it


def close_when_free(store: Store, run_id: int, reason: str) -> None:
    """Closes a run whose store failed under it (a database locked by another writer): the one
    write that must land, so it is tried again for CLOSE_WAIT_S, not left `running` for the
    next command to call its process gone (issue 58)."""
    deadline = time.monotonic() + CLOSE_WAIT_S
    while True:
        try:
            store.finish_run(run_id, "incomplete", reason)
            return
        except ScopeError:
            if time.monotonic() > deadline:
                return
            time.sleep(0.5)


def _launch_and_store(p: PreparedRun, store: Store, out) -> RunResult:
    """Launches the prepared run (each replicate launch in turn) and stores what it reports;
    a simulated run's folder goes with it, however it ends."""
    simulated = simulation(p.options) if p.options.sim else None
    try:
        return _launched(p, store, out, simulated)
    finally:
        if simulated:
            simulated.close()


def _launched(p: PreparedRun, store: Store, out, simulated) -> RunResult:
    o, tc, argv, registry, tests, budget, io, bed = (
        p.options, p.toolchain, p.argv, p.registry, p.tests, p.budget, p.io, p.testbed
    )  # fmt: skip
    pattern = o.engine.get("pattern")

    def launch_of(k: int):
        extra = [] if o.fixed_launches else earlier_launches(rec.earlier if k > 1 else {})
        if simulated:
            return simulated.launch([*argv, "--launch", str(k), *extra])
        return build_launch(tc, p.exe, [*argv, "--launch", str(k), *extra], p.where)

    source = engine_digest()  # the code that measures, beside the MPI it measures

    def annotate(ctx: dict) -> dict:
        engine = dict(ctx.get("engine") or {}, source=source)
        ctx = dict(ctx, request=request_of(o), toolchain=tc.choice(), engine=engine)
        if simulated:
            ctx = dict(ctx, sim=simulated.context)
        if bed is not None:
            used = hosts_used(bed, o.ranks)  # the screen's map of ranks to hosts: rank r on host r mod used
            ctx = dict(ctx, testbed=dict(bed, transport=transport_of(ctx, bed), hosts_used=used))
        if io is not None:
            ctx = dict(ctx, io=io[1])
        if o.module is not None:
            digest = o.module[0].digest(registry, o.module[1].get("measured_with"))
            ctx = dict(ctx, module=dict(o.module[1], digest=digest))
        if p.pattern_text is not None:
            ctx = dict(ctx, pattern={"file": str(Path(str(pattern)).resolve()), "text": p.pattern_text})
        return ctx

    launch = launch_of(1)
    notes = []
    if simulated and simulated.hint:
        print(f"scope: warning [sim-scale]: {simulated.hint} (hint: add --sim-cfg scale; docs/sim.md)", file=out)
    if oversubscribed(o.ranks, o.hosts) and not o.sim:  # simulated ranks are threads on a simulated platform
        notes.append(
            f"{o.ranks} ranks on {usable_cores()} cores: oversubscribed, "
            "timings will not represent the hardware" + (f"; set {', '.join(launch.notes)}" if launch.notes else "")
        )
        for n in notes:
            print(f"scope: warning [oversubscribed]: {n}", file=out)

    save_dir = save_stream(o.save_stream, [t for t in registry if t["name"] in tests]) if o.save_stream else None
    run_id = store.begin_run(launch.argv, o.launcher, o.ranks, o.label, o.launches, registry)
    with closed_on_signal(store, run_id):
        if io is not None:
            store.set_scratch(run_id, [io[0]])
        progress = Progress(out, enabled=o.progress, launches=o.launches)
        rec = Recorder(store, run_id, o.ranks, o.launcher, annotate, save_dir)

        def on_record(r: dict) -> None:
            if r["type"] == "plan":
                progress.plan(r, rec.launch)
            rec(r)
            progress.record(r)

        idle = o.timeout or max(120.0, 30.0 * budget)
        try:
            for k in range(1, o.launches + 1):
                rec.start_launch(k)
                try:
                    outcome = run_records(
                        launch_of(k) if k > 1 else launch, on_record, idle, store.commit_pending, COMMIT_EVERY_S
                    )
                    store.commit()
                except ScopeError as e:  # the store failed mid-run: the job is stopped; close the run if we can
                    progress.close()
                    close_when_free(store, run_id, f"stopped: {e.message}")
                    raise
                if not outcome.ran_through or rec.schema_error:
                    break
        finally:
            rec.close_saved()
        progress.close()
        combine_launches(store, run_id, o.launches, commit=False)  # committed with the run's end

        status, reason = final_status(rec, outcome, (k, o.launches), idle, budget)
        finished = status in ("complete", "errors")
        keep_stderr = outcome.stderr if not finished or outcome.returncode else None
        if outcome.noise and not finished:
            keep_stderr = (keep_stderr or "") + "\n--- launcher stdout ---\n" + "\n".join(outcome.noise[-40:])
        if bed is not None:
            check_crossed_link(store, run_id, bed)
        store.finish_run(run_id, status, reason, keep_stderr)
        if finished and any(t.get("level") in PHASED_LEVELS for t in registry if t["name"] in tests):
            freeze_predictions(store, run_id)  # as they stand now, never to change
        return RunResult(run_id, status, reason, outcome, rec.points, rec.errors, notes, rec.skips, rec.faults)


def final_status(rec: Recorder, outcome: Outcome, launch: tuple[int, int], idle: float, budget: float):
    """A run's status and its reason, decided in one place: incomplete when a record had the
    wrong shape, the machine failed, or a launch did not run through (`launch`: which of how
    many); else complete, or errors where points recorded them."""
    if rec.schema_error:
        return "incomplete", rec.schema_error[0]
    if rec.faults:
        return "incomplete", f"fault of the machine: {rec.faults[0]['message']}"
    if outcome.ran_through:
        return ended(rec.errors)
    reason = failure_reason(outcome, idle, budget)
    k, of = launch
    return "incomplete", f"launch {k} of {of}: {reason}" if of > 1 else reason


def transport_of(ctx: dict, bed: dict) -> str:
    """How ranks 0 and 1 of a testbed run talked: recorded, not assumed."""
    place = {p["rank"]: p for p in ctx.get("placement", [])}
    env = ctx.get("env", {})
    if 0 in place and 1 in place and place[0].get("netns") == place[1].get("netns"):
        return "ranks 0 and 1 shared a network namespace: not a network path"
    tls = env.get("UCX_TLS", "")
    if env.get("MPIR_CVAR_NOLOCAL") == "1":
        return f"TCP over veth between namespaces ({tls}, MPICH shared memory off)"
    if env.get("MPIR_CVAR_NUM_CLIQUES"):
        return (
            f"TCP over veth between namespaces ({tls}); shared memory within a host "
            f"({bed.get('ppn')} ranks per host, MPIR_CVAR_NUM_CLIQUES={env['MPIR_CVAR_NUM_CLIQUES']})"
        )
    return f"TCP over veth between namespaces ({tls}, MPICH shared memory ON: MPI may bypass the network)"


def check_crossed_link(store: Store, run_id: int, bed: dict) -> None:
    """On a shaped testbed, traffic faster than the link did not cross it: say so.  A test's
    role `link:K` says its bandwidth crosses the link K times at once (the engine's word)."""
    limit = bed.get("payload_MBps")
    if not limit:
        return
    burst = parse_size(str(bed.get("burst") or "0"))
    run = store.load_run(run_id, samples=False)
    for p in run.points:
        crossings = run.info(p.test).role("link")
        if not crossings or not p.size or p.size < 262144 or not p.bw_median:
            continue
        per_link = p.bw_median / int(crossings)
        # a sample may borrow the bucket's burst (payload_ceiling_MBps); a quarter above that
        # is no noise: the traffic went another way
        if per_link > 1.25 * payload_ceiling_MBps(bed["rate_bits"], bed["mtu"], burst, p.size * p.ops_per_iter):
            store.add_event(
                run_id,
                {
                    "type": "warning",
                    "kind": "transport",
                    "test": p.test,
                    "message": f"{p.test} moved {per_link:.0f} MB/s over a link shaped to {limit:.1f} MB/s: "
                    "its traffic did not cross the testbed link",
                    "hint": "check that MPIR_CVAR_NOLOCAL=1 and UCX_TLS=tcp,self reached the ranks",
                },
            )
            return


def raise_for(result: RunResult) -> None:
    """Turn an incomplete run into the one-line error the CLI prints (a run with failed checks
    ran to its end: the CLI prints each error and exits 1)."""
    if result.status in ("complete", "errors"):
        return
    t = result.outcome.terminated
    code = 128 + t if t else 130 if result.outcome.interrupted else ENVIRONMENT if result.faults else RUN_FAILED
    raise ScopeError(
        f"run {result.run_id} stopped early: {result.reason}; {result.points} points were kept",
        f"see 'scope show {result.run_id}'; the launcher's stderr is stored with the run",
        code,
    )
