"""The records of the engine's commands: --plan's planned tests, --list's tests and options,
--timers, --cvars, --version."""

from __future__ import annotations

from typing import Union

from msgspec import Struct

from scope.records.run import Timer
from scope.records.values import Num, Scalar


class Refused(Struct):
    procs: int
    params: dict[str, Scalar]
    reason: str


class Planned(Struct, tag="planned", tag_field="type"):
    test: str
    points: int
    params: dict[str, list[Scalar]]
    procs: list[int]
    memory_bytes: Num
    sizes: list[int] = []
    rejected: Union[str, None] = None
    memory_note: str = ""
    memory_point: dict[str, Scalar] = {}
    refused: list[Refused] = []  # tests with a `refuse` hook: the points they would not run
    refused_points: int = 0


class ParamSpec(Struct):
    name: str
    type: str
    default: str
    help: str
    min: Union[int, None] = None
    max: Union[int, None] = None
    choices: list[str] = []
    bytes: bool = False  # an int written as one size of --sizes (512M)


class Test(Struct, tag="test", tag_field="type"):
    name: str
    level: str
    summary: str
    measures: str
    min_ranks: int
    sized: bool
    timing: str
    roles: list[str]
    params: list[ParamSpec]
    schema: Union[int, None] = None
    default_sizes: Union[str, None] = None  # the test's own sizes when --sizes is not given


class Option(Struct, tag="option", tag_field="type"):
    name: str
    kind: str
    help: str
    run: bool
    default: Union[str, None] = None
    min: Num = None
    max: Num = None
    choices: list[str] = []
    alias: Union[str, None] = None
    not_above: Union[str, None] = None


class Timers(Struct, tag="timers", tag_field="type"):
    best: str
    mpi_library: str
    all: list[Timer]
    schema: Union[int, None] = None


class CvarChoice(Struct):
    name: str
    value: int


class Cvar(Struct, tag="cvar", tag_field="type"):
    name: str
    description: str
    choices: list[CvarChoice] = []
    schema: Union[int, None] = None


class Version(Struct, tag="version", tag_field="type"):
    schema: int
    engine: str
    mpi_library: str
