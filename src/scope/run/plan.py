"""What a run will measure, as the engine says before anything is launched.

`scope-engine --plan N <the run's arguments>` applies the run's own selection and checks (test
globs, parameter values, size lists, --test-sizes, the --pattern file, --procs against the
run's N ranks, every option's range) without starting MPI, and prints one `planned` record per
test and a `plan` record with the options it parsed; or exits 2 with its message.  The front
end asks it before it creates a run and keeps no second parser of any of these."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from scope.errors import ENVIRONMENT, USAGE, ScopeError
from scope.run.stream import engine_records


@dataclass(frozen=True)
class PlannedTest:
    test: str
    points: int
    params: dict[str, list]  # each parameter's values, as point records write them
    sizes: list[int] = field(default_factory=list)  # empty for a test not swept over sizes
    procs: list[int] = field(default_factory=list)
    rejected: str | None = None  # values asked that this test does not take (the run records a skip)
    memory_bytes: float | None = None  # the most any point needs on all its ranks (None: not declared)
    memory_note: str = ""
    memory_point: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Plan:
    ranks: int
    points: int
    options: dict[str, object]  # every option `scope run` offers, as the engine parsed it
    tests: list[PlannedTest]

    @property
    def names(self) -> list[str]:
        return [t.test for t in self.tests]

    def values(self, test: str, param: str) -> list:
        return next((t.params.get(param, []) for t in self.tests if t.test == test), [])


def from_records(records: list[dict]) -> Plan:
    tests = [
        PlannedTest(
            test=r["test"],
            points=r["points"],
            params=r.get("params", {}),
            sizes=r.get("sizes", []),
            procs=r.get("procs", []),
            rejected=r.get("rejected"),
            memory_bytes=r.get("memory_bytes"),
            memory_note=r.get("memory_note", ""),
            memory_point=r.get("memory_point", {}),
        )
        for r in records
        if r.get("type") == "planned"
    ]
    end = next((r for r in records if r.get("type") == "plan"), None)
    if end is None:
        raise ScopeError("the engine's plan has no plan record", "rebuild the engine with 'scope build'", ENVIRONMENT)
    return Plan(ranks=end["ranks"], points=end["points"], options=end["options"], tests=tests)


def ask(exe: Path, argv: list[str], ranks: int) -> Plan:
    """The engine's plan for a run of `ranks` ranks with these arguments; its refusal (exit 2)
    as a usage error with its own words."""
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
    return from_records(engine_records(p.stdout))


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
