"""Writing an import as a complete run: a peer's output by columns (the `imported` table), a
program's events files (the `timeline` table). A mixin of Store, which owns the connection
(`self.db`)."""

from __future__ import annotations

import json

from scope.store.encode import INSERT_IMPORTED, imported_row, now_utc
from scope.store.faults import guarded
from scope.store.timeline import INSERT_TIMELINE, timeline_row


class ImportWrites:
    """Mixed into Store: `self.db` is its connection."""

    def _imported_run(
        self, origin: str, source: str, ranks: int | None, label: str | None, timer=None, started: str | None = None
    ) -> int:
        """The `runs` row of an import, complete as it is stored; its id.  `started`: when the
        imported run ran, where the file says (a site's history), else now."""
        when = started or now_utc()
        cur = self.db.execute(
            "INSERT INTO runs (started_utc, finished_utc, status, command, launcher, ranks, label, origin, source,"
            " timer) VALUES (?, ?, 'complete', ?, ?, ?, ?, ?, ?, ?)",
            (when, when, json.dumps(["scope", "import", source]), origin, ranks, label, origin, source, timer),
        )
        return int(cur.lastrowid)

    @guarded
    def import_run(
        self, origin: str, source: str, tests: dict, ranks: int | None, label: str | None, started: str | None = None
    ) -> int:
        """An imported file as a complete run: each benchmark (test -> columns.Column) one row
        of the `imported` table, its points sorted by size."""
        run_id = self._imported_run(origin, source, ranks, label, started=started)
        first = 0
        for test, col in tests.items():
            self.db.execute(INSERT_IMPORTED, imported_row(run_id, first, test, col))
            first += len(col.sizes)
        self.db.commit()
        return run_id

    @guarded
    def import_timeline(self, source: str, ranks: list, label: str | None) -> int:
        """A program's events files (one RankEvents a rank, checked where they were read) as a
        complete run of origin `events`, in one transaction."""
        run_id = self._imported_run("events", source, len(ranks), label, ranks[0].header.timer)
        self.db.executemany(INSERT_TIMELINE, [timeline_row(run_id, r) for r in ranks])
        self.db.commit()
        return run_id
