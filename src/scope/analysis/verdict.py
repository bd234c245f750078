"""A comparison's answer in one sentence a test (issue 70): which side is faster, by how much
over the test's points in common, and where.  Computed once here from compare_runs' rows; the
terminal, the hub's page and the JSON only render it.

A test's figure is the geometric mean of B/A over its points (sizes, parameters): the mean of
the log ratios, its standard error from each point's own (sqrt(sum se_i^2) / n, the points'
errors independent), a normal 95 % interval.  It summarises; the rows say where the ratio
changes with size."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from scope.analysis.compare import VALUES_ONLY
from scope.sizes import format_size

Z95 = 1.959964


@dataclass(frozen=True)
class TestVerdict:
    test: str
    points: int
    ratio: float  # geometric mean of B/A over the points; > 1: B takes longer
    ci_lo: float  # NaN where no point has an interval (imports: one average a size)
    ci_hi: float
    slower: list  # the sizes where B was judged slower (None for a point without a size)
    faster: list
    same: int  # points judged "no change"
    sentence: str

    def as_dict(self) -> dict:
        return dict(self.__dict__)


def _sizes(sizes: list) -> str:
    known = sorted(s for s in sizes if s is not None)
    if not known:
        return ""
    lo, hi = known[0], known[-1]
    return f" at {format_size(lo)}" if lo == hi else f" from {format_size(lo)} to {format_size(hi)}"


def verdicts(rows: list[dict], a: str = "A", b: str = "B") -> list[TestVerdict]:
    """One answer a test, in the rows' test order; `a`, `b` name the sides (runs, clusters)."""
    tests: dict[str, list[dict]] = {}
    for r in rows:
        if r.get("ratio") == r.get("ratio") and r.get("ratio"):
            tests.setdefault(r["test"], []).append(r)
    out = []
    for test, rs in tests.items():
        logs = [math.log(r["ratio"]) for r in rs]
        mean = sum(logs) / len(logs)
        ses = [r.get("log_se", float("nan")) for r in rs]
        known = all(se == se for se in ses)
        se = math.sqrt(sum(x * x for x in ses)) / len(ses) if known else float("nan")
        ratio = math.exp(mean)
        lo, hi = (math.exp(mean - Z95 * se), math.exp(mean + Z95 * se)) if known else (float("nan"),) * 2
        verdict = [r["verdict"] for r in rs]  # a withheld one ("machine changed") is no claim
        slower = [r["size"] for r, v in zip(rs, verdict) if v == "slower"]
        faster = [r["size"] for r, v in zip(rs, verdict) if v == "faster"]
        same = sum(v == "no change" for v in verdict)
        v = TestVerdict(test, len(rs), ratio, lo, hi, slower, faster, same, "")
        out.append(replace(v, sentence=_sentence(v, a, b, all(x == VALUES_ONLY for x in verdict))))
    return out


def _sentence(v: TestVerdict, a: str, b: str, values_only: bool) -> str:
    """The verdict in words, the sides named `a` and `b`."""
    test, n, ratio, lo, hi, slower, faster, same = (
        v.test, v.points, v.ratio, v.ci_lo, v.ci_hi, v.slower, v.faster, v.same
    )  # fmt: skip
    if values_only:
        return (f"{test}: {b} takes {ratio:.2f}x {a}'s time (geometric mean over {n} points; values only, no "
                "verdict: an import carries one average a size, no launches to judge)")  # fmt: skip
    ci = f", 95 % CI {lo:.2f}-{hi:.2f}" if lo == lo else ", values only: no interval"
    mean = f"geometric mean of B/A over {n} point{'s' if n != 1 else ''} {ratio:.2f}{ci}"
    if slower and not faster:
        x = ratio if ratio >= 1 else float("nan")
        size = f"{x:.2f}x " if x == x else ""
        return f"{test}: {b} is {size}slower than {a}{_sizes(slower)} ({len(slower)} of {n} points; {mean})"
    if faster and not slower:
        x = 1 / ratio if ratio <= 1 else float("nan")
        size = f"{x:.2f}x " if x == x else ""
        return f"{test}: {b} is {size}faster than {a}{_sizes(faster)} ({len(faster)} of {n} points; {mean})"
    if slower and faster:
        return (f"{test}: {b} is slower than {a}{_sizes(slower)} ({len(slower)} points) and faster"
                f"{_sizes(faster)} ({len(faster)} points; {mean})")  # fmt: skip
    if same == n:
        return f"{test}: {a} and {b} are within the minimum effect at all {n} points ({mean})"
    return f"{test}: no difference shown ({same} of {n} points within the minimum effect, the rest undecided; {mean})"
