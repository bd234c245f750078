"""OSU Micro-Benchmarks 7.4 output: the title line names the program (every title OMB 7.4
prints is known), the header its columns; every column is kept."""

from __future__ import annotations

import re

from scope.catalog.osu import ACCELERATORS, NEIGHBOR_PREAMBLE, OMB, OMB_CREDIT
from scope.store.columns import Column, Imported, size_of, value_of


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
    if OMB[key][0] == "osu_alltoallw" and NEIGHBOR_PREAMBLE in text:
        return ("osu_neighbor_alltoallw", "latency", accel)
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
    lines = text.splitlines()
    first = next(i for i, ln in enumerate(lines) if ln.lstrip("#").strip().lower().startswith("size")) + 1
    for lineno, ln in enumerate(lines[first:], first + 1):  # what precedes the header is OMB's preamble
        s = ln.strip()
        if not s or s.startswith("#"):
            continue
        parts = s.split()
        size = size_of(parts, lineno, "SIZE VALUE")
        value = value_of(parts[1], lineno, kind if kind == "bandwidth" else "time")
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
