"""Opening the results database: read-only or for writing, refusing a database newer than
this code or not SCOPE's, and bringing an older one up to date by the ordered migrations under
one write lock."""

from __future__ import annotations

import contextlib
import os
import sqlite3
from pathlib import Path
from urllib.parse import quote

from scope.envvars import seconds
from scope.errors import ENVIRONMENT, ScopeError
from scope.store.schema import MIGRATIONS, SCHEMA_VERSION, statements


def default_path() -> Path:
    env = os.environ.get("SCOPE_DB")
    if env:
        return Path(env)
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "scope" / "results.db"


def lock_wait_s() -> float:
    """How long to wait for another writer's lock before giving up (SCOPE_DB_TIMEOUT, 30 s)."""
    return seconds("SCOPE_DB_TIMEOUT", 30.0, 86400.0)


def connect(path: Path, readonly: bool, undone: bool = False) -> tuple[sqlite3.Connection, bool]:
    """An open connection and whether it is read-only: an older database opened for reading
    is upgraded, and a write cut short by a killed process undone, the writes a read does."""
    if readonly:
        db = sqlite3.connect(f"file:{quote(str(path.resolve()))}?mode=ro", uri=True, timeout=lock_wait_s())
    else:
        db = sqlite3.connect(str(path), timeout=lock_wait_s())
    db.row_factory = sqlite3.Row
    db.text_factory = Undecodable()
    db.execute("PRAGMA foreign_keys = ON")
    try:
        try:
            version = _version(db, path)
        except sqlite3.OperationalError as e:
            if not (readonly and not undone and _cut_short(e, path)):
                raise
            db.close()
            _undo(path)
            return connect(path, True, undone=True)
        if version == 0 and readonly:
            raise ScopeError(f"{path} is empty: not a SCOPE results database", "pass another --db", ENVIRONMENT)
        if version < SCHEMA_VERSION:
            if readonly:
                db.close()
                return connect(path, False)
            _migrate(db, path)
    except BaseException:
        db.close()
        raise
    return db, readonly


class Undecodable:
    """The connection's text factory: stored text that is not valid UTF-8 (written by another
    tool) is read with U+FFFD in place of the bad bytes and counted, so one bad row costs its
    own characters and a warning, not every listing (issue 44: a label made runs, show,
    export, compare and layers fail)."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    def __call__(self, raw: bytes) -> str:
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            text = raw.decode("utf-8", "replace")
            if len(self.seen) < 3:
                self.seen.append(text[:40])
            return text


def _cut_short(e: sqlite3.OperationalError, path: Path) -> bool:
    """A hot journal: a writer died inside a transaction (scope killed while storing), and SQLite
    must roll it back before anyone reads, which a read-only connection cannot."""
    name = getattr(e, "sqlite_errorname", None)  # Python 3.11+
    if name is not None:
        return name == "SQLITE_READONLY_ROLLBACK"
    return "readonly database" in str(e) and Path(f"{path}-journal").exists()


def _undo(path: Path) -> None:
    """Lets SQLite roll the cut-short write back (the database returns to what was committed:
    nothing stored is lost), which takes write access to its folder."""
    try:
        with contextlib.closing(sqlite3.connect(str(path), timeout=lock_wait_s())) as db:
            db.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.Error:
        raise ScopeError(
            f"{path} holds a write that a killed scope process left unfinished, and undoing it needs write access",
            "run any scope command on it once where the database and its folder are writable",
            ENVIRONMENT,
        ) from None


def _version(db: sqlite3.Connection, path: Path) -> int:
    # one statement, so one snapshot: another command creating the database at this very
    # moment cannot be seen half-way (tables there, version not yet)
    version, tables, runs = db.execute(
        "SELECT (SELECT user_version FROM pragma_user_version), (SELECT count(*) FROM sqlite_master),"
        " (SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'runs')"
    ).fetchone()
    if version < 0 or (version > 0 and not runs):
        # not a version SCOPE wrote: a read must not try migrations on it (issue 44)
        raise ScopeError(
            f"{path} has schema version {version} and {'no runs table' if not runs else 'tables'} SCOPE never wrote",
            "pass another --db",
            ENVIRONMENT,
        )
    if version > SCHEMA_VERSION:
        raise ScopeError(
            f"{path} has schema version {version}, newer than this SCOPE understands ({SCHEMA_VERSION})",
            "upgrade SCOPE to read it",
            ENVIRONMENT,
        )
    if version == 0 and tables:
        raise ScopeError(f"{path} is an SQLite database but not SCOPE's", "pass another --db", ENVIRONMENT)
    return version


def _migrate(db: sqlite3.Connection, path: Path) -> None:
    """Under an immediate (write) lock, the version is read again and the missing migrations
    applied with their version bumps, as one transaction: two scope commands opening a new
    database at once cannot both create it."""
    db.isolation_level = None
    db.execute("BEGIN IMMEDIATE")
    try:
        for i in range(_version(db, path), SCHEMA_VERSION):
            step = MIGRATIONS[i]
            for statement in statements(step) if isinstance(step, str) else ():
                db.execute(statement)
            if callable(step):
                step(db)
            db.execute(f"PRAGMA user_version = {i + 1}")
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise
    finally:
        db.isolation_level = ""
