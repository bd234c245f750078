"""Importing older measurements: OSU Micro-Benchmarks and Intel MPI Benchmarks text output,
and plain CSV of (size, time).  Each becomes a run marked with its origin.  These tools
report one average per size, so an imported point carries that value (as both its median
and mean, with `imported.statistic` saying what it really is) and no samples: fits work on
it, significance tests say "insufficient data".  Rows are kept by columns (Column), so a
million of them import in seconds and store in about the CSV's own size."""

from __future__ import annotations

import csv
import io
import os
import re
import stat
from pathlib import Path

from scope.catalog.osu import peer_names  # noqa: F401  (re-exported: importcmd names peers by it)
from scope.errors import USAGE, ScopeError
from scope.store.columns import Column, Imported, numeric, size_of, value_of
from scope.store.longcsv import FORM as LONG_FORM
from scope.store.longcsv import LongRun, is_long, parse_long
from scope.store.omb import parse_osu
from scope.store.reframe import Job, is_perflog, parse_perflog

# Points are named after the peer's benchmark (osu_latency, imb_PingPong); load() renames them
# to the SCOPE test whose descriptor has the role `peer:<that name>`, the engine's word for
# "measures the same thing".  A benchmark no SCOPE test matches is refused (_named).
IMB_CREDIT = {"exchange": 4, "sendrecv": 2}  # bytes moved per reported time, in message sizes


# A file beyond this is refused, not read (a CSV is streamed; OSU and IMB output is read whole).
MAX_IMPORT_BYTES = 2_000_000_000


def parse_imb(text: str) -> Imported:
    out = Imported("imb")
    blocks = re.split(r"#-+\s*\n# Benchmarking ", text)
    if len(blocks) < 2:
        raise ValueError("no '# Benchmarking ...' section: not Intel MPI Benchmarks output")
    for block in blocks[1:]:
        lines = block.splitlines()
        name = lines[0].strip()
        m = re.search(r"#processes = (\d+)", block)
        if m:
            out.ranks = int(m.group(1))
        header = next((ln for ln in lines if "#bytes" in ln or "#repetitions" in ln), None)
        if header is None:
            out.skipped.append(f"{name}: no data")
            continue
        cols = header.split()
        if "#bytes" not in cols:  # Barrier: no message, a row of repetitions and times (size 0)
            cols = ["#bytes", *cols]
            lines = [ln if ln is header or not ln.split() or not ln.split()[0].isdigit() else "0 " + ln for ln in lines]
        col = next((c for c in ("t_avg[usec]", "t[usec]") if c in cols), None)
        if col is None:
            out.skipped.append(f"{name}: no time column")
            continue
        ti = cols.index(col)
        test = f"imb_{name}"
        credit = IMB_CREDIT.get(name.lower(), 1)
        statistic = "mean" if col == "t[usec]" else "mean over ranks (t_avg)"
        pts = out.tests.setdefault(test, Column(f"{col} as reported by IMB {name}", credit, statistic))
        start = lines.index(header) + 1
        for k, ln in enumerate(lines[start:], start + 1):
            parts = ln.split()
            if not parts or not parts[0].isdigit():
                if pts and (not parts or parts[0].startswith("#")):
                    break
                continue
            where = f"{name}, line {k} of its section"
            if len(parts) <= ti or not parts[1].isdigit():
                raise ValueError(f"{where}: the row is cut short (no {col})")
            size, t = size_of(parts, k, "#bytes #repetitions ..."), value_of(parts[ti], k, f"{name} {col}")
            reps = int(parts[1]) if parts[1].isascii() and len(parts[1]) < 19 else -1
            if reps < 0:
                raise ValueError(f"{where}: #repetitions {parts[1][:30]} is not a count")
            extra = {}
            for j, cell in enumerate(parts[2:], 2):  # every other column IMB printed, kept
                if j != ti and j < len(cols):
                    try:
                        extra[_imb_key(cols[j])] = float(cell)
                    except ValueError:
                        pass
            pts.add(size, t, reps, extra)
    if not out.tests:
        raise ValueError("no benchmark with a time column")
    return out


def _imb_key(column: str) -> str:
    """IMB's column names as keys: t_min[usec] -> t_min_us, Mbytes/sec -> MBps (IMB's Mbytes
    are 2^20 bytes: the value is kept as IMB printed it, the key says whose unit it is)."""
    low = column.lower()
    if low.startswith("mbytes"):
        return "imb_mbytes_per_s"
    return re.sub(r"\[usec\]", "_us", low).replace("[", "_").replace("]", "")


def parse_csv(text, test: str = "csv.import") -> Imported:
    """`text`: the file's text, or its lines as they are read (a file: streamed, so memory
    holds the columns, not the file)."""
    out = Imported("csv")
    reader = csv.reader(io.StringIO(text) if isinstance(text, str) else text)
    pts = Column("time as given in the CSV", 1, "as given")
    first = True
    for r in _rows(reader):
        if not r or r[0].lstrip().startswith("#"):
            continue
        if first and not numeric(r[0]):
            first = False
            continue  # a header
        first = False
        n = reader.line_num
        size = size_of(r, n, "size,time_us")
        t = value_of(r[1], n, "time")
        pts.add(size, t)
    if not pts:
        raise ValueError("no rows")
    out.tests[test] = pts
    return out


def _rows(reader):
    """The CSV reader's rows; its own errors (a field past 131,072 characters, a NUL) as the
    ValueError naming the line that every bad row gives (issue 44: exit 70)."""
    while True:
        try:
            yield next(reader)
        except StopIteration:
            return
        except csv.Error as e:
            raise ValueError(f"line {reader.line_num}: {e}") from None


def detect(text: str) -> str:
    if "# OSU" in text:
        return "osu"
    if "# Benchmarking" in text or "Intel(R) MPI Benchmarks" in text:
        return "imb"
    return "csv"


HEAD_BYTES = 1 << 16  # enough of a file to tell OSU, IMB and CSV apart
PROGRESS_BYTES = 1 << 23  # files beyond this (8 MiB) report their progress


def importable(path: Path, hint: str) -> os.stat_result:
    """A file an import may open, checked before it is opened (a file to import here, a saved
    stream's launch file in run/recorder.py): a regular file, at most MAX_IMPORT_BYTES.  A
    device (/dev/zero) would fill the memory, a pipe would wait for ever."""
    try:
        st = path.stat()
    except OSError as e:
        raise ScopeError(f"cannot read {path}: {e.strerror}", "check the path", USAGE) from None
    if not stat.S_ISREG(st.st_mode):
        raise ScopeError(f"{path} is not a regular file (a device, a pipe or a directory)", hint, USAGE)
    if st.st_size > MAX_IMPORT_BYTES:
        raise ScopeError(
            f"{path} is {st.st_size / 1e9:.1f} GB: imports are at most {MAX_IMPORT_BYTES / 1e9:g} GB",
            "split the file",
            USAGE,
        )
    return st


def load(path: str, fmt: str = "auto", test: str | None = None, peers=None, progress=None) -> tuple[Imported, str]:
    """Parse a file; `peers()` (from peer_names) names the SCOPE test of each peer benchmark,
    asked only for the formats of peer tools.  A CSV is streamed line by line (memory holds
    its columns, 16 bytes a row); OSU and IMB output, a page of text, is read whole.
    `progress(done_bytes, total_bytes)` is called as a large file is read."""
    p = Path(path)
    st = importable(p, "import a file of OSU, IMB or CSV output")
    try:
        # utf-8-sig: a byte-order mark is no part of the first line (it cost a CSV its first row,
        # and an OMB file its title)
        with p.open(encoding="utf-8-sig", errors="replace", newline="") as f:
            head = f.read(HEAD_BYTES)
            fmt = detect(head) if fmt == "auto" else fmt
            if fmt == "csv":
                f.seek(0)
                data = _parsed(path, fmt, lambda: parse_csv(_reported(f, st.st_size, progress), test or "csv.import"))
                text = head
            else:
                text = head + f.read()
                data = _parsed(path, fmt, lambda: parse_osu(text) if fmt == "osu" else parse_imb(text))
    except OSError as e:
        raise ScopeError(f"cannot read {path}: {e.strerror}", "check the path", USAGE) from None
    if fmt != "csv":
        data.tests = _named(path, fmt, data, peers() if peers else {})
    if test and fmt != "csv":
        if len(data.tests) != 1:
            raise ScopeError(
                f"{path} holds {len(data.tests)} benchmarks ({', '.join(data.tests)}): --test would merge them",
                "import without --test; each benchmark keeps its own name",
                USAGE,
            )
        data.tests = {test: next(iter(data.tests.values()))}
    return data, text


def _first_line(path: str) -> str:
    """A file's first line that says something (not blank, no comment), or ''."""
    if not os.path.isfile(path):
        return ""
    try:
        with open(path, encoding="utf-8-sig", errors="replace", newline="") as f:
            head = f.read(HEAD_BYTES)
    except OSError:
        return ""  # said where the import opens it
    return next((ln for ln in head.splitlines() if ln.strip() and not ln.lstrip().startswith("#")), "")


def long_form(path: str, fmt: str) -> bool:
    """Whether a file to import is a site's history in one CSV (store/longcsv.py): CSV (or
    unsaid) whose first line names a run column."""
    return fmt in ("auto", "csv") and is_long(_first_line(path))


def perflog_form(path: str, fmt: str) -> bool:
    """Whether a file to import is a ReFrame performance log (store/reframe.py)."""
    return fmt in ("auto", "reframe") and is_perflog(_first_line(path))


def load_perflog(path: str) -> tuple[list[Job], list[str]]:
    """A ReFrame perflog's jobs, checked through before any is stored, and what was left out."""
    p = Path(path)
    importable(p, "import a ReFrame perflog (perflogs/SYSTEM/PARTITION/TEST.log)")
    try:
        with p.open(encoding="utf-8", errors="replace", newline="") as f:
            return parse_perflog(f)
    except OSError as e:
        raise ScopeError(f"cannot read {path}: {e.strerror}", "check the path", USAGE) from None
    except ValueError as e:
        hint = "give a perflog ReFrame 4 wrote with its default format"
        raise ScopeError(f"cannot import {path}: {e}; nothing was imported", hint, USAGE) from None


def load_long(path: str, test: str | None = None, progress=None) -> list[LongRun]:
    """A site's history in one CSV: its runs, checked through before any is stored."""
    p = Path(path)
    st = importable(p, "import a CSV of run,started_utc,launch,test,size,time_us")
    try:
        with p.open(encoding="utf-8-sig", errors="replace", newline="") as f:
            return parse_long(_reported(f, st.st_size, progress), test or "csv.import")
    except OSError as e:
        raise ScopeError(f"cannot read {path}: {e.strerror}", "check the path", USAGE) from None
    except ValueError as e:
        raise ScopeError(
            f"cannot import {path}: {e}; nothing was imported", f"its columns are {LONG_FORM}", USAGE
        ) from None


def _named(path: str, fmt: str, data: Imported, known: dict[str, str]) -> dict:
    """Each peer benchmark under the SCOPE test with its definition (the descriptors' `peer:`
    roles).  One that has none is refused, never filed under another test: the whole file
    when nothing in it has one (exit 2), else that benchmark, said in `skipped`."""
    named, refused = {}, []
    for peer, col in data.tests.items():
        test = known.get(peer.lower())
        if test is None:
            refused.append(peer)
        else:
            named[test] = col
    if not named:
        raise ScopeError(
            f"{path}: {', '.join(refused)} has no SCOPE test with its definition",
            "SCOPE refuses it rather than file it under another test; to keep the numbers under a name of "
            "your own, import them as CSV (size,time_us) with --test NAME",
            USAGE,
        )
    data.skipped += [f"{peer}: no SCOPE test with its definition" for peer in refused]
    return named


def _parsed(path: str, fmt: str, parse) -> Imported:
    try:
        return parse()
    except ValueError as e:
        raise ScopeError(
            f"cannot import {path} as {fmt.upper()}: {e}", "use --format osu|imb|csv; CSV rows are size,time_us", USAGE
        ) from None


def _reported(lines, total: int, progress):
    """The lines of a file, telling `progress` how far it is every 4 MiB or so."""
    if progress is None or total < PROGRESS_BYTES:
        yield from lines
        return
    done = step = 0
    for line in lines:
        done += len(line)
        step += len(line)
        if step >= 1 << 22:
            progress(done, total)
            step = 0
        yield line
    progress(total, total)
