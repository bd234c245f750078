"""A program's events files (engine/clock/clock_events.c: PREFIX.RANK.jsonl, one a rank) read
as one timeline, every line checked against its declaration (records/events.py) and the files
against each other: one program's ranks, each once, on one clock (issue 57)."""

from __future__ import annotations

import glob
import re
from array import array
from pathlib import Path
from typing import Union

import msgspec

from scope.errors import USAGE, ScopeError
from scope.model import RankEvents
from scope.records.events import Event, EventsHeader
from scope.store.importers import MAX_IMPORT_BYTES, importable

HINT = "import the PREFIX the program gave scope_clock_events_open (its files are PREFIX.RANK.jsonl)"
RANK_FILE = re.compile(r"(?P<prefix>.+)\.(?P<rank>0|[1-9][0-9]{0,7})\.jsonl")
_line = msgspec.json.Decoder(Union[EventsHeader, Event])
_events = msgspec.json.Decoder(list[Event])


def prefix_of(path: str) -> str | None:
    """The events prefix `path` names (the prefix itself, or one of its rank files), or None
    when it names no events files."""
    m = RANK_FILE.fullmatch(path)
    if m and Path(path).is_file() and _starts_events(Path(path)):
        return m["prefix"]
    if not Path(path).exists() and Path(f"{path}.0.jsonl").is_file():
        return path
    return None


def _starts_events(p: Path) -> bool:
    try:
        with p.open("rb") as f:
            return f.read(40).replace(b" ", b"").startswith(b'{"type":"events"')
    except OSError:
        return False


def rank_files(prefix: str) -> dict[int, Path]:
    folder = Path(prefix).parent
    stem = Path(prefix).name
    out = {}
    for f in folder.glob(f"{glob.escape(stem)}.*.jsonl"):
        m = RANK_FILE.fullmatch(f.name)
        if m and m["prefix"] == stem:
            out[int(m["rank"])] = f
    return out


def read_rank(f: Path) -> RankEvents:
    """One rank's file: its header, then its events (decoded together; a bad line is found and
    named only when the whole fails)."""
    lines = f.read_bytes().splitlines()
    if not lines:
        raise ScopeError(f"{f} is empty", HINT, USAGE)
    header = _decoded(f, 1, lines[0])
    if not isinstance(header, EventsHeader):
        raise ScopeError(f"{f}:1: the first line is not an `events` header", HINT, USAGE)
    body = [ln for ln in lines[1:] if ln.strip()]
    try:
        events = _events.decode(b"[" + b",".join(body) + b"]")
    except (msgspec.DecodeError, RecursionError):  # found and named line by line
        for i, ln in enumerate(lines[1:], start=2):
            if ln.strip() and not isinstance(_decoded(f, i, ln), Event):
                raise ScopeError(f"{f}:{i}: a second `events` header", HINT, USAGE) from None
        raise ScopeError(f"{f}: its events are not one JSON line each", HINT, USAGE) from None
    index: dict[str, int] = {}
    name_of = array("q", (index.setdefault(e.name, len(index)) for e in events))
    return RankEvents(
        header=header,
        names=list(index),
        name_of=name_of,
        t_ns=array("d", (e.t_ns for e in events)),
        bound_ns=array("d", (e.bound_ns for e in events)),
        ticks=array("q", (e.ticks for e in events)),
    )


def _decoded(f: Path, i: int, line: bytes):
    try:
        return _line.decode(line)
    except msgspec.DecodeError as e:
        raise ScopeError(f"{f}:{i}: not an events record: {str(e)[:160]}", HINT, USAGE) from None
    except RecursionError:  # nested past any depth a record has
        raise ScopeError(f"{f}:{i}: not an events record: nested too deep", HINT, USAGE) from None


def read_events(path: str) -> tuple[list[RankEvents], str]:
    """The ranks' events of the program whose files `path` names, in rank order, and their
    prefix; each file checked, and the files against each other."""
    prefix = prefix_of(path)
    if prefix is None:
        raise ScopeError(f"{path} names no events files", HINT, USAGE)
    files = rank_files(prefix)
    total = sum(importable(f, HINT).st_size for f in files.values())
    if total > MAX_IMPORT_BYTES:
        raise ScopeError(
            f"{prefix}.*.jsonl hold {total / 1e9:.1f} GB: imports are at most {MAX_IMPORT_BYTES / 1e9:g} GB",
            "stamp fewer events, or import a shorter part",
            USAGE,
        )
    ranks = []
    for r in sorted(files):
        ranks.append(read_rank(files[r]))
        if ranks[-1].header.rank != r:
            raise ScopeError(f"{files[r]}: its header says rank {ranks[-1].header.rank}, not {r}", HINT, USAGE)
    size = ranks[0].header.size
    one_clock = {(x.header.size, x.header.timer, x.header.method, x.header.truth_known) for x in ranks}
    if len(one_clock) != 1:
        raise ScopeError(
            f"{prefix}.*.jsonl are not of one program's run: their ranks, timers or methods differ",
            "import each program's events by the prefix it wrote them under",
            USAGE,
        )
    missing = sorted(set(range(size)) - set(files))  # a file past the size fails one_clock or its header
    if missing:
        shown = ",".join(map(str, missing[:8])) + (" ..." if len(missing) > 8 else "")
        raise ScopeError(
            f"{len(missing)} of {size} ranks' events files are missing ({prefix}.RANK.jsonl for rank {shown})",
            "copy every rank's file beside the others (each rank writes its own)",
            USAGE,
        )
    return ranks, prefix
