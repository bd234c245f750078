"""What a run will measure, as the engine says before anything is launched.

`scope-engine --plan N <the run's arguments>` applies the run's own selection and checks (test
globs, parameter values, size lists, --test-sizes, the --pattern file, --procs against the
run's N ranks, every option's range) without starting MPI, and prints one `planned` record per
test and a `plan` record with the options it parsed; or exits 2 with its message.  The front
end asks it before it creates a run and keeps no second parser of any of these."""

from __future__ import annotations

import contextlib
import hashlib
import json
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from scope.errors import ENVIRONMENT, USAGE, ScopeError
from scope.records import Plan as PlanRecord
from scope.records import Planned, typed
from scope.run.kept import keep
from scope.run.stream import engine_records


@dataclass(frozen=True)
class Plan:
    """The engine's plan: its `plan` record and a `planned` record per test (scope/records)."""

    ranks: int
    points: int
    options: dict[str, object]  # every option `scope run` offers, as the engine parsed it
    tests: list[Planned]

    @property
    def names(self) -> list[str]:
        return [t.test for t in self.tests]

    def values(self, test: str, param: str) -> list:
        return next((t.params.get(param, []) for t in self.tests if t.test == test), [])


def from_records(records: list[dict]) -> Plan:
    """The plan from the engine's records (engine_records has checked them against their types)."""
    typed_records = [typed(r) for r in records if r.get("type") in ("planned", "plan")]
    end = next((r for r in typed_records if isinstance(r, PlanRecord)), None)
    if end is None or end.ranks is None:
        raise ScopeError("the engine's plan has no plan record", "rebuild the engine with 'scope build'", ENVIRONMENT)
    tests = [r for r in typed_records if isinstance(r, Planned)]
    return Plan(ranks=end.ranks, points=end.points, options=end.options, tests=tests)


def ask(exe: Path, argv: list[str], ranks: int, reads_files: Iterable[str] | None = None) -> Plan:
    """The engine's plan for a run of `ranks` ranks with these arguments; its refusal (exit 2)
    as a usage error with its own words.  A plan the same build gave for the same arguments
    is read back from beside the engine (issue 52: asking cost 40 ms of a one-point run's
    0.5 s, MPI's shared library loading for nothing), unless an argument names a file the
    engine reads (`reads_files`: the options of kind path; None: never kept), whose contents may
    have changed."""
    kept = None if reads_files is None else _kept_plan(exe, argv, ranks, tuple(reads_files))
    if kept is not None:
        with contextlib.suppress(OSError):
            if kept.stat().st_mtime >= exe.stat().st_mtime:
                return from_records(engine_records(kept.read_text()))
    p = subprocess.run([str(exe), "--plan", str(ranks), *argv], capture_output=True, text=True, timeout=120)
    if p.returncode == 2:
        message = p.stderr.strip().splitlines()[-1] if p.stderr.strip() else "the engine refused the run's arguments"
        message = message.removeprefix("scope-engine: error: ")
        # the engine's message names its fix in parentheses where it has one
        hint = None if message.endswith(")") else "see 'scope run --help' and 'scope list'"
        raise ScopeError(message, hint, USAGE)
    if p.returncode != 0:
        raise ScopeError(
            f"the engine could not plan the run (exit {p.returncode}): {p.stderr.strip()[-300:]}",
            "rebuild with 'scope build'",
            ENVIRONMENT,
        )
    plan = from_records(engine_records(p.stdout))
    if kept is not None:
        with contextlib.suppress(OSError):  # the engine's folder exists: plans/ is made in it
            kept.parent.mkdir(exist_ok=True)
        keep(kept, p.stdout)
    return plan


def _kept_plan(exe: Path, argv: list[str], ranks: int, reads_files: tuple[str, ...]) -> Path | None:
    """Where the plan of these arguments is kept beside the engine, or None when it may not be."""
    if any(a == f or a.startswith(f + "=") for a in argv for f in reads_files):
        return None
    key = hashlib.sha256(json.dumps([ranks, argv]).encode()).hexdigest()[:32]
    return exe.parent / "plans" / f"{key}.jsonl"


def too_large(plan: Plan, available: int | None) -> ScopeError | None:
    """A problem that would not fit in this machine's available memory (90 % of it), as the
    refusal to raise; None when every point fits or the memory is not known."""
    if available is None:
        return None
    for t in plan.tests:
        if t.memory_bytes is None or t.memory_bytes <= 0.9 * available:
            continue
        point = " ".join(f"{k}={v}" for k, v in t.memory_point.items() if k != "procs")
        return ScopeError(
            f"{t.test} {point} needs {t.memory_bytes / 2**30:.1f} GiB ({t.memory_note}; "
            f"{t.memory_point.get('procs', plan.ranks)} ranks); this machine has {available / 2**30:.1f} GiB available",
            "a smaller problem (-p), or fewer ranks",
        )
    return None
