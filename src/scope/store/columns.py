"""What an import is made of: one benchmark's rows by columns (a million rows cost 16 bytes
each, not a record each), and the checks every data line goes through, in every format."""

from __future__ import annotations

from array import array
from dataclasses import dataclass, field

# A time beyond this (about 11.6 days) is not a measurement of one message, nor one below a
# femtosecond (1e-300 beside 1e300 overflowed the history's arithmetic: issue 69).
MAX_TIME_US = 1e12
MIN_TIME_US = 1e-9


MAX_SIZE = 1 << 62  # bytes: beyond any message, within SQLite's integers


def value_of(text: str, lineno: int, what: str) -> float:
    """A finite, positive number from a data line, or ValueError naming the line."""
    try:
        v = float(text)
    except ValueError:
        raise ValueError(f"line {lineno}: {what} is not a number") from None
    if not (MIN_TIME_US <= v < MAX_TIME_US):
        raise ValueError(
            f"line {lineno}: {what} {text} is not a positive, finite measurement (from 1e-9 to below 1e12)"
        )
    return v


def size_of(cells: list[str], lineno: int, form: str) -> int:
    """The size a data row begins with (a whole number of bytes, a value after it), or
    ValueError naming the line."""
    try:
        text = cells[0].strip()
        cells[1]
    except IndexError:
        raise ValueError(f"line {lineno}: expected '{form}'") from None
    if text.startswith("-") and text[1:].isascii() and text[1:].isdigit():
        raise ValueError(f"line {lineno}: negative size")
    # ASCII digits (int() takes '1_0' and other scripts' digits), and a size a message can have:
    # 10^23 ended in OverflowError storing it (issue 44)
    if not (text.isascii() and text.isdigit()):
        raise ValueError(f"line {lineno}: expected '{form}'")
    if len(text) > 19 or int(text) > MAX_SIZE:
        raise ValueError(f"line {lineno}: size {text[:30]} is beyond any message (at most 2^62 bytes)")
    return int(text)


def numeric(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


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
