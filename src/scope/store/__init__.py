"""The results database: SQLite, schema versioned with PRAGMA user_version and brought up to
date by ordered migrations; a database newer than this code is refused, never altered.

A run's records are committed at most half a second after they arrive and whenever a launch
ends, however it ends, so a run that dies keeps what it measured (run/recorder.py, COMMIT_EVERY_S)."""

from scope.store.connect import default_path
from scope.store.decode import RECORD_SCHEMA, samples_of
from scope.store.encode import now_utc
from scope.store.schema import MIGRATIONS, SCHEMA_VERSION
from scope.store.store import STALE_REASON, Store

__all__ = [
    "MIGRATIONS", "RECORD_SCHEMA", "SCHEMA_VERSION", "STALE_REASON", "Store", "default_path", "now_utc", "samples_of",
]  # fmt: skip
