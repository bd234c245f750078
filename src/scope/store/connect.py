"""Opening the results database: read-only or for writing, refusing a database newer than
this code or not SCOPE's, and bringing an older one up to date by the ordered migrations under
one write lock."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from urllib.parse import quote

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
    try:
        return max(0.0, float(os.environ.get("SCOPE_DB_TIMEOUT", "30")))
    except ValueError:
        return 30.0


def connect(path: Path, readonly: bool) -> tuple[sqlite3.Connection, bool]:
    """An open connection and whether it is read-only: an older database opened for reading
    is upgraded, the one write a read does."""
    if readonly:
        db = sqlite3.connect(f"file:{quote(str(path.resolve()))}?mode=ro", uri=True, timeout=lock_wait_s())
    else:
        db = sqlite3.connect(str(path), timeout=lock_wait_s())
    db.row_factory = sqlite3.Row
    db.execute("PRAGMA foreign_keys = ON")
    try:
        version = _version(db, path)
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


def _version(db: sqlite3.Connection, path: Path) -> int:
    # one statement, so one snapshot: another command creating the database at this very
    # moment cannot be seen half-way (tables there, version not yet)
    version, tables = db.execute(
        "SELECT (SELECT user_version FROM pragma_user_version), (SELECT count(*) FROM sqlite_master)"
    ).fetchone()
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
            for statement in statements(MIGRATIONS[i]):
                db.execute(statement)
            db.execute(f"PRAGMA user_version = {i + 1}")
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise
    finally:
        db.isolation_level = ""
