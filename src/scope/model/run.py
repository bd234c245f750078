"""A stored run as the views and analyses read it: its events, its series of points (one test,
one parameter setting) and the run itself (scope.model re-exports them)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from scope.catalog.testinfo import TestInfo
from scope.model.context import Context
from scope.model.pairs import PairStep
from scope.model.point import Point
from scope.model.timeline import RankEvents


@dataclass(frozen=True)
class Event:
    type: str  # skip | error | warning | clock
    kind: str | None
    test: str | None
    params: dict | None
    message: str | None
    hint: str | None
    record: dict


@dataclass
class Series:
    """The points of one test and one parameter setting (size varies)."""

    test: str
    params: dict[str, Any]
    points: list[Point]
    info: TestInfo

    @property
    def sizes(self) -> list[int]:
        return [p.size or 0 for p in self.points]

    @property
    def medians(self) -> list[float | None]:
        return [p.median for p in self.points]


def kind_of(origin: str | None, sim: dict | None) -> str:
    """What a run's figures are: measured here, imported from a peer (its tool), or simulated
    (on its platform, by the platform file's digest: another platform is another machine)."""
    origin = (origin or "scope").lower()
    if origin != "scope":
        return f"imported {origin}"
    if sim:
        return f"simulated {str(sim.get('platform_sha256') or '?')[:12]}"
    return "measured"


@dataclass
class Run:
    id: int
    started_utc: str
    finished_utc: str | None
    status: str
    reason: str | None
    command: list[str]
    launcher: str | None
    ranks: int | None
    label: str | None
    origin: str
    source: str | None
    stderr: str | None
    context: Context | None
    points: list[Point]
    events: list[Event]
    tests: dict[str, TestInfo]
    context_record: dict | None = None  # the engine's context record as stored, for exports
    launches: int | None = None  # launches asked for (None: before launches were replicates)
    unknown_tests: dict[str, TestInfo] = field(default_factory=dict, repr=False, compare=False)
    pairs: list[PairStep] = field(default_factory=list, repr=False)  # pairs-timed points' steps
    timeline: list[RankEvents] = field(default_factory=list, repr=False)  # an events import's ranks

    def with_problems(self, problems: list[str]) -> Run:
        """The run with a `corrupt` warning naming the stored parts that could not be read (the
        store left them out)."""
        if problems:
            more = f" and {len(problems) - 1} more" if len(problems) > 1 else ""
            self.events.append(
                Event(
                    "warning",
                    "corrupt",
                    None,
                    None,
                    f"run {self.id}: stored data that cannot be read is left out: {problems[0]}{more}",
                    "the database file was damaged: restore it from a copy, or measure again",
                    {},
                )
            )
        return self

    @property
    def kind(self) -> str:
        """What its figures are (kind_of): measured, imported from a tool, or simulated."""
        return kind_of(self.origin, self.context.sim if self.context else None)

    @property
    def imported(self) -> bool:
        return self.origin not in (None, "scope")

    def info(self, test: str) -> TestInfo:
        found = self.tests.get(test)
        if found is None:  # one stand-in per name: views ask per point, a million times
            found = self.unknown_tests.get(test) or self.unknown_tests.setdefault(test, TestInfo.unknown(test))
        return found

    def at_defaults(self, p: Point) -> bool:
        """Whether a point ran its test's default parameters (a reference figure must)."""
        return self.info(p.test).off_default(p.params) == 0

    def series(self) -> list[Series]:
        """Points grouped by (test, parameters other than size), in order of appearance."""
        out: dict[tuple, Series] = {}
        for p in self.points:
            key = (p.test, tuple(sorted(p.params.items(), key=lambda kv: kv[0])) if p.params else ())
            if key not in out:
                out[key] = Series(p.test, p.params, [], self.info(p.test))
            out[key].points.append(p)
        return list(out.values())

    def title(self) -> str:
        base = f"run {self.id}"
        if self.label:
            base += f" ({self.label})"
        if self.imported:
            base += f" [{self.origin.upper()}]"
        return base
