"""Reading a run's points back: the rows the run reports (combined launches, or the first
launch of a point whose launches were not combined), the points imported by columns, and
samples read only when asked for.  A mixin of Store, which owns the connection (`self.db`)."""

from __future__ import annotations

import functools
import json
import sqlite3
from collections.abc import Callable

from scope.store import windows
from scope.store.decode import blob_samples, collector_paused, decoded, imported_points, keeps_no_samples, point_of
from scope.store.encode import POINT_COLUMNS
from scope.store.faults import guarded

# The points a run reports: each combined point (launch NULL) and, for a point whose launches
# were not combined (a run that stopped), its first launch's own measurement.  Two queries the
# index points_by_launch (run_id, seq, launch) answers, not one with a correlated OR, which
# visited every launch's row of the run (4 rows a point at 3 launches, each a page or two).
COMBINED = "SELECT {cols} FROM points WHERE run_id = ?1 AND launch IS NULL{test}"
UNCOMBINED = (
    "SELECT {cols} FROM points p WHERE run_id = ?1 AND launch IS NOT NULL{test} AND seq IN"
    " (SELECT seq FROM points WHERE run_id = ?1 AND launch IS NOT NULL"
    " EXCEPT SELECT seq FROM points WHERE run_id = ?1 AND launch IS NULL)"
    " AND launch = (SELECT min(launch) FROM points q WHERE q.run_id = ?1 AND q.seq = p.seq)"
)


class PointReads:
    db: sqlite3.Connection

    @guarded
    def points(self, run_id: int, test: str | None = None) -> list[sqlite3.Row]:
        """The rows of the points a run measured: each point's combination of its launches, or,
        where a run stopped before combining them, its first launch's own measurement.  An
        imported run keeps its points by columns (imported_points); load_run gives both."""
        return self._reported("*", run_id, test)

    def _reported(self, cols: str, run_id: int, test: str | None = None) -> list:
        """The rows of the points a run reports (COMBINED, UNCOMBINED), `cols` of each, in the
        run's order (seq, then id)."""
        args = (run_id, test) if test else (run_id,)
        where = " AND test = ?2" if test else ""
        rows = self.db.execute(COMBINED.format(cols=cols, test=where) + " ORDER BY seq, id", args).fetchall()
        rest = self.db.execute(UNCOMBINED.format(cols=cols, test=where), args).fetchall()
        if rest:
            rows += rest
            rows.sort(key=lambda r: (r["seq"], r["id"]))
        return rows

    def _points(self, run_id: int, samples: bool, r: sqlite3.Row, problems: list[str], tests=None) -> list:
        """The run's points, their samples read when first asked for (most views need none); a
        row that cannot be read is left out and said in `problems`.  `tests`: only theirs."""
        with collector_paused():
            native = []
            rows = [p for p in self._rows_without_samples(run_id) if tests is None or p["test"] in tests]
            texts = _Texts(self.db, [p["id"] for p in rows])
            pooled = functools.cache(lambda: self._pooled_seqs(run_id))  # asked when samples are
            for p in rows:
                pt = decoded(
                    lambda p=p: point_of(
                        p,
                        r["record_schema"],
                        self._samples_loader(p, pooled) if samples else None,
                        functools.partial(self._record_text, p["id"], texts),
                        None if p["no_windows"] else functools.partial(self._windows, p["id"]),
                    ),
                    problems,
                    f"point {p['seq']} ({p['test']})",
                )
                if pt is not None:
                    native.append(pt)
            return native + self.imported_points(run_id, r["origin"], tests)

    def _rows_without_samples(self, run_id: int) -> list[dict]:
        """The run's point rows without their samples and records (each read when first asked
        for: a window-timed point's record is 8 KB, and 10^5 of them held as text were 318 MB
        that most views never read)."""
        cols = [c for c in POINT_COLUMNS if c not in ("samples", "record", "windows")]
        q = f"id, {', '.join(cols)}, samples IS NULL AS no_samples, windows IS NULL AS no_windows"
        rows = self._reported(q, run_id)
        names = rows[0].keys() if rows else []  # the query's own names, read once
        return [dict(zip(names, row)) for row in rows]

    def _pooled_seqs(self, run_id: int) -> set[int]:
        """The points (by seq) some launch of which kept samples: a combined point's samples are
        read only for these (a run measured without samples asks none of 10^5 queries)."""
        q = "SELECT DISTINCT seq FROM points WHERE run_id = ? AND launch IS NOT NULL AND samples IS NOT NULL"
        return {seq for (seq,) in self.db.execute(q, (run_id,))}

    def _samples_loader(self, p: dict, pooled: Callable[[], set[int]]):
        if keeps_no_samples(p):
            return functools.partial(self._combined_samples, p["run_id"], p["seq"], pooled)
        return functools.partial(self._own_samples, p["id"])

    def _combined_samples(self, run_id: int, seq: int, pooled: Callable[[], set[int]]) -> list[float]:
        """A combined point's samples: none, without asking, where no launch of it kept any."""
        return self._pooled_samples(run_id, seq) if seq in pooled() else []

    def _record_text(self, point_id: int, texts: _Texts | None = None) -> str | None:
        if texts is not None:
            return texts(point_id)
        row = self.db.execute("SELECT record FROM points WHERE id = ?", (point_id,)).fetchone()
        return row[0] if row else None

    def _windows(self, point_id: int) -> tuple | None:
        row = self.db.execute("SELECT windows FROM points WHERE id = ?", (point_id,)).fetchone()
        return windows.arrays(row[0] if row else None)

    def _own_samples(self, point_id: int) -> list[float]:
        row = self.db.execute("SELECT samples FROM points WHERE id = ?", (point_id,)).fetchone()
        return blob_samples(row[0] if row else None)

    @guarded
    def imported_points(self, run_id: int, origin: str | None, tests=None) -> list:
        out = []
        q = "SELECT id, test FROM imported WHERE run_id = ? ORDER BY first_seq"  # a test left out is not read
        for iid, test in self.db.execute(q, (run_id,)).fetchall():
            if tests is None or test in tests:
                row = self.db.execute("SELECT * FROM imported WHERE id = ?", (iid,)).fetchone()
                out += imported_points(row, origin or "imported")
        return out

    @guarded
    def uncombined(self, run_id: int) -> list[int]:
        """Points (by seq) measured in launches and not yet combined."""
        return [
            r[0]
            for r in self.db.execute(
                "SELECT DISTINCT seq FROM points p WHERE run_id = ? AND launch IS NOT NULL AND NOT EXISTS"
                " (SELECT 1 FROM points q WHERE q.run_id = p.run_id AND q.seq = p.seq AND q.launch IS NULL)"
                " ORDER BY seq",
                (run_id,),
            )
        ]

    @guarded
    def launch_points(self, run_id: int, seq: int) -> list[tuple[dict, list[float]]]:
        """Each launch's own record and samples of one point, in launch order."""
        rows = self.db.execute(
            "SELECT record, samples, windows FROM points WHERE run_id = ? AND seq = ? AND launch IS NOT NULL"
            " ORDER BY launch",
            (run_id, seq),
        ).fetchall()
        return [(windows.joined(json.loads(r["record"]), r["windows"]), blob_samples(r["samples"])) for r in rows]

    def samples(self, row: sqlite3.Row) -> list[float]:
        """The samples of a stored point row: its own, or, combined from launches, theirs."""
        if keeps_no_samples(row):
            return self._pooled_samples(row["run_id"], row["seq"])
        return blob_samples(row["samples"])

    def _pooled_samples(self, run_id: int, seq: int) -> list[float]:
        """A combined point's samples: every launch's, in launch order."""
        out: list[float] = []
        for row in self.db.execute(
            "SELECT samples FROM points WHERE run_id = ? AND seq = ? AND launch IS NOT NULL ORDER BY launch",
            (run_id, seq),
        ):
            out += blob_samples(row[0])
        return out


class _Texts:
    """A run's point records read CHUNK points at a time, in the run's order, as views ask for
    them (one query each of 10^5 points was a second of a large run's `show`); each text is
    handed out once and not kept, and at most HELD wait to be asked for."""

    CHUNK = 256
    HELD = 4096

    def __init__(self, db: sqlite3.Connection, ids: list[int]):
        self.db, self.ids = db, ids
        self.index = {pid: i for i, pid in enumerate(ids)}
        self.held: dict[int, str | None] = {}

    def __call__(self, point_id: int) -> str | None:
        if point_id not in self.held:
            i = self.index.get(point_id, 0)
            chunk = self.ids[i : i + self.CHUNK] if point_id in self.index else [point_id]
            if len(self.held) + len(chunk) > self.HELD:  # asked out of order: the oldest let go
                for k in list(self.held)[: len(self.held) // 2]:
                    del self.held[k]
            q = f"SELECT id, record FROM points WHERE id IN ({', '.join('?' * len(chunk))})"
            self.held.update(self.db.execute(q, chunk).fetchall())
        return self.held.pop(point_id, None)
