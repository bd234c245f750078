"""Store reads and writes across runs: where a derived figure finds a lower level (the
reference run of a test), the history of one configuration, the frozen predictions of a run
and the scratch a run's job may leave on disk."""

from __future__ import annotations

import json

from scope.catalog.names import PINGPONG
from scope.model import Run
from scope.store.decode import decoded
from scope.store.encode import now_utc
from scope.store.faults import guarded

# a run measured on a machine: no simulation (its context's `sim`), for the lookups that must
# not take a simulated figure for a measured one (a prediction's inputs and anchor)
MEASURED = """NOT (r.context LIKE '%"sim"%' AND json_extract(r.context, '$.sim') IS NOT NULL)"""


class Lookups:
    """Mixed into Store: `self.db` is its connection, `self.load_run` its reader."""

    @guarded
    def reference_for(self, run: Run, test: str = PINGPONG) -> Run | None:
        """The latest complete run before or after `run` on the same MPI library and hosts that
        has points of `test` (and `run` itself has none): where a derived figure takes a
        lower layer from."""
        row = self.db.execute(
            """SELECT r.id FROM runs r JOIN runs me ON me.id = ?
               WHERE r.id != me.id AND r.status = 'complete' AND r.origin = 'scope'
                 AND r.mpi_library IS me.mpi_library AND r.hosts IS me.hosts
                 AND EXISTS (SELECT 1 FROM points p WHERE p.run_id = r.id AND p.test = ?)
               ORDER BY r.id DESC LIMIT 1""",
            (run.id, test),
        ).fetchone()
        return self.load_run(row[0], samples=False) if row else None

    @guarded
    def candidates_for(self, run: Run, test: str, limit: int = 8) -> list[Run]:
        """The runs a prediction for `run` may take `test`'s figures from, newest first: complete
        runs of SCOPE's on the same MPI library and hosts with points of `test` (analysis/inputs.py
        applies the rest of the rule: the tests' defaults, the procs a point needs).  A run of
        another test, another MPI or other hosts, or a simulation, is never among them."""
        rows = self.db.execute(
            """SELECT r.id FROM runs r JOIN runs me ON me.id = ?
               WHERE r.id != me.id AND r.status = 'complete' AND r.origin = 'scope'
                 AND """
            + MEASURED
            + """
                 AND r.mpi_library IS me.mpi_library AND r.hosts IS me.hosts
                 AND EXISTS (SELECT 1 FROM points p WHERE p.run_id = r.id AND p.test = ?)
               ORDER BY r.id DESC LIMIT ?""",
            (run.id, test, limit),
        ).fetchall()
        return [self.load_run(i, samples=False) for (i,) in rows]

    @guarded
    def set_scratch(self, run_id: int, paths: list[str]) -> None:
        """What the run's job may leave on disk, before it is launched (run/reaper.py)."""
        self.db.execute("UPDATE runs SET scratch = ? WHERE id = ?", (json.dumps(paths), run_id))
        self.db.commit()

    @guarded
    def scratch_of(self, run_id: int) -> list[str]:
        """The run's scratch paths ([] where none, or where the row is damaged)."""
        row = self.db.execute("SELECT scratch FROM runs WHERE id = ?", (run_id,)).fetchone()
        paths = decoded(lambda: json.loads(row[0]), [], "its scratch") if row and row[0] else None
        return paths if isinstance(paths, list) else []

    @guarded
    def add_prediction(self, run_id: int | None, test: str | None, inputs: dict, predicted: list[dict]) -> int:
        """A prediction as made: never changed afterwards; predicting again adds a record."""
        cur = self.db.execute(
            "INSERT INTO predictions (made_utc, run_id, test, inputs, predicted) VALUES (?, ?, ?, ?, ?)",
            (now_utc(), run_id, test, json.dumps(inputs, allow_nan=False), json.dumps(predicted, allow_nan=False)),
        )
        self.db.commit()
        return int(cur.lastrowid)

    @guarded
    def prediction_for(self, run_id: int) -> dict | None:
        """The newest prediction frozen for a measured run: {id, made_utc, inputs, predicted}."""
        row = self.db.execute(
            "SELECT id, made_utc, inputs, predicted FROM predictions WHERE run_id = ? ORDER BY id DESC LIMIT 1",
            (run_id,),
        ).fetchone()
        if row is None:
            return None
        return {"id": row[0], "made_utc": row[1], "inputs": json.loads(row[2]), "predicted": json.loads(row[3])}

    @guarded
    def history_for(self, run: Run, limit: int = 20) -> list[Run]:
        """Other complete runs of SCOPE's on the same MPI library, hosts and rank count that
        share a test with `run` and measured two launches or more: the history a noise model
        learns the drift between runs from (analysis/noise.py), newest first."""
        rows = self.db.execute(
            """SELECT r.id FROM runs r JOIN runs me ON me.id = ?
               WHERE r.id != me.id AND r.status = 'complete' AND r.origin = 'scope'
                 AND r.mpi_library IS me.mpi_library AND r.hosts IS me.hosts AND r.ranks IS me.ranks
                 AND COALESCE(r.launches, 1) >= 2
                 AND EXISTS (SELECT 1 FROM points p WHERE p.run_id = r.id
                             AND p.test IN (SELECT DISTINCT test FROM points WHERE run_id = me.id))
               ORDER BY r.id DESC LIMIT ?""",
            (run.id, limit),
        ).fetchall()
        return [self.load_run(i, samples=False) for (i,) in rows]

    @guarded
    def latest_with(self, test: str, mpi_library: str | None = None) -> int | None:
        """The id of the newest complete run measured by SCOPE (on a machine: not a simulation)
        that has points of `test`; with `mpi_library` (a version string's first line), only a
        run made with that MPI."""
        lib = mpi_library or ""
        row = self.db.execute(
            """SELECT r.id FROM runs r WHERE r.status = 'complete' AND r.origin = 'scope'
                 AND """
            + MEASURED
            + """
                 AND (? = '' OR substr(r.mpi_library, 1, length(?)) = ?)
                 AND EXISTS (SELECT 1 FROM points p WHERE p.run_id = r.id AND p.test = ?)
               ORDER BY r.id DESC LIMIT 1""",
            (lib, lib, lib, test),
        ).fetchone()
        return row[0] if row else None
