"""Database faults as one-line errors naming their true cause (exit 3), and whether the process
that began a run is still there."""

from __future__ import annotations

import errno
import functools
import os
import sqlite3
from pathlib import Path

from scope.cores import host_name
from scope.errors import ENVIRONMENT, ScopeError


def failure(path: Path, e: Exception) -> ScopeError:
    """A database fault as the one-line error that names its true cause (exit 3)."""
    msg = str(e)
    low = msg.lower()
    if "locked" in low or "busy" in low:
        return ScopeError(
            f"the results database {path} is locked by another writer ({msg}, after waiting)",
            "wait for the other scope command to finish, or pass another --db",
            ENVIRONMENT,
        )
    if "full" in low or getattr(e, "errno", None) == errno.ENOSPC:
        return ScopeError(
            f"no space left for the results database {path} ({msg})",
            "free disk space or pass a --db on another file system",
            ENVIRONMENT,
        )
    if "readonly" in low or "read-only" in low or "unable to open" in low or "permission" in low:
        return ScopeError(
            f"cannot write the results database {path} ({msg})",
            "choose a writable location with --db or SCOPE_DB",
            ENVIRONMENT,
        )
    if "not a database" in low or "malformed" in low or "corrupt" in low:
        return ScopeError(
            f"{path} is not a SCOPE results database or is corrupt ({msg})",
            "move it aside or pass another --db",
            ENVIRONMENT,
        )
    return ScopeError(f"the results database {path} failed: {msg}", "see the message; pass another --db", ENVIRONMENT)


def guarded(method):
    """Every store operation: a database fault becomes failure's one-line error."""

    @functools.wraps(method)
    def call(self, *args, **kwargs):
        try:
            return method(self, *args, **kwargs)
        except (sqlite3.Error, OSError) as e:
            raise failure(self.path, e) from None

    return call


def process_alive(pid: int | None, host: str | None) -> bool:
    """Whether the process that began a run still exists (only knowable on its own host)."""
    if pid is None or host != host_name():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
