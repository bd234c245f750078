"""ReFrame's performance logs (issue 68): a site's years of ReFrame runs as SCOPE runs, so their
histories have change points too.

ReFrame 4.x writes, by default, one file per test (`perflogs/SYSTEM/PARTITION/TEST.log`): a
header line naming `|`-separated fields, then a line per job with its result, the job's
completion time, its system, partition and environment, its job id, and for each performance
variable V the fields `V_value`, `V_unit`, `V_ref`, `V_lower_thres`, `V_upper_thres`.  Each job
that passed becomes one run (its label `SYSTEM:PARTITION ENVIRON job ID`, started at the job's
completion time), each of its variables measured in time (s, ms, us, ns) one imported test
`reframe.CHECK.VARIABLE` (in µs, size 0).  A variable in another unit (a rate, a count) is
named and left out: SCOPE's histories are of times, where up is slower."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime, timezone

from scope.store.columns import Column, Imported, value_of

HEADER = "result|job_completion_time|"
TIME_UNITS = {"s": 1e6, "ms": 1e3, "us": 1.0, "µs": 1.0, "ns": 1e-3}
WORD = re.compile(r"[^a-z0-9_]+")


def is_perflog(first_line: str) -> bool:
    return first_line.startswith(HEADER)


def _word(text: str) -> str:
    return WORD.sub("_", text.lower()).strip("_") or "x"


@dataclass
class Job:
    label: str
    started: str
    values: dict[str, float] = field(default_factory=dict)  # test -> µs

    def imported(self) -> Imported:
        out = Imported("reframe")
        for test, v in self.values.items():
            col = Column("a performance variable's value as ReFrame logged it, in µs", 1, "as given")
            col.add(0, v)
            out.tests[test] = col
        return out


def _utc(text: str, lineno: int) -> str:
    """A ReFrame time (ISO, with or without an offset; without one, taken as UTC) as SCOPE's."""
    try:
        when = datetime.fromisoformat(text.strip())
    except ValueError:
        raise ValueError(f"line {lineno}: job_completion_time {text[:30]!r} is no time") from None
    when = when.replace(tzinfo=timezone.utc) if when.tzinfo is None else when.astimezone(timezone.utc)
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_perflog(lines) -> tuple[list[Job], list[str]]:
    """The jobs of one perflog, in its order, and what was left out (said, not lost)."""
    header: list[str] | None = None
    jobs, skipped = [], set()
    for n, line in enumerate(lines, 1):
        line = line.rstrip("\r\n")
        if not line.strip():
            continue
        fields = line.split("|")
        if header is None:
            if not line.startswith(HEADER):
                raise ValueError(f"line {n}: not a ReFrame perflog header ({HEADER}...)")
            header = fields
            continue
        if fields == header:
            continue  # ReFrame writes its header again where the fields changed: the same one here
        if len(fields) != len(header):
            raise ValueError(f"line {n}: {len(fields)} fields where the header names {len(header)}")
        row = dict(zip(header, fields))
        if row["result"] != "pass":
            skipped.add(f"jobs that did not pass ({row['result']})")
            continue
        check = _word(row.get("name") or row.get("short_name") or "check")
        where = f"{row.get('system', '?')}:{row.get('partition', '?')}"
        job = Job(f"{where} {row.get('environ', '?')} job {row.get('jobid', '?')}", _utc(row["job_completion_time"], n))
        for key in header:
            if not key.endswith("_value"):
                continue
            var = key[: -len("_value")]
            unit = row.get(f"{var}_unit", "")
            if unit not in TIME_UNITS:
                skipped.add(f"{check}.{var} in {unit or 'no unit'} (not a time)")
                continue
            job.values[f"reframe.{check}.{_word(var)}"] = value_of(row[key], n, var) * TIME_UNITS[unit]
        if job.values:
            jobs.append(job)
    if header is None or not jobs:
        raise ValueError("no job that passed with a performance variable in time")
    return jobs, sorted(skipped)
