"""The typed model of a stored run: run, context, series, points and events.

The store builds it (`Store.load_run`), and it is the only place where stored record JSON is
decoded; analysis functions and views read these objects, never rows or JSON.  A field that
an older or imported run lacks is None (or empty), in one place, here."""

from scope.catalog.testinfo import TestInfo
from scope.model.context import Context, Placement, Timer
from scope.model.pairs import PairStep
from scope.model.point import PART_KEYS, POINT_STATS, Mode, Point, Replication, WindowInfo, rate_MBps, relaxed_launches
from scope.model.run import Event, Run, Series
from scope.model.timeline import RankEvents

__all__ = [
    "PART_KEYS", "POINT_STATS", "Context", "Event", "Mode", "PairStep", "Placement", "Point", "RankEvents",
    "Replication", "Run", "Series",
    "TestInfo", "Timer", "WindowInfo", "rate_MBps", "relaxed_launches",
]  # fmt: skip
