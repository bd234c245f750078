"""What the commands share: the results database as each opens it, an output file checked
before anything is written, the engine's test descriptors."""

from __future__ import annotations

import sys
from pathlib import Path

from scope.errors import USAGE, ScopeError
from scope.hub.target import hub_url, read_token
from scope.model import TestInfo
from scope.run.reaper import reap
from scope.run.toolchain import engine_path, find_toolchain, list_tests
from scope.store import Store, default_path
from scope.views.fmt import safe


def open_store(args, create=True):
    """The results database: created and written by run and import; opened for reading only
    (create=False) by every command that only reads it.  A writable open closes the runs a
    killed scope left `running` and removes what their jobs left (run/reaper.py)."""
    store = Store(args.db, create=create, readonly=not create)
    reap(store)
    return store


def stored_descriptors(args) -> list[dict]:
    """The engine's descriptors of the tests earlier runs stored (none without a database)."""
    return open_store(args, create=False).descriptors() if Path(args.db or default_path()).exists() else []


def descriptors(args):
    """The engine's test descriptors: those stored with earlier runs, else the engine's own
    (built if needed); none when no MPI is at hand (imports then keep the peers' names)."""
    stored = stored_descriptors(args)
    if stored:
        return [TestInfo.of(d) for d in stored]
    try:
        return [TestInfo.of(t) for t in list_tests(engine_path(find_toolchain(None), quiet=True))]
    except ScopeError:
        return []


def warn_damaged(*runs) -> None:
    """A run the store read with parts left out says so on stderr (show and report say it in
    their warnings): one line each."""
    for run in runs:
        for e in run.events:
            if e.type == "warning" and e.kind == "corrupt":
                print(f"scope: warning [corrupt]: {e.message} ({e.hint})", file=sys.stderr)


CHUNK = 1 << 16


def emit_json(pieces) -> None:
    """A JSON document given in pieces (views/jsonout.stream) to standard output as emit writes
    text, 64 KiB at a time, never held whole; its text needs no escaping for a terminal (JSON
    writes every control character and every non-ASCII one as \\u escapes)."""
    buf: list[str] = []
    size = 0
    for piece in pieces:
        buf.append(piece)
        size += len(piece)
        if size >= CHUNK:
            sys.stdout.write("".join(buf))
            sys.stdout.flush()
            buf, size = [], 0
    sys.stdout.write("".join(buf) + "\n")
    sys.stdout.flush()


def emit(text: str, data: bool = False) -> None:
    """Standard output in pieces of 64 KiB, flushed each: a reader that goes away
    (`| head -c1`) is found at the next piece, and main ends with 141 as a shell's SIGPIPE
    would.  One write of megabytes can return as done after the reader closed (partial writes
    counted whole on some pipes), and the command then ended 0 (issue 44).  Control characters
    from stored text (an MPI library string, a host name, a CPU model holding ESC [31m or an OSC
    title) are shown as escapes, line by line, so no record can drive the terminal; `data`
    (CSV) is written as it is unless a terminal reads it."""
    if not data or sys.stdout.isatty():
        text = "\n".join(map(safe, text.split("\n")))
    out = sys.stdout
    for i in range(0, len(text), CHUNK):
        out.write(text[i : i + CHUNK])
        out.flush()


def warn_text(store: Store) -> None:
    """Stored text that was not valid UTF-8 (store/connect.Undecodable) says so once, on stderr."""
    seen = getattr(store.db.text_factory, "seen", None)
    if seen:
        print(
            f"scope: warning [corrupt]: stored text that is not UTF-8 is shown with U+FFFD, e.g. {safe(seen[0])!r} "
            "(written by another tool? the rest of the row is as stored)",
            file=sys.stderr,
        )


def push_target(args, url: str | None) -> tuple[str, str] | None:
    """The hub and token a command pushes with, checked before anything runs: None when no hub."""
    if url is None:
        if args.token_file or args.cluster:
            raise ScopeError("--token-file and --cluster say how to push, but no hub is named", "add --push URL", USAGE)
        return None
    return hub_url(url), read_token(args.token_file)
