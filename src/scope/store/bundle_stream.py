"""A stored run as a stream of lines (bundle version 2, records/bundle.py): what `scope export
--format bundle` writes and `scope push` sends, read back a line at a time.

A run of 10^5 window-timed points is over a gigabyte as one document, more than a bundle may
hold; as lines it is written from the store row by row, and read into a store row by row, each
line checked as the document's rows are (bundle_checks.py) before the one transaction that
stores it all commits.  A point's record travels as the store keeps it (its per-rank windows
and samples as binary columns beside it), its text copied, not decoded, unless it holds a value
secrets.py redacts.  The same run gives the same bytes (gzip with mtime 0), so a hub stores a
run pushed twice once."""

from __future__ import annotations

import collections
import concurrent.futures
import hashlib
import io
import json
import sqlite3
import types

import msgspec

from scope import secrets
from scope.cores import usable_cores
from scope.records.bundle import VERSION, Head
from scope.store import bundle as doc
from scope.store import bundle_lines, gz
from scope.store.faults import failure

BATCH = 2000  # rows stored a statement (and held at once) while a stream is read
GROWTH = 64  # a stream may grow this much decompressed (a gzip bomb stops there); 256 MiB at least


dump_head = doc.dump_head


def encoded(store, run_id: int, samples: bool = True) -> bytes:
    """The run's stream as bytes (what a push sends)."""
    out = io.BytesIO()
    write(store, run_id, out, samples)
    return out.getvalue()


def write(store, run_id: int, out, samples: bool = True, first: dict | None = None) -> None:
    """The run as a stream of lines into the binary file `out` (gzip'd), row by row; `first`:
    its dump_head, where the caller has read it already."""
    first = dict(first or doc.dump_head(store, run_id))
    scrub = secrets.Scrubber(secrets.known(), first.pop("private"))
    first["tests"] = scrub.walk(first["tests"])
    head = dict(first, version=VERSION, layout="lines", samples="kept" if samples else "left out")
    enc = msgspec.json.Encoder()
    with _Members(out) as z:
        z.write(enc.encode({k: head[k] for k in Head.__struct_fields__ if k in head}) + b"\n")
        n = dict.fromkeys(bundle_lines.COUNTS, 0)
        for launch, text, blob, kept_apart in store.db.execute(
            "SELECT launch, record, samples, windows FROM points WHERE run_id = ?"
            " ORDER BY seq, launch IS NOT NULL, launch, id",
            (run_id,),
        ):
            raw = text.encode()
            if _plain(text) and not scrub.holds(raw):
                record = msgspec.Raw(raw)
            else:  # a record to decode: one holding a secret, or what msgspec refuses
                record = scrub.walk(json.loads(text))
            row = {"row": "point", "record": record, "launch": launch}
            row.update(samples=blob if samples else None, windows=kept_apart)
            z.write(enc.encode(row) + b"\n")
            n["point"] += 1
        for kind, rows in doc.other_rows(store, run_id).items():
            for row in rows:  # an imported row is columns of numbers: nothing to scrub
                z.write(enc.encode({"row": kind, **(row if kind == "imported" else scrub.walk(row))}) + b"\n")
                n[kind] += 1
        z.write(enc.encode({"row": "end", **{bundle_lines.COUNTS[k]: v for k, v in n.items()}}) + b"\n")


class _Members:
    """gzip written as a member every MEMBER bytes of text, compressed on the side while the
    next is made (zlib lets go of the interpreter as it compresses, so a second core takes it;
    compressing was two thirds of writing a large run).  A file of members is one gzip stream
    to every reader (RFC 1952), and the same text gives the same members, so the same bytes."""

    MEMBER = 8 << 20

    def __init__(self, out):
        self.out, self.parts, self.size = out, [], 0  # a member's text, joined once (not grown)
        self.pool = concurrent.futures.ThreadPoolExecutor(max_workers=max(1, min(2, usable_cores())))
        self.pending: collections.deque = collections.deque()

    def write(self, data: bytes) -> None:
        self.parts.append(data)
        self.size += len(data)
        if self.size >= self.MEMBER:
            self._flush()

    def _flush(self) -> None:
        if self.parts:
            self.pending.append(self.pool.submit(gz.compress, b"".join(self.parts)))
            self.parts, self.size = [], 0
        while self.pending and (self.pending[0].done() or len(self.pending) > 2):
            self.out.write(self.pending.popleft().result())

    def __enter__(self) -> _Members:
        return self

    def __exit__(self, *exc) -> None:
        try:
            if exc[0] is None:
                self._flush()
                while self.pending:
                    self.out.write(self.pending.popleft().result())
        finally:
            self.pool.shutdown(cancel_futures=True)


def _plain(text: str) -> bool:
    """Whether stored record text surely travels as it is: written by msgspec (no space after
    a colon), with no NaN or Infinity, no escape (an older scope's json.dumps wrote spaces,
    NaN and escaped surrogates, which msgspec refuses or writes otherwise).  Any other is
    decoded and written again.  Single characters are looked for first (a memchr each, 5x
    faster than the words on a large run's records); without a backslash no string holds a
    quote, so the first '":' ends the first key, and a writer spaces every colon or none."""
    if "\\" in text:
        return False
    colon = text.find('":')
    if colon < 0 or text[colon + 2 : colon + 3] == " ":
        return False
    return not (("N" in text and "NaN" in text) or ("I" in text and "Infinity" in text))


def _opened(raw):
    """A binary file's text: decompressed where it is gzip'd, as it is where not."""
    gzipped = raw.read(2) == b"\x1f\x8b"
    raw.seek(0)
    return gz.reader(raw) if gzipped else raw


def _is_stream(raw) -> bool:
    """Whether a bundle (a binary file at its start) is a stream of lines: its first line says so."""
    try:
        return bundle_lines.is_stream(_opened(raw).read(bundle_lines.HEAD_SEEN))
    except gz.ERRORS:
        return False  # not whole gzip data: the reading of it says so


def streamed(path) -> bool:
    """Whether a bundle file is a stream of lines."""
    try:
        with open(path, "rb") as raw:
            return _is_stream(raw)
    except OSError:
        return False  # the import of it says why


def streamed_bytes(data: bytes) -> bool:
    """Whether an upload is a stream of lines."""
    return _is_stream(io.BytesIO(data))


def load_file(store, path, label: str | None = None) -> tuple[int, int]:
    """A stream file stored as a run, read a line at a time in one transaction (all or
    nothing): its run id and how many point rows it had."""
    limit = max(doc.LIMIT, GROWTH * path.stat().st_size)
    with open(path, "rb") as raw:
        rid, seen = _load(store, _opened(raw), limit, label)
    return rid, seen.rows


def load_data(store, data: bytes, limit: int, run_id: int | None = None) -> int:
    """A bundle's bytes (a stream, or the one document of an older scope) stored as a run, as
    `run_id` where given: a stream a line at a time, never held whole."""
    if streamed_bytes(data):
        return _load(store, _opened(io.BytesIO(data)), limit, run_id=run_id)[0]
    return doc.load(store, doc.read(data, limit), run_id)


def load_bytes(store, data: bytes, limit: int, grew=None) -> tuple[int, Summary]:
    """An upload's stream stored as a run as it is read (a hub's push): its id, and what the hub
    reads of it besides the stored run (the Summary), its digest among it."""
    hashed = _Hashing(_opened(io.BytesIO(data)), grew)
    rid, seen = _load(store, hashed, limit)
    seen.digest = hashed.sha.hexdigest()
    return rid, seen


class Summary:
    """What a stream said beside its rows, kept as it is stored: its head, its events, its
    imported benchmarks' tests and sizes, the points it measured (distinct indexes)."""

    def __init__(self, head):
        self.run, self.context, self.tests, self.samples = head.run, head.context, head.tests, head.samples
        self.events: list = []
        self.imported: list = []
        self.indexes: set = set()
        self.imported_rows = self.rows = 0
        self.digest = ""

    @property
    def points(self) -> int:
        """Each measured point once (however many launches), and each imported row."""
        return len(self.indexes) + self.imported_rows

    def saw(self, kind: str, row) -> None:
        if kind == "point":
            self.rows += 1
            self.indexes.add(row.record.get("index"))
        elif kind == "event":
            self.events.append(row)
        elif kind == "imported":
            self.imported.append(types.SimpleNamespace(test=row.test))
            self.imported_rows += len(row.sizes) // 8


class _Hashing:
    """A file's text read with its SHA-256 (the bundle's digest) taken as it goes, and `grew(bytes
    so far)` told after each block."""

    def __init__(self, f, grew=None):
        self.f, self.sha, self.grew, self.seen = f, hashlib.sha256(), grew, 0

    def read(self, n: int) -> bytes:
        block = self.f.read(n)
        self.sha.update(block)
        self.seen += len(block)
        if self.grew is not None and block:
            self.grew(self.seen)
        return block


def _load(store, f, limit: int, label: str | None = None, run_id: int | None = None) -> tuple[int, Summary]:
    """The stream of the text file `f` stored as a run (as `run_id` where given) in one
    transaction, and its Summary."""
    db: sqlite3.Connection = store.db
    it = bundle_lines.rows_texts(bundle_lines.lines(f, limit))
    head = next(it)[0]
    if label is not None:
        head.run.label = label
    seen = Summary(head)
    try:
        with db:
            rid = doc.insert_run(db, head.run, head.context, head.tests, run_id)
            _store_rows(db, rid, it, seen)
    except (sqlite3.Error, OSError) as e:
        raise failure(store.path, e) from None
    return rid, seen


def _store_rows(db: sqlite3.Connection, rid: int, it, seen: Summary) -> None:
    scrub = secrets.scrubber()
    todo: dict[str, list] = {"point": [], "event": [], "pairs": [], "imported": []}
    for row, record_text in it:
        kind = row.__struct_config__.tag
        todo[kind].append(doc.stored_row(rid, row, kind, scrub, record_text))
        seen.saw(kind, row)
        if len(todo[kind]) >= BATCH:
            doc.insert_rows(db, kind, todo[kind])
            todo[kind] = []
    for kind, rest in todo.items():
        doc.insert_rows(db, kind, rest)
