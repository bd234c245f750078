"""A stored run as one document and back (records/bundle.py declares it): what `scope push`
uploads, what the hub keeps, and what `scope import` reads as a run again.

Dumping is deterministic (rows in their stored order, keys as stored), so the same run gives the
same bytes and the hub its same digest: a run pushed twice is stored once.  Loading is the strict
reading of a hostile file: the document's types and bounds (msgspec, records/bundle.py), then
each engine record inside against its own type, the imported columns' ranges, and only then one
transaction that stores it all or nothing."""

from __future__ import annotations

import hashlib
import io
import json
import math
import os
import sqlite3

import msgspec
import numpy as np

from scope import secrets
from scope.errors import USAGE, ScopeError
from scope.records.bundle import FORMAT, Bundle, ImportedRow, RunColumns
from scope.store import bundle_lines, gz, windows
from scope.store.bundle_checks import HINT, problem_of, repeated_key
from scope.store.decode import blob_array, blob_samples
from scope.store.encode import INSERT_EVENT, INSERT_IMPORTED, INSERT_POINT, POINT_COLUMNS, event_row, point_row
from scope.store.faults import failure
from scope.store.pairs import COLUMNS as PAIR_COLUMNS
from scope.store.pairs import INSERT_PAIRS, INTS, pairs_row
from scope.version import __version__

RUN_FIELDS = RunColumns.__struct_fields__
LIMIT = 256 << 20  # bytes a bundle may have once decompressed (a 10^6-point import is ~40 MB)


def _finite(v):
    return None if v is None or not math.isfinite(v) else v


def dump_head(store, run_id: int) -> dict:
    """A bundle's fields other than its rows (json-able), its context scrubbed (secrets.py), and
    `private`: the run's private folders, which nothing that leaves may name."""
    r = store.run(run_id)
    run = {k: r[k] for k in RUN_FIELDS if k in r.keys()}
    run["command"] = json.loads(r["command"]) if r["command"] else []
    run["origin"] = r["origin"] or "scope"
    if run["status"] not in ("complete", "incomplete"):
        raise ScopeError(f"run {run_id} is still {run['status']}", "push it when it has ended", USAGE)
    if run["origin"] == "events":  # said, not lost: a bundle has no place for a program's events yet
        raise ScopeError(
            f"run {run_id} is a program's events, which a run bundle does not carry",
            "export them with --format json or csv; push and bundle measured runs",
            USAGE,
        )
    context = json.loads(r["context"]) if r["context"] else None
    private = secrets.private_paths(dict(run, scratch=store.scratch_of(run_id)), context)
    scrub = secrets.Scrubber(secrets.known(), private)
    names = {t for (t,) in store.db.execute("SELECT DISTINCT test FROM points WHERE run_id = ?", (run_id,))}
    names |= {t for (t,) in store.db.execute("SELECT DISTINCT test FROM imported WHERE run_id = ?", (run_id,))}
    return {
        "format": FORMAT,
        "scope": __version__,
        "run": scrub.walk(run),
        "context": secrets.context(context, scrub) if context is not None else None,
        "tests": [d for d in store.descriptors() if d["name"] in names],
        "private": private,
    }


def other_rows(store, run_id: int) -> dict[str, list[dict]]:
    """A run's rows other than its points, as a bundle carries them: events, pairs, imported."""
    db = store.db
    npoints = 1 + (db.execute("SELECT max(seq) FROM points WHERE run_id = ?", (run_id,)).fetchone()[0] or 0)
    return {
        "event": [
            {"record": json.loads(t)}
            for (t,) in db.execute("SELECT record FROM events WHERE run_id = ? ORDER BY id", (run_id,))
            if t
        ],
        "pairs": [
            {"launch": row["launch"], "record": _pairs_record(row, npoints)}
            for row in db.execute("SELECT * FROM pairs WHERE run_id = ? ORDER BY seq, launch, step, id", (run_id,))
        ],
        "imported": [
            _imported_fields(row)
            for row in db.execute("SELECT * FROM imported WHERE run_id = ? ORDER BY first_seq", (run_id,))
        ],
    }


def dump(store, run_id: int) -> dict:
    """The run as one document's fields (version 1: json-able, rows in their stored order, each
    point's record whole); a large run leaves as a stream (bundle_stream.py)."""
    head = dump_head(store, run_id)
    points = []
    for launch, record, samples, kept_apart in store.db.execute(
        "SELECT launch, record, samples, windows FROM points WHERE run_id = ?"
        " ORDER BY seq, launch IS NOT NULL, launch, id",
        (run_id,),
    ):
        row = {"record": windows.joined(json.loads(record), kept_apart), "launch": launch}
        if samples is not None:
            row["samples"] = samples  # the stored float64 array as it is
        points.append(row)
    rest = other_rows(store, run_id)
    doc = {
        "format": FORMAT,
        "version": 1,
        "scope": head["scope"],
        "run": head["run"],
        "context": head["context"],
        "tests": head["tests"],
        "points": points,
        "events": rest["event"],
        "pairs": rest["pairs"],
        "imported": rest["imported"],
    }
    return leaving(doc, head["private"])


def leaving(doc: dict, private: list[str] | tuple = (), secret: tuple[str, ...] = ()) -> dict:
    """A bundle's fields as they may leave this machine (secrets.py): no credential anywhere (a
    store written before the rule, or a run pushed by an older scope, may hold one), and each of
    the run's private folders `<private>`.  The many point records are walked only when one of
    those values is in them.  `secret`: more values to redact (the token a push is sent with)."""
    scrub = secrets.Scrubber(secrets.known() + secret, private)
    doc = dict(doc)
    doc["run"] = scrub.walk(doc["run"])
    if doc.get("context") is not None:
        doc["context"] = secrets.context(doc["context"], scrub)
    for key in ("tests", "events"):
        doc[key] = scrub.walk(doc.get(key) or [])
    for key in ("points", "pairs", "imported"):  # engine records and columns: walked if need be
        rows = doc.get(key) or []
        if rows and scrub.holds(msgspec.json.encode(rows)):
            doc[key] = [dict(r, record=scrub.walk(r["record"])) if "record" in r else scrub.walk(r) for r in rows]
    return doc


def scrubbed(b: Bundle, secret: tuple[str, ...] = ()) -> bytes:
    """A read bundle's JSON again under secrets.py's rule (a push or a hub's row written by an
    older scope): its private folders from its own run and context, `secret` redacted too."""
    doc = msgspec.to_builtins(b, builtin_types=(bytes,))
    private = secrets.private_paths(doc["run"], doc.get("context"))
    return msgspec.json.encode(leaving(doc, private, secret))


def _pairs_record(row, npoints: int) -> dict:
    cols = {c: list(blob_array("q", row[c])) if c in INTS else blob_samples(row[c]) for c in PAIR_COLUMNS}
    rec = {"type": "pairs", "test": row["test"], "index": row["seq"], "points": max(npoints, row["seq"] + 1)}
    rec.update(params=json.loads(row["params"]), step=row["step"], steps=row["steps"], mode=row["mode"])
    rec.update({c: v if c in INTS else [_finite(x) for x in v] for c, v in cols.items()})
    return rec


def _imported_fields(row) -> dict:
    extra = None
    if row["extra"]:
        try:
            cols = json.loads(row["extra"])
            extra = {k: f64([np.nan if v is None else v for v in vals]) for k, vals in cols.items()}
        except (ValueError, TypeError, AttributeError):
            extra = None  # a damaged column is left out, as the views leave it out
    keep = ("first_seq", "test", "measures", "credit", "statistic", "sizes", "times", "counts")
    return {**{k: row[k] for k in keep}, "extra": extra}


def f64(values) -> bytes:
    return np.asarray(values, dtype="<f8").tobytes()


def encode(doc: dict) -> bytes:
    """A bundle as the bytes that travel: gzip'd JSON, the same bytes for the same run (mtime 0)."""
    return gz.compress(msgspec.json.encode(doc))


def is_bundle(path) -> bool:
    """Whether a file to import is a bundle: gzip data, or JSON that says it is one.  Only a
    regular file is opened (a FIFO would block the open; the import refuses it, saying why)."""
    if not os.path.isfile(path):
        return False
    try:
        with open(path, "rb") as f:
            head = f.read(64)
    except OSError:
        return False  # said where the import opens it
    return head[:2] == b"\x1f\x8b" or (head.lstrip()[:1] == b"{" and FORMAT.encode() in head)


def inflate(data: bytes, limit: int = LIMIT, grew=None) -> bytes:
    """The JSON of a bundle that may be gzip'd, read at most `limit` bytes far (a gzip bomb is
    refused when it passes the limit, not after it filled the memory); `grew(size)` is told how
    far it has come after each MiB (the hub holds a large inflation to one at a time)."""
    if data[:2] != b"\x1f\x8b":
        if len(data) > limit:
            raise ScopeError(f"the bundle is over {limit >> 20} MiB", HINT, USAGE)
        return data
    out = io.BytesIO()
    try:
        with gz.reader(io.BytesIO(data)) as f:
            while chunk := f.read(1 << 20):
                out.write(chunk)
                if grew is not None:
                    grew(out.tell())
                if out.tell() > limit:
                    raise ScopeError(f"the bundle is over {limit >> 20} MiB once decompressed", HINT, USAGE)
    except gz.ERRORS as e:
        raise ScopeError(f"the bundle is not whole gzip data ({e})", HINT, USAGE) from None
    return out.getbuffer()  # the buffer itself: a copy would double a large bundle's memory


def read(data: bytes, limit: int = LIMIT) -> Bundle:
    """A bundle from untrusted bytes, checked through: its fields (types, ranges, lengths), each
    record it carries against its own type, the nesting of every record, the imported columns."""
    return checked(data, limit)[0]


def checked(data: bytes, limit: int = LIMIT, grew=None) -> tuple[Bundle, str]:
    """read(), and the bundle's digest: SHA-256 of its JSON, what identifies a run's content
    wherever it is kept (scope writes a run's bundle the same each time: pushed twice, one digest)."""
    text = inflate(data, limit, grew)
    sha = hashlib.sha256(text).hexdigest()
    if bundle_lines.is_stream(text):
        return bundle_lines.as_bundle(text), sha
    try:
        bundle = msgspec.json.decode(text, type=Bundle)
    except msgspec.ValidationError as e:
        raise ScopeError(f"not a SCOPE run bundle: {e}", HINT, USAGE) from None
    except (msgspec.DecodeError, RecursionError, UnicodeError) as e:
        raise ScopeError(f"not a SCOPE run bundle: not whole UTF-8 JSON ({e})", HINT, USAGE) from None
    twice = repeated_key(text)
    if twice:
        raise ScopeError(f"not a SCOPE run bundle: an object names {twice!r} twice (which one is meant?)", HINT, USAGE)
    del text  # tens of MB for a large import, not kept while the bundle is checked and stored
    wrong = problem_of(bundle)
    if wrong:
        raise ScopeError(f"not a SCOPE run bundle: {wrong}", HINT, USAGE)
    return bundle, sha


def load(store, b: Bundle, run_id: int | None = None) -> int:
    """A checked bundle stored as a run, in one transaction (all of it or nothing): the run's id,
    `run_id` where given (a hub's report says the hub's id throughout, not its scratch store's)."""
    db = store.db
    scrub = secrets.scrubber()  # a bundle of an older scope may carry a credential (secrets.py)
    try:
        with db:  # one transaction: committed whole, or rolled back whole
            rid = insert_run(db, b.run, b.context, b.tests, run_id)
            for kind, rows in (("point", b.points), ("event", b.events), ("pairs", b.pairs), ("imported", b.imported)):
                insert_rows(db, kind, (stored_row(rid, r, kind, scrub) for r in rows))
    except (sqlite3.Error, OSError) as e:  # the database's fault (read-only, full, locked): as every store write's
        raise failure(store.path, e) from None
    return rid


def insert_run(db: sqlite3.Connection, columns, context: dict | None, tests: list, run_id: int | None = None) -> int:
    """A bundle's run and its test descriptors stored (inside the caller's transaction)."""
    run = msgspec.structs.asdict(columns)
    if run_id is not None:
        run["id"] = run_id
    scrub = secrets.scrubber()
    run["command"] = json.dumps(scrub.argv(run["command"]))
    run["reason"] = run["reason"] and scrub.text(run["reason"])
    ctx = secrets.context(context, scrub) if context is not None else None
    if ctx is not None:
        run.update(
            context=json.dumps(ctx),
            mpi_library=(ctx.get("mpi") or {}).get("library"),
            engine_version=(ctx.get("engine") or {}).get("version"),
            record_schema=ctx.get("schema"),
            timer=(ctx.get("timer") or {}).get("selected"),
            oversubscribed=int(bool(ctx.get("oversubscribed"))),
            hosts=json.dumps(sorted({str(p.get("host")) for p in ctx.get("placement", []) if isinstance(p, dict)})),
        )
    cols = list(run)
    cur = db.execute(
        f"INSERT INTO runs ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})", [run[c] for c in cols]
    )
    db.executemany(
        "INSERT OR IGNORE INTO tests (name, descriptor) VALUES (?, ?)", [(t["name"], json.dumps(t)) for t in tests]
    )
    return int(cur.lastrowid)


INSERTS = {"point": INSERT_POINT, "event": INSERT_EVENT, "pairs": INSERT_PAIRS, "imported": INSERT_IMPORTED}


def stored_row(rid: int, row, kind: str, scrub, record_text: bytes | None = None):
    """A checked bundle row as its table's row (`record_text`: a point's record as msgspec
    writes it, where the reading wrote it already); a row the checks let by and SQL would not
    take is refused, saying so (the caller's transaction stores nothing)."""
    try:
        if kind == "point":
            return _point_row(rid, row, record_text)
        if kind == "event":
            return event_row(rid, secrets.record(row.record, scrub))
        if kind == "pairs":
            return pairs_row(rid, row.record, row.launch)
        return _imported_row(rid, row)
    except (KeyError, TypeError, ValueError, OverflowError) as e:
        raise ScopeError(
            f"the bundle could not be stored ({type(e).__name__}: {e}); nothing was stored", HINT
        ) from None


def insert_rows(db: sqlite3.Connection, kind: str, rows) -> None:
    db.executemany(INSERTS[kind], rows)


SAMPLES = POINT_COLUMNS.index("samples")
WINDOWS = POINT_COLUMNS.index("windows")


def _point_row(rid: int, p, record_text: bytes | None = None) -> list:
    row = point_row(rid, p.record, p.launch, record_text)
    row[SAMPLES] = p.samples  # the float64 array as it came (checked), as the store keeps it
    if p.windows is not None:  # version 2: the per-rank windows beside the record (checked)
        row[WINDOWS] = p.windows
    return row


def _imported_row(rid: int, row: ImportedRow) -> tuple:
    extra = None
    if row.extra:
        extra = json.dumps(
            {k: [None if v != v else v for v in np.frombuffer(b, dtype="<f8").tolist()] for k, b in row.extra.items()}
        )
    n = len(row.sizes) // 8
    return (rid, row.first_seq, row.test, n, row.measures, row.credit, row.statistic, row.sizes, row.times,
            row.counts, extra)  # fmt: skip
