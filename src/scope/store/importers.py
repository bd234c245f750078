"""Importing older measurements: OSU Micro-Benchmarks and Intel MPI Benchmarks text output,
and plain CSV of (size, time).  Each becomes a run marked with its origin.  These tools
report one average per size, so an imported point carries that value (as both its median
and mean, with `imported.statistic` saying what it really is) and no samples: fits work on
it, significance tests say "insufficient data".  Rows are kept by columns (Column), so a
million of them import in seconds and store in about the CSV's own size."""

from __future__ import annotations

import csv
import io
import re
import stat
from array import array
from dataclasses import dataclass, field
from pathlib import Path

from scope.errors import USAGE, ScopeError

# Points are named after the peer's benchmark (osu_latency, imb_PingPong); load() renames them
# to the SCOPE test whose descriptor has the role `peer:<that name>`, the engine's word for
# "measures the same thing".  A benchmark no SCOPE test matches keeps a name of its own.
OSU_KINDS = {  # title words -> (peer benchmark, what the number is, bytes credited per op)
    "latency": ("osu_latency", "one-way latency (RTT/2)", 1),
    "bi-directional bandwidth": ("osu_bibw", "time per message slot, both directions", 2),
    "bandwidth": ("osu_bw", "time per message in a stream", 1),
}
IMB_CREDIT = {"exchange": 4, "sendrecv": 2}  # bytes moved per reported time, in message sizes


# Imports are read whole (a million CSV rows are 20 MB): a file beyond this is refused, not read.
MAX_IMPORT_BYTES = 2_000_000_000

# A time beyond this (about 11.6 days) is not a measurement of one message.
MAX_TIME_US = 1e12


def _value(text: str, lineno: int, what: str) -> float:
    """A finite, positive number from a data line, or ValueError naming the line."""
    try:
        v = float(text)
    except ValueError:
        raise ValueError(f"line {lineno}: {what} is not a number") from None
    if not (0 < v < MAX_TIME_US):
        raise ValueError(f"line {lineno}: {what} {text} is not a positive, finite measurement")
    return v


def _numeric(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def peer_names(infos) -> dict[str, str]:
    """{peer benchmark, lower case: SCOPE test} from the descriptors' `peer:` roles."""
    return {r.split(":", 1)[1].lower(): t.name for t in infos for r in t.roles if r.startswith("peer:")}


def _fallback(peer: str) -> str:
    tool, _, name = peer.partition("_")
    return f"{tool}.{name.lower()}"


@dataclass
class Column:
    """One imported benchmark, stored by columns (a million rows cost 16 bytes each, not a
    record each): what the number is and the bytes an operation moves (in message sizes) hold
    for every row; size, time and, where the tool gives it, the repetition count vary."""

    measures: str
    credit: int
    statistic: str
    sizes: array = field(default_factory=lambda: array("q"))  # typed: 8 bytes a row, not an object
    times: array = field(default_factory=lambda: array("d"))
    counts: array | None = None

    def add(self, size: int, time_us: float, count: int | None = None) -> None:
        self.sizes.append(size)
        self.times.append(time_us)
        if count is not None:
            self.counts = self.counts if self.counts is not None else array("q")
            self.counts.append(count)

    def __len__(self) -> int:
        return len(self.sizes)


@dataclass
class Imported:
    origin: str
    tests: dict[str, Column] = field(default_factory=dict)  # test -> its rows
    skipped: list[str] = field(default_factory=list)
    ranks: int | None = None

    @property
    def rows(self) -> int:
        return sum(len(c) for c in self.tests.values())


# OSU's one-sided operation names in program names (osu_fop_latency is MPI_Fetch_and_op's)
OSU_ONE_SIDED = {"accumulate": "acc", "get_accumulate": "get_acc", "fetch_and_op": "fop", "compare_and_swap": "cas"}


def parse_osu(text: str) -> Imported:
    out = Imported("osu")
    title = next((ln for ln in text.splitlines() if ln.startswith("# OSU")), None)
    if not title:
        raise ValueError("no '# OSU ...' title line: not OSU Micro-Benchmarks output")
    low = title.lower()
    kind = next((k for k in OSU_KINDS if k in low), None)
    header = next((ln for ln in text.splitlines() if ln.startswith("#") and "size" in ln.lower()), None)
    if kind is None or header is None:
        name = re.sub(r"[^a-z0-9]+", "_", low.replace("# osu mpi", "").replace("test", "")).strip("_")
        test, measures, credit = f"osu_{name}", "average time as reported by OSU", 1
    else:
        test, measures, credit = OSU_KINDS[kind]
        one_sided = re.search(r"mpi_(put|get_accumulate|get|accumulate|fetch_and_op|compare_and_swap)", low)
        if one_sided:  # osu_put_latency, osu_get_bw, osu_acc_latency ...: not the two-sided tests
            op = OSU_ONE_SIDED.get(one_sided.group(1), one_sided.group(1))
            suffix = {"osu_latency": "latency", "osu_bw": "bw", "osu_bibw": "bibw"}[test]
            test, measures = f"osu_{op}_{suffix}", f"one-sided {op} {measures} as reported by OSU"
    is_bw = header is not None and "MB/s" in header
    col = Column(measures, credit, "mean")
    for lineno, ln in enumerate(text.splitlines(), 1):
        s = ln.strip()
        if not s or s.startswith("#"):
            continue
        parts = s.split()
        try:
            size = int(parts[0])
            parts[1]
        except (ValueError, IndexError):
            raise ValueError(f"line {lineno}: expected 'SIZE VALUE'") from None
        if size < 0:
            raise ValueError(f"line {lineno}: negative size")
        value = _value(parts[1], lineno, "bandwidth" if is_bw else "time")
        if is_bw:
            # OSU reports MB/s = 10^6 bytes/s; time per message = bytes / (bytes/us)
            time_us = size * credit / value
            if size == 0:
                continue  # no bytes, no time: a bandwidth at 0 B says nothing
        else:
            time_us = value
        col.add(size, time_us)
    if not col:
        raise ValueError("no data lines")
    out.tests[test] = col
    return out


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
        header = next((ln for ln in lines if "#bytes" in ln), None)
        if header is None:
            out.skipped.append(f"{name}: no data")
            continue
        cols = header.split()
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
            size, reps, t = int(parts[0]), int(parts[1]), _value(parts[ti], k, f"{name} {col}")
            pts.add(size, t, reps)
    if not out.tests:
        raise ValueError("no benchmark with a time column")
    return out


def parse_csv(text, test: str = "csv.import") -> Imported:
    """`text`: the file's text, or its lines as they are read (a file: streamed, so memory
    holds the columns, not the file)."""
    out = Imported("csv")
    reader = csv.reader(io.StringIO(text) if isinstance(text, str) else text)
    pts = Column("time as given in the CSV", 1, "as given")
    first = True
    for r in reader:
        if not r or r[0].lstrip().startswith("#"):
            continue
        if first and not _numeric(r[0]):
            first = False
            continue  # a header
        first = False
        n = reader.line_num
        try:
            size = int(r[0])
            r[1]
        except (ValueError, IndexError):
            raise ValueError(f"line {n}: expected 'size,time_us'") from None
        if size < 0:
            raise ValueError(f"line {n}: negative size")
        t = _value(r[1], n, "time")
        pts.add(size, t)
    if not pts:
        raise ValueError("no rows")
    out.tests[test] = pts
    return out


def detect(text: str) -> str:
    if "# OSU" in text:
        return "osu"
    if "# Benchmarking" in text or "Intel(R) MPI Benchmarks" in text:
        return "imb"
    return "csv"


HEAD_BYTES = 1 << 16  # enough of a file to tell OSU, IMB and CSV apart
PROGRESS_BYTES = 1 << 23  # files beyond this (8 MiB) report their progress


def load(path: str, fmt: str = "auto", test: str | None = None, peers=None, progress=None) -> tuple[Imported, str]:
    """Parse a file; `peers()` (from peer_names) names the SCOPE test of each peer benchmark,
    asked only for the formats of peer tools.  A CSV is streamed line by line (memory holds
    its columns, 16 bytes a row); OSU and IMB output, a page of text, is read whole.
    `progress(done_bytes, total_bytes)` is called as a large file is read."""
    p = Path(path)
    try:
        st = p.stat()
        # checked before it is opened: a device (/dev/zero) would fill the memory, a pipe would
        # wait for ever
        if not stat.S_ISREG(st.st_mode):
            raise ScopeError(
                f"{path} is not a regular file (a device, a pipe or a directory)",
                "import a file of OSU, IMB or CSV output",
                USAGE,
            )
        if st.st_size > MAX_IMPORT_BYTES:
            raise ScopeError(
                f"{path} is {st.st_size / 1e9:.1f} GB: imports are at most {MAX_IMPORT_BYTES / 1e9:g} GB",
                "split the file",
                USAGE,
            )
        with p.open(errors="replace", newline="") as f:
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
        known = peers() if peers else {}
        data.tests = {known.get(peer.lower(), _fallback(peer)): col for peer, col in data.tests.items()}
    if test and fmt != "csv":
        if len(data.tests) != 1:
            raise ScopeError(
                f"{path} holds {len(data.tests)} benchmarks ({', '.join(data.tests)}): --test would merge them",
                "import without --test; each benchmark keeps its own name",
                USAGE,
            )
        data.tests = {test: next(iter(data.tests.values()))}
    return data, text


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
