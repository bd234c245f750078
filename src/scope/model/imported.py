"""An imported point: one average a peer tool printed for one size.

A run may import a million of them, so each is a flyweight: a tuple of what differs from point
to point (seq, size, the average, the count), and a class per imported benchmark holding what
its points share (test, bytes moved per byte of size, where it came from).  A Point of 31 slots
took 440 bytes a point and 1.0 s a million to build; this takes about 150 bytes and a tenth of
the time (issue 52).  It answers every question a Point answers, so views and analyses read
both alike: median = mean = the average, no distribution, no window, one launch."""

from __future__ import annotations

import functools
from itertools import repeat
from operator import itemgetter

from scope.model.point import POINT_STATS, PointReading, Replication, WindowInfo, rate_MBps

# Nothing an imported average has: the statistics of a distribution besides its one value, and
# the engine's evidence.  Class attributes, shared by every point.
_NONE = [s for s in POINT_STATS if s not in ("median", "mean")]
_NONE += ["batch", "warmup_iterations", "warmup_converged", "seconds", "note", "load_samples"]


class ImportedPoint(tuple, PointReading):
    """(seq, size, average, count); made by `imported_class`, never directly."""

    __slots__ = ()
    seq = property(itemgetter(0))
    size = property(itemgetter(1))
    median = property(itemgetter(2))
    mean = property(itemgetter(2))
    count = property(itemgetter(3))
    # Compared and hashed as the point it is, like a Point in a dict or a set, never by value:
    # two benchmarks may print the same average at the same size.
    __eq__ = object.__eq__
    __ne__ = object.__ne__
    __hash__ = object.__hash__

    # What a benchmark's points share: set on the class imported_class makes for it.
    test = ""
    credit = 1.0  # bytes moved per byte of size
    about: dict = {}
    params: dict = {}  # shared and empty: nothing writes an imported point's parameters
    unit = "us"
    ops_per_iter = 1
    stop = "imported"
    imported = True
    window: WindowInfo | None = None
    samples: list[float] = []
    cache = None

    @property
    def replication(self) -> Replication | None:
        """A site's history imported as a long CSV keeps each launch's value in a column
        `launch K` (store/longcsv.py): its launches, as a measured point's are; else None."""
        about = self.about
        cols = about.get("launches")
        if cols is None:
            cols = about["launches"] = sorted(k for k in about.get("extra", {}) if k.startswith("launch "))
        if len(cols) < 2:
            return None
        i = self[0] - about["first"]
        values = [about["extra"][k][i] for k in cols if 0 <= i < len(about["extra"][k])]
        values = [v for v in values if v is not None and v == v]
        if len(values) < 2:
            return None
        return Replication(len(cols), tuple(values), None, None, None, (max(values) - min(values)) / self[2], False)

    @property
    def bytes_per_op(self) -> float:
        return self[1] * self.credit

    @property
    def bw_median(self) -> float | None:
        return rate_MBps(self[1] * self.credit, self[2])

    @property
    def record(self) -> dict:
        """What an imported point's record said when imports were stored a row each, with the
        peer's other columns (extra); made when asked, not kept (a million held 1.4 GB)."""
        about = self.about
        i = self[0] - about["first"]
        extra = {k: v[i] for k, v in about["extra"].items() if 0 <= i < len(v) and v[i] is not None}
        return {
            "type": "point",
            "test": self.test,
            "params": {"size": self[1]},
            "measures": about["measures"],
            "unit": "us",
            "count": self[3],
            "ops_per_iter": 1,
            "bytes_per_op": self.bytes_per_op,
            "stats": {"median": self[2], "mean": self[2]},
            "bandwidth_MBps": {"median": self.bw_median},
            "stop": "imported",
            "imported": {"origin": about["origin"], "statistic": about["statistic"]},
            "extra": extra,
        }


for _name in _NONE:
    setattr(ImportedPoint, _name, None)


def imported_class(test: str, credit: float, about: dict) -> type[ImportedPoint]:
    """The class of one imported benchmark's points.  `about`: measures, origin, statistic,
    first (the seq of its first point) and extra (the peer's other columns, by name)."""
    return type("ImportedPoint", (ImportedPoint,), {"__slots__": (), "test": test, "credit": credit, "about": about})


def imported_points(cls: type[ImportedPoint], first: int, sizes, times, counts=None) -> list[ImportedPoint]:
    """The points of one benchmark, made at C speed: no Python frame per point."""
    seqs = range(first, first + len(sizes))
    rows = zip(seqs, sizes, times, counts if counts is not None else repeat(None, len(sizes)))
    return list(map(functools.partial(tuple.__new__, cls), rows))
