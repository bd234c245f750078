"""A run prepared once (issue 56): what `execute` has checked and planned, made in one place
and read by the launch, the recorder and the dry run, instead of a dozen loose values."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from scope.run.launcher import Where
from scope.run.plan import Plan
from scope.run.request import RunOptions
from scope.run.toolchain import Toolchain


@dataclass(frozen=True)
class PreparedRun:
    options: RunOptions
    toolchain: Toolchain
    exe: Path  # the engine built for the toolchain's MPI
    argv: list[str]  # the engine's arguments, every launch's (before --launch K)
    registry: list[dict]  # every test's descriptor
    plan: Plan  # the engine's plan of the run
    budget: float  # seconds a point, as the plan parsed --budget
    given: dict  # the engine options as launched (the plan's choices added)
    pattern_text: str | None  # the --pattern file as the engine checked it
    io: tuple[str, dict] | None  # the io tests' fresh directory and what it is
    testbed: dict | None  # the testbed the ranks go across, with its processes a host

    tests: list[str] = field(init=False)  # the tests the plan runs, in its order
    where: Where = field(init=False)  # where the ranks go: what build_launch places

    def __post_init__(self):
        # derived once, here, so the launch and the recorder read fields (issue 56: a run's options
        # followed from the command line to the store enter each file at most twice)
        o = self.options
        object.__setattr__(self, "tests", self.plan.names)
        object.__setattr__(self, "where", Where(o.ranks, o.launcher, o.hosts, o.launcher_args, o.env, self.testbed))
