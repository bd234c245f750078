"""One measurement run: validate what was asked, build the engine, launch it, store each
record as it arrives, and close the run as complete or incomplete with the reason."""

from __future__ import annotations

import fnmatch
import sys
from dataclasses import dataclass, field
from pathlib import Path

from scope.errors import RUN_FAILED, USAGE, ScopeError
from scope.launcher import Outcome, build_launch, failure_reason, local_cores, oversubscribed, run_records
from scope.progress import Progress
from scope.sizes import parse_sizes
from scope.store import Store
from scope.toolchain import engine_path, find_toolchain, list_tests

BASELINE = ["p2p.pingpong", "p2p.pingping", "p2p.stream", "p2p.bistream", "p2p.exchange"]
SCHEMA_SUPPORTED = 1


@dataclass
class RunOptions:
    tests: list[str] = field(default_factory=list)
    ranks: int = 2
    sizes: str = "0-4M"
    params: list[str] = field(default_factory=list)
    precision: float = 0.01
    budget: float = 1.0
    min_count: int | None = None
    max_count: int | None = None
    warmup_max: int | None = None
    offcache: bool = False
    timer: str | None = None
    seed: int | None = None
    samples: bool = True
    launcher: str = "mpiexec"
    hosts: list[str] | None = None
    launcher_args: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    mpicc: str | None = None
    label: str | None = None
    timeout: float | None = None
    progress: bool = True
    testbed: str | None = None
    timing: str | None = None
    procs: str | None = None
    pattern: str | None = None


@dataclass
class RunResult:
    run_id: int
    status: str
    reason: str | None
    outcome: Outcome
    points: int
    errors: list[dict]
    notes: list[str]


def select_tests(patterns: list[str], registry: list[dict]) -> list[str]:
    names = [t["name"] for t in registry]
    chosen: list[str] = []
    for pat in patterns:
        for part in pat.split(","):
            part = part.strip()
            if not part:
                continue
            hits = [n for n in names if fnmatch.fnmatchcase(n, part)]
            if not hits:
                raise ScopeError(f"unknown test '{part}'", f"valid tests: {', '.join(names)}", USAGE)
            chosen += [h for h in hits if h not in chosen]
    return [n for n in names if n in chosen]


def _value_ok(p: dict, v: str) -> bool:
    if p["type"] == "int":
        try:
            return p["min"] <= int(v) <= p["max"]
        except ValueError:
            return False
    if p["type"] == "bool":
        return v.lower() in ("yes", "no", "true", "false", "1", "0", "on", "off")
    return v.lower() in (c.lower() for c in p["choices"])


def check_params(assignments: list[str], tests: list[str], registry: list[dict]) -> None:
    """The same rules as the engine, checked before any launch: a name some selected test has,
    and every value valid for at least one of those tests."""
    by_name = {t["name"]: t for t in registry}
    for a in assignments:
        name, eq, values = a.partition("=")
        if not eq or not name or not values:
            raise ScopeError(f"--param expects NAME=VALUE[,VALUE...], got '{a}'", "e.g. --param mode=standard,sync")
        specs = [p for t in tests for p in by_name[t]["params"] if p["name"] == name]
        if not specs:
            known = sorted({p["name"] for t in tests for p in by_name[t]["params"]})
            raise ScopeError(
                f"no selected test has a parameter '{name}'",
                f"parameters of the selected tests: {', '.join(known) or 'none'}",
            )
        for v in values.split(","):
            if not any(_value_ok(p, v) for p in specs):
                p = specs[0]
                dom = (
                    f"a whole number from {p['min']} to {p['max']}"
                    if p["type"] == "int"
                    else "yes or no"
                    if p["type"] == "bool"
                    else "one of " + ", ".join(p["choices"])
                )
                raise ScopeError(f"parameter {name}={v} is not valid: expected {dom}", "see 'scope list'")


def engine_args(o: RunOptions, tests: list[str]) -> list[str]:
    args = [
        "--tests",
        ",".join(tests),
        "--sizes",
        o.sizes,
        "--precision",
        repr(o.precision),
        "--budget",
        repr(o.budget),
    ]
    for p in o.params:
        args += ["--param", p]
    for flag, v in (
        ("--min-count", o.min_count),
        ("--max-count", o.max_count),
        ("--warmup-max", o.warmup_max),
        ("--timer", o.timer),
        ("--seed", o.seed),
    ):
        if v is not None:
            args += [flag, str(v)]
    if o.offcache:
        args.append("--offcache")
    if o.timing:
        args += ["--timing", o.timing]
    if o.procs:
        args += ["--procs", o.procs]
    if o.pattern:
        args += ["--pattern", str(Path(o.pattern).resolve())]
    if not o.samples:
        args.append("--no-samples")
    return args


def execute(o: RunOptions, store: Store, out=sys.stderr) -> RunResult:
    if o.ranks < 1:
        raise ScopeError(f"--ranks must be at least 1, got {o.ranks}", "e.g. -n 2")
    if not (0 < o.precision <= 1):
        raise ScopeError(f"--precision must be in (0, 1], got {o.precision}", "e.g. --precision 0.01 for ±1 %")
    if not o.budget > 0:
        raise ScopeError(f"--budget must be positive, got {o.budget}", "seconds per point, e.g. --budget 1")
    parse_sizes(o.sizes)
    pattern_text = check_pattern(o.pattern, o.ranks) if o.pattern else None
    tc = find_toolchain(o.mpicc)
    exe = engine_path(tc)
    registry = list_tests(exe)
    tests = select_tests(o.tests or BASELINE, registry)
    check_params(o.params, tests, registry)

    bed = None
    if o.testbed:
        from scope.testbed import load

        bed = load(o.testbed)
    launch = build_launch(tc, exe, engine_args(o, tests), o.ranks, o.launcher, o.hosts, o.launcher_args, o.env, bed)
    notes = []
    if oversubscribed(o.ranks, o.hosts):
        notes.append(
            f"{o.ranks} ranks on {local_cores()} cores: oversubscribed, "
            "timings will not represent the hardware" + (f"; set {', '.join(launch.notes)}" if launch.notes else "")
        )
        for n in notes:
            print(f"scope: warning [oversubscribed]: {n}", file=out)

    run_id = store.begin_run(launch.argv, o.launcher, o.ranks, o.label)
    progress = Progress(out, enabled=o.progress)
    errors: list[dict] = []
    npoints = 0
    schema_error: list[str] = []

    def on_record(rec: dict) -> None:
        nonlocal npoints
        kind = rec["type"]
        if kind == "context":
            if int(rec.get("schema", 0)) > SCHEMA_SUPPORTED:
                schema_error.append(f"engine records have schema {rec.get('schema')}, newer than this front end")
            if bed is not None:
                rec = dict(rec, testbed=dict(bed, transport=transport_of(rec, bed)))
            if pattern_text is not None:
                rec = dict(rec, pattern={"file": str(Path(o.pattern).resolve()), "text": pattern_text})
            store.set_context(run_id, rec)
        elif kind == "plan":
            progress.plan(rec)
        elif kind == "point":
            store.add_point(run_id, rec)
            npoints += 1
        elif kind in ("skip", "error", "warning", "clock"):
            store.add_event(run_id, rec)
            if kind == "error":
                errors.append(rec)
        progress.record(rec)

    idle = o.timeout or max(120.0, 30.0 * o.budget)
    outcome = run_records(launch, on_record, idle)
    progress.close()

    if schema_error:
        status, reason = "incomplete", schema_error[0]
    elif outcome.saw_end and outcome.returncode in (0, 1) and not outcome.interrupted:
        status, reason = "complete", None
    else:
        status, reason = "incomplete", failure_reason(outcome, idle)
    keep_stderr = outcome.stderr if status != "complete" or outcome.returncode else None
    if outcome.noise and status != "complete":
        keep_stderr = (keep_stderr or "") + "\n--- launcher stdout ---\n" + "\n".join(outcome.noise[-40:])
    if bed is not None:
        check_crossed_link(store, run_id, bed)
    store.finish_run(run_id, status, reason, keep_stderr)
    return RunResult(run_id, status, reason, outcome, npoints, errors, notes)


def check_pattern(path: str, ranks: int) -> str:
    """The same rules as the engine, with the line at fault: 'SOURCE DESTINATION SIZE' per
    line, '#' comments, distinct ranks below the run's rank count."""
    from scope.sizes import parse_size

    try:
        text = Path(path).read_text()
    except OSError as e:
        raise ScopeError(f"cannot read pattern file {path}: {e.strerror}", "check the path") from None
    n = 0
    for i, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].split()
        if not line:
            continue
        if len(line) != 3 or not line[0].isdigit() or not line[1].isdigit():
            raise ScopeError(
                f"{path} line {i}: expected 'SOURCE DESTINATION SIZE', got '{raw.strip()}'", "e.g. '0 1 64K'"
            )
        src, dst = int(line[0]), int(line[1])
        try:
            parse_size(line[2])
        except ValueError as e:
            raise ScopeError(f"{path} line {i}: {e}", "sizes like 64, 8K, 1M") from None
        if src == dst:
            raise ScopeError(f"{path} line {i}: rank {src} sends to itself", "a message needs two ranks")
        if max(src, dst) >= ranks:
            raise ScopeError(
                f"{path} line {i}: rank {max(src, dst)} is out of range for {ranks} ranks",
                f"run with -n {max(src, dst) + 1} or more",
            )
        n += 1
    if not n:
        raise ScopeError(f"pattern file {path} has no messages", "one 'SOURCE DESTINATION SIZE' per line")
    return text


def transport_of(ctx: dict, bed: dict) -> str:
    """How ranks 0 and 1 of a testbed run talked: recorded, not assumed."""
    place = {p["rank"]: p for p in ctx.get("placement", [])}
    env = ctx.get("env", {})
    if 0 in place and 1 in place and place[0].get("netns") == place[1].get("netns"):
        return "ranks 0 and 1 shared a network namespace: not a network path"
    shm_off = env.get("MPIR_CVAR_NOLOCAL") == "1"
    tls = env.get("UCX_TLS", "")
    return (
        f"TCP over veth between namespaces ({tls}, MPICH shared memory "
        f"{'off' if shm_off else 'ON: MPI may bypass the network'})"
    )


def check_crossed_link(store: Store, run_id: int, bed: dict) -> None:
    """On a shaped testbed, traffic faster than the link did not cross it: say so."""
    limit = bed.get("payload_MBps")
    if not limit:
        return
    for p in store.points(run_id):
        if p["test"].startswith(("p2p.", "net.")) and p["size"] and p["size"] >= 262144 and p["bw_median"]:
            per_link = p["bw_median"] / (2 if p["test"].endswith("bistream") else 1)
            if per_link > 1.25 * limit and not p["test"].endswith(("exchange", "pingping")):
                store.add_event(
                    run_id,
                    {
                        "type": "warning",
                        "kind": "transport",
                        "test": p["test"],
                        "message": f"{p['test']} moved {per_link:.0f} MB/s over a link shaped to {limit:.1f} MB/s: "
                        "its traffic did not cross the testbed link",
                        "hint": "check that MPIR_CVAR_NOLOCAL=1 and UCX_TLS=tcp,self reached the ranks",
                    },
                )
                return


def raise_for(result: RunResult, db_path) -> None:
    """Turn an incomplete run into the one-line error the CLI prints."""
    if result.status == "complete":
        return
    code = 130 if result.outcome.interrupted else RUN_FAILED
    raise ScopeError(
        f"run {result.run_id} stopped early: {result.reason}; {result.points} points were kept",
        f"see 'scope show {result.run_id}'; the launcher's stderr is stored with the run",
        code,
    )
