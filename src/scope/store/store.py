"""The Store: one results database, its runs, points and events; its imports are written by
store/imports.py, its points read by store/points.py (scope.store re-exports it)."""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import stat
from pathlib import Path

from scope import secrets
from scope.cores import host_name
from scope.errors import ENVIRONMENT, USAGE, ScopeError
from scope.model import Context, Event, Run, TestInfo
from scope.model.run import kind_of
from scope.store.connect import connect, default_path
from scope.store.decode import (
    decoded,
    event_of,
    upgrade,
)
from scope.store.encode import (
    INSERT_EVENT,
    INSERT_POINT,
    event_row,
    now_utc,
    point_row,
)
from scope.store.faults import failure, guarded, process_alive
from scope.store.imports import ImportWrites
from scope.store.lookups import Lookups
from scope.store.pairs import INSERT_PAIRS, pair_step_of, pairs_row
from scope.store.points import PointReads
from scope.store.timeline import rank_events_of

STALE_REASON = (
    "interrupted: the scope process that ran it ended without closing it (killed, or its database locked at its end)"
)


def not_a_file(path: Path, what: str, flag: str) -> None:
    """Refuses a path that exists and is no regular file, before anything opens it: SQLite's
    open of a FIFO blocks until a writer comes (issue 44: `--db FIFO runs` waited 13 minutes,
    deaf to SIGTERM inside open()), and a device or a directory is no database."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return  # missing (created later, or refused as missing), or unreadable: said where opened
    if not stat.S_ISREG(mode):
        kind = "a FIFO" if stat.S_ISFIFO(mode) else "a directory" if stat.S_ISDIR(mode) else "a device or socket"
        raise ScopeError(f"{path} is {kind}, not {what}", f"give {flag} a regular file", USAGE)


class Store(PointReads, Lookups, ImportWrites):
    def __init__(self, path: Path | str | None = None, create: bool = True, readonly: bool = False):
        """create: make the database if it is missing; readonly: open it for reading only (the
        read commands), so it is never written, not even a journal."""
        self.path = Path(path) if path else default_path()
        self.readonly = readonly
        not_a_file(self.path, "a results database", "--db")
        if not create and not self.path.exists():
            raise ScopeError(f"no results database at {self.path}", "run 'scope run' first, or pass --db", USAGE)
        if not readonly:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as e:
                raise ScopeError(
                    f"cannot create {self.path.parent}: {e.strerror}",
                    "choose a writable location with --db or SCOPE_DB",
                    ENVIRONMENT,
                ) from None
        existed = self.path.exists()
        self.closed_stale: list[int] = []  # runs this open closed as interrupted (their scratch is the caller's)
        try:
            self.db, self.readonly = connect(self.path, self.readonly)
            if not self.readonly:
                self._close_stale()
        except ScopeError:
            self._discard_new(existed)
            raise
        except (sqlite3.Error, OSError) as e:
            self._discard_new(existed)
            raise failure(self.path, e) from None

    def _close_stale(self) -> None:
        """Runs left `running` by a process that is gone are closed as interrupted."""
        rows = self.db.execute("SELECT id, pid, host FROM runs WHERE status = 'running'").fetchall()
        gone = [r["id"] for r in rows if not process_alive(r["pid"], r["host"])]
        if gone:
            self.db.executemany(
                "UPDATE runs SET status = 'incomplete', reason = ?, finished_utc = ? WHERE id = ?",
                [(STALE_REASON, now_utc(), rid) for rid in gone],
            )
            self.db.commit()
            self.closed_stale = gone

    def _discard_new(self, existed: bool) -> None:
        """A database this call created and could not set up is removed, not left empty."""
        with contextlib.suppress(Exception):
            getattr(self, "db", None) and self.db.close()
        if not existed and self.path.is_file() and self.path.stat().st_size == 0:
            self.path.unlink(missing_ok=True)

    def close(self) -> None:
        self.db.close()

    # ------------------------------------------------------------------ writing

    @guarded
    def begin_run(
        self,
        command: list[str],
        launcher: str,
        ranks: int,
        label: str | None = None,
        launches: int | None = None,
        registry: list[dict] | None = None,
    ) -> int:
        """A new run, `running`, with its planned launches and the engine's descriptors of its
        tests (`--list --json`), in one transaction: each commit is a sync to disk, and a run's
        start paid three of them (issue 52)."""
        if registry:
            self.save_tests(registry, commit=False)
        cur = self.db.execute(
            "INSERT INTO runs (started_utc, status, command, launcher, ranks, label, pid, host, launches)"
            " VALUES (?, 'running', ?, ?, ?, ?, ?, ?, ?)",
            (
                now_utc(),
                json.dumps(secrets.scrubber().argv(command)),
                launcher,
                ranks,
                label,
                os.getpid(),
                host_name(),
                launches,
            ),  # fmt: skip
        )
        self.db.commit()
        return int(cur.lastrowid)

    @guarded
    def set_context(self, run_id: int, ctx: dict, commit: bool = True) -> None:
        ctx = secrets.context(ctx)  # no credential is stored (issue 67)
        hosts = sorted({p.get("host") for p in ctx.get("placement", [])})
        self.db.execute(
            """UPDATE runs SET context = ?, mpi_library = ?, engine_version = ?, record_schema = ?, timer = ?,
               oversubscribed = ?, hosts = ?, ranks = ? WHERE id = ?""",
            (
                json.dumps(ctx),
                (ctx.get("mpi") or {}).get("library"),
                (ctx.get("engine") or {}).get("version"),
                ctx.get("schema"),
                (ctx.get("timer") or {}).get("selected"),
                int(bool(ctx.get("oversubscribed"))),
                json.dumps(hosts),
                ctx.get("ranks"),
                run_id,
            ),
        )
        if commit:
            self.db.commit()

    @guarded
    def add_point(self, run_id: int, rec: dict, commit: bool = True, launch: int | None = None) -> None:
        self.db.execute(INSERT_POINT, point_row(run_id, rec, launch))
        if commit:
            self.db.commit()

    @guarded
    def add_pairs(self, run_id: int, rec: dict, launch: int) -> None:
        """One step of a pairs-timed point (committed with the points that follow it)."""
        self.db.execute(INSERT_PAIRS, pairs_row(run_id, rec, launch))

    def _decoded_rows(self, table: str, order: str, run_id: int, decode, problems: list[str]) -> list:
        """A run's rows of `table` (pairs, timeline) through their one decoder; a damaged row is
        left out and said in `problems`."""
        out = []
        for row in self.db.execute(f"SELECT * FROM {table} WHERE run_id = ? ORDER BY {order}", (run_id,)):
            item = decoded(lambda row=row: decode(row), problems, f"{table} row {row['id']}")
            if item is not None:
                out.append(item)
        return out

    @guarded
    def commit(self) -> None:
        self.db.commit()

    @guarded
    def commit_pending(self) -> None:
        """Commit what is written and not yet committed, if anything is (an fsync only then)."""
        if self.db.in_transaction:
            self.db.commit()

    @guarded
    def add_event(self, run_id: int, rec: dict, commit: bool = True) -> None:
        self.db.execute(INSERT_EVENT, event_row(run_id, secrets.record(rec)))
        if commit:
            self.db.commit()

    @guarded
    def finish_run(self, run_id: int, status: str, reason: str | None = None, stderr: str | None = None) -> None:
        scrub = secrets.scrubber()
        self.db.execute(
            "UPDATE runs SET status = ?, reason = ?, finished_utc = ?, stderr = ? WHERE id = ?",
            (status, reason and scrub.text(reason), now_utc(), stderr and scrub.text(stderr), run_id),
        )
        self.db.commit()

    @guarded
    def save_tests(self, registry: list[dict], commit: bool = True) -> None:
        """The engine's descriptors of its tests (from `--list --json`)."""
        self.db.executemany(
            "INSERT OR REPLACE INTO tests (name, descriptor) VALUES (?, ?)",
            [(t["name"], json.dumps(t)) for t in registry],
        )
        if commit:
            self.db.commit()

    # ------------------------------------------------------------------ reading

    @guarded
    def descriptors(self, problems: list[str] | None = None) -> list[dict]:
        """The engine's descriptors of the tests earlier runs used, as the engine wrote them; a
        descriptor that cannot be read is left out (and said in `problems`)."""
        out = []
        for name, text in self.db.execute("SELECT name, descriptor FROM tests ORDER BY name"):
            try:
                d = json.loads(text)
                if isinstance(d, dict) and "name" in d:
                    out.append(d)
                    continue
            except (ValueError, TypeError):
                pass
            if problems is not None:
                problems.append(f"the descriptor of {name}")
        return out

    @guarded
    def test_infos(self, problems: list[str] | None = None) -> dict[str, TestInfo]:
        return {d["name"]: TestInfo.of(d) for d in self.descriptors(problems)}

    @guarded
    def load_run(self, run_id: int, samples: bool = True, tests: set[str] | None = None) -> Run:
        """The typed model of one stored run: the one place stored JSON is decoded.  `tests`:
        only these tests' points (a hub's summary of a million imported points reads none)."""
        r = self.run(run_id)
        problems: list[str] = []  # stored rows that cannot be read: left out, said, never a crash
        ctx = None
        if r["context"]:
            ctx = decoded(lambda: upgrade(json.loads(r["context"]), r["record_schema"]), problems, "its context")
            ctx = ctx if isinstance(ctx, dict) else None
        command = decoded(lambda: json.loads(r["command"]), problems, "its command") if r["command"] else []
        status, reason = r["status"], r["reason"]
        if status == "running" and not process_alive(r["pid"], r["host"]):  # read-only: not fixed here
            status, reason = "incomplete", STALE_REASON
        return Run(
            id=r["id"],
            started_utc=r["started_utc"],
            finished_utc=r["finished_utc"],
            status=status,
            reason=reason,
            command=command if isinstance(command, list) else [],
            launcher=r["launcher"],
            ranks=r["ranks"],
            label=r["label"],
            origin=r["origin"] or "scope",
            source=r["source"],
            stderr=r["stderr"],
            context=decoded(lambda: Context.of(ctx), problems, "its context") if ctx else None,
            points=self._points(run_id, samples, r, problems, tests),
            events=self._events(run_id, r["record_schema"], problems),
            tests=self.test_infos(problems),
            context_record=ctx,
            launches=r["launches"],
            pairs=self._decoded_rows("pairs", "seq, launch, step", run_id, pair_step_of, problems),
            timeline=self._decoded_rows("timeline", "rank", run_id, rank_events_of, problems),
        ).with_problems(problems)

    def _events(self, run_id: int, schema: int | None, problems: list[str]) -> list[Event]:
        out = []
        for e in self.events(run_id):
            ev = decoded(lambda e=e: event_of(e, schema), problems, f"event {e['id']}")
            if ev is not None:
                out.append(ev)
        return out

    @guarded
    def runs(self) -> list[dict]:
        """Every run, with its point count and tests; a run left `running` by a process that is
        gone reads as the interrupted run it is (a read-only open does not write it)."""
        rows = self.db.execute(
            """SELECT r.*, (SELECT count(DISTINCT seq) FROM points p WHERE p.run_id = r.id)
                      + (SELECT coalesce(sum(n), 0) FROM imported i WHERE i.run_id = r.id) AS npoints,
                      coalesce((SELECT group_concat(DISTINCT test) FROM points p WHERE p.run_id = r.id),
                               (SELECT group_concat(test) FROM imported i WHERE i.run_id = r.id)) AS tests
               FROM runs r ORDER BY r.id"""
        ).fetchall()
        out = [dict(r) for r in rows]
        for r in out:
            r["kind"] = kind_of(r.get("origin"), sim_of(r.get("context")))
            if r["status"] == "running" and not process_alive(r["pid"], r["host"]):
                r["status"], r["reason"] = "incomplete", STALE_REASON
        return out

    @guarded
    def resolve_run(self, ref: str | int) -> int:
        """A run id, or 'last' (also -1, -2 ... counting back)."""
        text = str(ref).strip()
        if text in ("last", "latest"):
            text = "-1"
        # ASCII digits only (int() takes '1_0' and other scripts' digits), within SQLite's integers
        digits = text[1:] if text.startswith("-") else text
        if not (digits.isascii() and digits.isdigit()) or len(digits) > 18:
            raise ScopeError(f"'{ref}' is not a run id", "use a number from 'scope runs', or 'last'", USAGE)
        n = int(text)
        if n < 0:
            rows = self.db.execute("SELECT id FROM runs ORDER BY id DESC LIMIT 1 OFFSET ?", (-n - 1,)).fetchall()
            if not rows:
                raise ScopeError(
                    "there are no runs in this database" if n == -1 else f"no run {ref}",
                    "run 'scope run' first",
                    USAGE,
                )
            return int(rows[0][0])
        if not self.db.execute("SELECT 1 FROM runs WHERE id = ?", (n,)).fetchone():
            raise ScopeError(f"no run {n} in {self.path}", "list them with 'scope runs'", USAGE)
        return n

    @guarded
    def run(self, run_id: int) -> sqlite3.Row:
        return self.db.execute("SELECT * FROM runs WHERE id = ?", (run_id,)).fetchone()

    @guarded
    def events(self, run_id: int) -> list[sqlite3.Row]:
        return self.db.execute("SELECT * FROM events WHERE run_id = ? ORDER BY id", (run_id,)).fetchall()


def sim_of(context: str | None) -> dict | None:
    """A stored context's `sim` part (a simulated run's platform), None where there is none or
    the context cannot be read (a damaged row is reported where the run is loaded)."""
    if not context or '"sim"' not in context:
        return None
    try:
        sim = json.loads(context).get("sim")
    except (ValueError, AttributeError):
        return None
    return sim if isinstance(sim, dict) else None
