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
# OMB 7.4's title lines (its sources' BENCHMARK strings, "OSU MPI" and the accelerator taken
# off, lower case) -> the program that prints them; how its main column reads; bytes an
# operation moves, in message sizes.  A program no SCOPE test names as its peer (descriptor
# role `peer:<program>`) is refused on import, never filed under a test it is not.
OMB = {
    "latency test": ("osu_latency", "latency"),
    "bandwidth test": ("osu_bw", "bandwidth"),
    "bi-directional bandwidth test": ("osu_bibw", "bandwidth"),
    "multiple bandwidth / message rate test": ("osu_mbw_mr", "bandwidth"),
    "multi latency test": ("osu_multi_lat", "latency"),
    "multi-process latency test": ("osu_latency_mp", "latency"),
    "multi-threaded latency test": ("osu_latency_mt", "latency"),
    "latency persistent test": ("osu_latency_persistent", "latency"),
    "bandwidth persistent test": ("osu_bw_persistent", "bandwidth"),
    "bi-directional bandwidth persistent test": ("osu_bibw_persistent", "bandwidth"),
    "all-to-all personalized exchange latency test": ("osu_alltoall", "latency"),
    "all-to-allv personalized exchange latency test": ("osu_alltoallv", "latency"),
    "all-to-allw personalized exchange latency test": ("osu_alltoallw", "latency"),
    "hello world test": ("osu_hello", None),
    "init test": ("osu_init", None),
    "put latency test": ("osu_put_latency", "latency"),
    "get latency test": ("osu_get_latency", "latency"),
    "accumulate latency test": ("osu_acc_latency", "latency"),
    "get_accumulate latency test": ("osu_get_acc_latency", "latency"),
    "compare_and_swap latency test": ("osu_cas_latency", "latency"),
    "fetch_and_op latency test": ("osu_fop_latency", "latency"),
    "put bandwidth test": ("osu_put_bw", "bandwidth"),
    "put bi-directional bandwidth test": ("osu_put_bibw", "bandwidth"),
    "get bandwidth test": ("osu_get_bw", "bandwidth"),
    "get multi latency test": ("osu_get_multi_lat", "latency"),
    "get multiple bandwidth bandwidth test": ("osu_get_mbw", "bandwidth"),
}
for _coll, _prog in {
    "allgather": "allgather", "allgatherv": "allgatherv", "allreduce": "allreduce", "barrier": "barrier",
    "broadcast": "bcast", "gather": "gather", "gatherv": "gatherv", "reduce": "reduce",
    "reduce_scatter": "reduce_scatter", "reduce_scatter_block": "reduce_scatter_block", "scatter": "scatter",
    "scatterv": "scatterv",
}.items():  # fmt: skip
    OMB[f"{_coll} latency test"] = (f"osu_{_prog}", "latency")
    OMB[f"{_coll} persistent latency test"] = (f"osu_{_prog}_persistent", "latency")
    OMB[f"non-blocking {_coll} latency test"] = (f"osu_i{_prog}", "latency")
OMB["non-blocking all-to-all latency test"] = ("osu_ialltoall", "latency")
for _nb in ("allgather", "allgatherv", "alltoall", "alltoallv", "alltoallw"):
    OMB[f"neighborhood {_nb} latency test"] = (f"osu_neighbor_{_nb}", "latency")
    OMB[f"non-blocking neighborhood {_nb} latency test"] = (f"osu_ineighbor_{_nb}", "latency")
OMB_CREDIT = {"osu_bibw": 2, "osu_bibw_persistent": 2, "osu_put_bibw": 2}
ACCELERATORS = ("cuda", "rocm", "openacc", "sycl", "ze")
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
    extra: dict[str, array] = field(default_factory=dict)  # the peer's other columns, by name

    def add(self, size: int, time_us: float, count: int | None = None, extra: dict | None = None) -> None:
        self.sizes.append(size)
        self.times.append(time_us)
        if count is not None:
            self.counts = self.counts if self.counts is not None else array("q")
            self.counts.append(count)
        for k, v in (extra or {}).items():
            self.extra.setdefault(k, array("d", [float("nan")] * (len(self.sizes) - 1))).append(v)

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


def omb_title(text: str) -> tuple[str, str, str | None]:
    """(OMB program, main column's kind, accelerator or None) from its output's title line."""
    title = next((ln for ln in text.splitlines() if ln.startswith("# OSU")), None)
    if not title:
        raise ValueError("no '# OSU ...' title line: not OSU Micro-Benchmarks output")
    low = re.sub(r"\s+v\d+(\.\d+)*\s*$", "", title[1:].strip().lower())
    accel = next((a for a in ACCELERATORS if f"-{a}" in low), None)
    low = re.sub(r"-(" + "|".join(ACCELERATORS) + r")\b", "", low)
    key = re.sub(r"^osu mpi[ _]?", "", low).strip()
    if key not in OMB:
        raise ValueError(f"'{title.strip()}' is no OMB 7.4 benchmark SCOPE knows")
    return (*OMB[key], accel)


def parse_osu(text: str) -> Imported:
    """OMB output: its title names the program, its header its columns; every column is kept
    (OMB's -f adds min, max and iterations; osu_mbw_mr prints messages per second)."""
    out = Imported("osu")
    program, kind, accel = omb_title(text)
    on_device = accel or re.search(r"buffer on (device|managed)", text, re.I)
    if on_device:
        raise ValueError(
            f"{program} ran with buffers on an accelerator ({accel or 'device'}): SCOPE measures host memory, "
            "so it has no test with this definition"
        )
    if kind is None:
        raise ValueError(f"{program} measures no time per size: nothing to import")
    header = next((ln for ln in text.splitlines() if ln.lstrip("#").strip().lower().startswith("size")), None)
    if header is None:
        raise ValueError("no '# Size ...' header line")
    columns = _omb_columns(header)
    credit = OMB_CREDIT.get(program, 1)
    one_sided = program.split("_")[1] in ("put", "get", "acc", "cas", "fop")
    what = "time per message from the bandwidth" if kind == "bandwidth" else "time"
    measures = f"{'one-sided ' if one_sided else ''}{what} as {program} reports it"
    col = Column(measures, credit, "mean (OMB: each rank's mean over its iterations, averaged over ranks)")
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
        value = _value(parts[1], lineno, kind if kind == "bandwidth" else "time")
        if kind == "bandwidth":
            if size == 0:
                continue  # no bytes, no time: a bandwidth at 0 B says nothing
            time_us = size * credit / value  # OMB's MB/s = 10^6 bytes/s; time per message = bytes / (bytes/us)
        else:
            time_us = value
        extra = {}
        for name, cell in zip(columns[1:], parts[2:]):
            try:
                extra[name] = float(cell)
            except ValueError:
                continue
        col.add(size, time_us, extra=extra)
    if not col:
        raise ValueError("no data lines")
    out.tests[program] = col
    return out


def _omb_columns(header: str) -> list[str]:
    """Names for OMB's columns after the size: Latency(us), Min Latency(us), Max Latency(us),
    Iterations, MB/s, Messages/s ... as short keys (latency_us, min_us, max_us, iterations,
    MBps, messages_per_s)."""
    body = header.lstrip("#").strip()
    cells = re.split(r"\s{2,}|\t", body)[1:]  # after Size
    out = []
    for c in cells:
        low = c.lower()
        key = (
            "min_us" if low.startswith("min")
            else "max_us" if low.startswith("max")
            else "iterations" if low.startswith("iter")
            else "messages_per_s" if "messages" in low
            else "MBps" if "mb/s" in low
            else "p50_us" if "p50" in low
            else "p90_us" if "p90" in low
            else "p99_us" if "p99" in low
            else re.sub(r"[^a-z0-9]+", "_", low).strip("_")
        )  # fmt: skip
        out.append(key)
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
            size, reps, t = int(parts[0]), int(parts[1]), _value(parts[ti], k, f"{name} {col}")
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
