"""One measurement run: validate what was asked, build the engine, launch it, store each
record as it arrives, and close the run as complete or incomplete with the reason."""

from __future__ import annotations

import fnmatch
import sys
from dataclasses import dataclass, field
from pathlib import Path

from scope.errors import RUN_FAILED, USAGE, ScopeError
from scope.launcher import Outcome, build_launch, failure_reason, local_cores, oversubscribed, run_records
from scope.options import EngineOption, check_relations, engine_argv, from_records
from scope.progress import Progress
from scope.sizes import parse_sizes
from scope.store import RECORD_SCHEMA, Store
from scope.toolchain import describe, engine_path, find_toolchain

BASELINE = ["p2p.pingpong", "p2p.pingping", "p2p.stream", "p2p.bistream", "p2p.exchange"]


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


def execute(o: RunOptions, store: Store, out=sys.stderr) -> RunResult:
    """Checks everything before launch (the engine's option table, sizes, tests, parameters,
    the pattern file), then launches and stores."""
    if o.ranks < 1:
        raise ScopeError(f"--ranks must be at least 1, got {o.ranks}", "e.g. -n 2")
    tc = find_toolchain(o.mpicc)
    exe = engine_path(tc)
    described = describe(exe)
    registry = [r for r in described if r.get("type") == "test"]
    table = from_records(described)
    values = check_engine_options(o.engine, table)
    parse_sizes(str(values.get("sizes", default_of(table, "sizes"))))
    pattern = values.get("pattern")
    pattern_text = check_pattern(str(pattern), o.ranks) if pattern else None
    tests = select_tests(o.tests or BASELINE, registry)
    check_params(list(values.get("param", [])), tests, registry)
    budget = float(values.get("budget", default_of(table, "budget")))
    argv = ["--tests", ",".join(tests), *engine_argv(values, table)]

    bed = None
    if o.testbed:
        from scope.testbed import load

        bed = load(o.testbed)
    launch = build_launch(tc, exe, argv, o.ranks, o.launcher, o.hosts, o.launcher_args, o.env, bed)
    notes = []
    if oversubscribed(o.ranks, o.hosts):
        notes.append(
            f"{o.ranks} ranks on {local_cores()} cores: oversubscribed, "
            "timings will not represent the hardware" + (f"; set {', '.join(launch.notes)}" if launch.notes else "")
        )
        for n in notes:
            print(f"scope: warning [oversubscribed]: {n}", file=out)

    store.save_tests(registry)
    run_id = store.begin_run(launch.argv, o.launcher, o.ranks, o.label)
    progress = Progress(out, enabled=o.progress)
    errors: list[dict] = []
    npoints = 0
    schema_error: list[str] = []

    def on_record(rec: dict) -> None:
        nonlocal npoints
        kind = rec["type"]
        if kind == "context":
            if int(rec.get("schema", 0)) > RECORD_SCHEMA:
                schema_error.append(f"engine records have schema {rec.get('schema')}, newer than this front end")
            if bed is not None:
                rec = dict(rec, testbed=dict(bed, transport=transport_of(rec, bed)))
            if pattern_text is not None:
                rec = dict(rec, pattern={"file": str(Path(str(pattern)).resolve()), "text": pattern_text})
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

    idle = o.timeout or max(120.0, 30.0 * budget)
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


def check_engine_options(given: dict[str, object], table: list[EngineOption]) -> dict[str, object]:
    """Every given option against the engine's own table (values given through the Python API
    are checked here too), and the table's cross-option rules."""
    by_name = {t.name: t for t in table}
    values: dict[str, object] = {}
    for name, v in given.items():
        if name not in by_name:
            raise ScopeError(f"the engine has no option --{name}", "see 'scope run --help'", USAGE)
        spec = by_name[name]
        try:
            values[name] = v if spec.kind in ("flag", "list") else spec.parse(str(v))
        except ValueError as e:
            raise ScopeError(str(e), "see 'scope run --help'", USAGE) from None
    broken = check_relations(values, table)
    if broken:
        raise ScopeError(broken, "see 'scope run --help'", USAGE)
    return values


def default_of(table: list[EngineOption], name: str) -> str | None:
    return next(t.default for t in table if t.name == name)


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
    """On a shaped testbed, traffic faster than the link did not cross it: say so.  A test's
    role `link:K` says its bandwidth crosses the link K times at once (the engine's word)."""
    limit = bed.get("payload_MBps")
    if not limit:
        return
    run = store.load_run(run_id, samples=False)
    for p in run.points:
        crossings = run.info(p.test).role("link")
        if not crossings or not p.size or p.size < 262144 or not p.bw_median:
            continue
        per_link = p.bw_median / int(crossings)
        if per_link > 1.25 * limit:
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
