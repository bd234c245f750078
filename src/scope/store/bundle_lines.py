"""Reading a bundle's stream of lines (version 2, records/bundle.py; bundle_stream.py writes
it): a line at a time, each checked as the one document's rows are (bundle_checks.py), the
stream refused when it passes its limit, is cut short or counts its rows otherwise."""

from __future__ import annotations

import contextlib
import io
import queue
import re
import threading
from collections.abc import Iterator

import msgspec
import numpy as np

from scope.errors import USAGE, ScopeError
from scope.records.bundle import (
    FORMAT,
    Bundle,
    End,
    EventLine,
    EventRow,
    Head,
    ImportedLine,
    ImportedRow,
    Line,
    PairsLine,
    PairsRow,
    PointLine,
    PointRow,
)
from scope.store import gz
from scope.store.bundle_checks import (
    DEPTH,
    HINT,
    event_problem,
    head_problem,
    imported_problem,
    point_problem,
    record_problem,
    repeated_key,
)

LAYOUT = re.compile(rb'"layout"\s*:\s*"lines"')
HEAD_SEEN = 1 << 20  # bytes of a bundle's start where its head line says it is a stream


def is_stream(text) -> bool:
    """Whether decompressed bundle text is the stream of lines (its first line says so, in
    its first MiB: JSON's spaces allowed)."""
    first = bytes(text[:HEAD_SEEN]).split(b"\n", 1)[0]
    return LAYOUT.search(first) is not None


LINE_LIMIT = 64 << 20  # bytes a line may have (a point of 16,384 ranks' windows is 4 MB of JSON)


def lines(f, limit: int) -> Iterator[bytes]:
    """The lines of a binary file, at most `limit` bytes in all and LINE_LIMIT a line: a longer
    one is refused when it passes its limit, not after it has filled the memory or the disk."""
    seen, rest = 0, b""
    try:
        for chunk in _read_ahead(f):
            seen += len(chunk)
            if seen > limit:
                raise ScopeError(f"the bundle is over {limit >> 20} MiB once decompressed", HINT, USAGE)
            *whole, rest = (rest + chunk).split(b"\n")
            for line in whole:
                yield line + b"\n"
            if len(rest) > LINE_LIMIT:
                raise ScopeError(f"the bundle has a line over {LINE_LIMIT >> 20} MiB", HINT, USAGE)
        if rest:
            yield rest
    except gz.ERRORS as e:
        raise ScopeError(f"the bundle is not whole gzip data ({e})", HINT, USAGE) from None


def _read_ahead(f, size: int = 4 << 20) -> Iterator[bytes]:
    """A file's blocks, read (and decompressed: zlib lets go of the interpreter) by a thread of
    their own while the lines before are checked and stored; its error raised here."""
    blocks: queue.Queue = queue.Queue(maxsize=4)
    stop = threading.Event()

    def offer(item) -> bool:
        """The item queued, unless the reading was stopped first (then the reader ends)."""
        while not stop.is_set():
            with contextlib.suppress(queue.Full):
                blocks.put(item, timeout=0.1)
                return True
        return False

    def pump() -> None:
        try:
            while block := f.read(size):
                if not offer(block):
                    return
            offer(None)
        except gz.ERRORS as e:
            offer(e)

    reader = threading.Thread(target=pump, name="bundle-read-ahead", daemon=True)
    reader.start()
    try:
        while (block := blocks.get()) is not None:
            if isinstance(block, Exception):
                raise block
            yield block
    finally:
        stop.set()  # the reader ends within 0.1 s of its next block
        reader.join()


def rows(it: Iterator[bytes]) -> Iterator[Head | Line]:
    """The stream's head, then each row, every one checked; a stream that ends before its End
    line, goes on after it, or counts otherwise is refused."""
    return (row for row, _ in rows_texts(it))


def rows_texts(it: Iterator[bytes]) -> Iterator[tuple[Head | Line, bytes | None]]:
    """rows(), each with its record as msgspec writes it where reading the line wrote it
    already (a point's, checking its shape), else None: the store keeps that text."""
    first = next(it, None)
    if first is None:
        raise ScopeError("not a SCOPE run bundle: it is empty", HINT, USAGE)
    head = _decoded(Head, first, "its first line")[0]
    why = head_problem(head.run, head.context, head.tests)
    if why:
        raise ScopeError(f"not a SCOPE run bundle: {why}", HINT, USAGE)
    yield head, None
    n = dict.fromkeys(COUNTS, 0)
    end = None
    for k, text in enumerate(it, start=2):
        if end is not None:
            raise ScopeError(f"not a SCOPE run bundle: line {k} follows its end", HINT, USAGE)
        row, record_text = _decoded(Line, text, f"line {k}")
        if isinstance(row, End):
            end = row
            continue
        kind = row.__struct_config__.tag
        why = _problem(row, kind, n[kind])
        if why:
            raise ScopeError(f"not a SCOPE run bundle: {why}", HINT, USAGE)
        n[kind] += 1
        yield row, record_text
    if end is None or any(n[kind] != getattr(end, field) for kind, field in COUNTS.items()):
        why = "it was cut short (no end line)" if end is None else "its rows are not the ones its end line counts"
        raise ScopeError(f"not a SCOPE run bundle: {why}", HINT, USAGE)


STRING = re.compile(
    rb'"[^"\\]*(?:\\.[^"\\]*)*"'
)  # a JSON string, escapes and all (unrolled: runs, not a char at a time)
NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
OPENS = np.zeros(256, dtype=np.int8)
OPENS[list(b"[{")], OPENS[list(b"]}")] = 1, -1


def _bare(text: bytes) -> bytes:
    """The JSON text with every string emptied (`""`): without a backslash no string holds a
    quote, so the quotes split it exactly; with one, the string pattern does."""
    return b'""'.join(text.split(b'"')[::2]) if b"\\" not in text else STRING.sub(b'""', text)


def _depth(bare: bytes) -> int:
    """How deep JSON text nests, read from it with its strings emptied (_bare): a value that is
    no object or array, 0."""
    steps = OPENS[np.frombuffer(bare.translate(None, NOT_BRACKETS), dtype=np.uint8)]
    return int(np.cumsum(steps, dtype=np.int32).max()) if len(steps) else 0


def _within(text: bytes, most: int) -> bool:
    """Whether JSON text nests `most` levels at most: at once where it opens no more than that
    many objects and arrays (a point's record opens 20; brackets in strings only add)."""
    return text.count(b"{") + text.count(b"[") <= most or _depth(_bare(text)) <= most


def shape(text: bytes, value) -> tuple[str | None, bytes | None]:
    """What is wrong with a line's shape, read from its text (`value`: that text decoded) in a
    few passes of C (a line of a large run is one of 10^5, and walking each in Python took
    longer than storing it): nesting past DEPTH, or an object that names a key twice (a line
    whose keys are fewer once decoded), named by the slow reading only then.

    Most lines are settled by counting colons: without a backslash the text's strings are
    what they decode to, so its colons are its keys' plus those inside strings, and a key
    named twice leaves the decoded value fewer of both.  Where the line's colons are its
    decoded keys' plus those msgspec writes for its objects and arrays, the line is its value,
    and its nesting is theirs, one level down; its long strings (base64 windows, most of its
    bytes) are neither written again nor walked."""
    if b"\\" not in text and isinstance(value, dict):
        inner = {k: msgspec.json.encode(v) for k, v in value.items() if isinstance(v, (dict, list))}
        if text.count(b":") == len(value) + sum(t.count(b":") for t in inner.values()):
            if all(_within(t, DEPTH + 1) for t in inner.values()):  # the line and its row are 2 levels
                return None, inner.get("record")
            return f"nested past {DEPTH} levels", None
    bare = _bare(text)
    if _depth(bare) > DEPTH + 2:
        return f"nested past {DEPTH} levels", None
    if _bare(msgspec.json.encode(value)).count(b'":') != bare.count(b'":'):
        twice = repeated_key(text)  # or a space before a colon, which JSON allows
        return (f"an object names {twice!r} twice" if twice is not None else None), None
    return None, None


def _decoded(kind, text: bytes, where: str):
    """A line as `kind`: decoded once, its shape checked, then typed from the decoded value
    (msgspec.convert: 4x faster than decoding the text again); with its record's text where
    the check wrote it (shape)."""
    try:
        value = msgspec.json.decode(text)
    except (msgspec.DecodeError, RecursionError, UnicodeError) as e:
        raise ScopeError(f"not a SCOPE run bundle: {where} is not whole JSON ({e})", HINT, USAGE) from None
    why, record_text = shape(text, value)
    if why:
        raise ScopeError(f"not a SCOPE run bundle: {where}: {why}", HINT, USAGE)
    try:
        return msgspec.convert(value, kind), record_text
    except msgspec.ValidationError as e:
        raise ScopeError(f"not a SCOPE run bundle: {where}: {e}", HINT, USAGE) from None


# A stream's rows by their tag, and the End line's field that counts them.
COUNTS = {"point": "points", "event": "events", "pairs": "pairs", "imported": "imported"}


def _problem(row, kind: str, i: int) -> str | None:
    """What is wrong with row i (from 0) of its kind."""
    if kind == "point":
        return point_problem(row, i, nesting_checked=True)
    if kind == "imported":
        return imported_problem(row, i)
    if kind == "event":
        return event_problem(row, i, nesting_checked=True)
    return record_problem(row.record, ("pairs",), f"pairs step {i + 1}", nesting_checked=True)


def as_bundle(text) -> Bundle:
    """A stream already decompressed (a push the hub holds) as the one document it stands for."""
    it = iter(io.BytesIO(bytes(text)))
    head, *lines_ = rows(it)
    body = [_untagged(r) for r in lines_]
    return Bundle(
        format=FORMAT,
        version=head.version,
        scope=head.scope,
        run=head.run,
        context=head.context,
        tests=head.tests,
        points=[r for r in body if type(r) is PointRow],
        events=[r for r in body if type(r) is EventRow],
        pairs=[r for r in body if type(r) is PairsRow],
        imported=[r for r in body if type(r) is ImportedRow],
        samples=head.samples,
    )


UNTAGGED = {PointLine: PointRow, EventLine: EventRow, PairsLine: PairsRow, ImportedLine: ImportedRow}


def _untagged(line):
    """A line's row as the document's (the same fields, without the tag the line carries)."""
    cls = UNTAGGED[type(line)]
    return cls(**{f: getattr(line, f) for f in cls.__struct_fields__})
