"""A real PostgreSQL server for the hub's tests: Debian's `postgresql` package (which `.ci/run`
installs), a throwaway cluster made with initdb in a temporary folder and run by the `postgres`
user on a Unix socket and a free TCP port on loopback.  Where PostgreSQL is not installed the
tests that need it skip, saying why, except in CI, where they fail."""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path


def binaries() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    return Path(found[-1]).parent if found else None


def why_not() -> str | None:
    """Why this machine cannot start a server for the tests, or None."""
    if binaries() is None:
        return "PostgreSQL is not installed (apt-get install postgresql; .ci/run installs it)"
    if os.geteuid() != 0:
        return "starting a throwaway PostgreSQL cluster needs root (to run it as the postgres user)"
    try:
        pwd.getpwnam("postgres")
    except KeyError:
        return "there is no postgres user"
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def server():
    """A running server: yields its URL (postgresql://postgres@127.0.0.1:PORT/postgres)."""
    bin_dir = binaries()
    pg = pwd.getpwnam("postgres")
    root = Path(tempfile.mkdtemp(prefix="scope-pg-"))
    os.chown(root, pg.pw_uid, pg.pw_gid)
    data, port = root / "data", free_port()

    def as_postgres(*argv, **kw):
        return subprocess.run(["runuser", "-u", "postgres", "--", *argv], capture_output=True, text=True, **kw)

    try:
        p = as_postgres(str(bin_dir / "initdb"), "-D", str(data), "-A", "trust", "-U", "postgres", "-E", "UTF8")
        assert p.returncode == 0, p.stderr
        opts = f"-p {port} -k {root} -c listen_addresses=127.0.0.1 -c max_connections=200 -c fsync=on"
        p = as_postgres(str(bin_dir / "pg_ctl"), "-D", str(data), "-o", opts, "-l", str(root / "log"), "-w", "start")
        assert p.returncode == 0, p.stderr + (root / "log").read_text(errors="replace")
        url = f"postgresql://postgres@127.0.0.1:{port}/postgres"
        for _ in range(50):
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
                break
            time.sleep(0.1)
        yield url
    finally:
        as_postgres(str(bin_dir / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop")
        shutil.rmtree(root, ignore_errors=True)


def fresh_database(url: str, name: str) -> str:
    """A new empty database on the server (each test its own): its URL."""
    import psycopg

    with psycopg.connect(url.replace("postgresql://", "postgresql://", 1), autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
        conn.execute(f'CREATE DATABASE "{name}"')
    return url.rsplit("/", 1)[0] + "/" + name
