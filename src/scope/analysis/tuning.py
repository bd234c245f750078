"""Collective algorithm tuning (MPIBench's thesis, 002 ch. 6): every algorithm the MPI offers,
forced one at a time and measured across sizes and process counts, then per (process count,
size) the algorithm to use and the switch points between them.

An algorithm replaces the library's default only where it is faster across launches: the
fastest algorithm's launch medians against the default's (Welch on their logarithms, as
`scope compare`), verdict "faster" (p < alpha and beyond the minimum effect).  Anywhere else the
library keeps its own choice, so the tuned file is never slower by design, only by noise.
Adjacent sizes with the same choice merge into ranges.  Pure functions: the runs are the
caller's."""

from __future__ import annotations

import re
from dataclasses import dataclass

from scope.analysis.compare import compare_launches, launch_medians
from scope.model import Point

DEFAULT = "auto"  # the library's own selection
_LINE = re.compile(r"^\s*([A-Za-z0-9_]+)\s+-\s")


def algorithms_from(description: str) -> list[str]:
    """The algorithm names MPICH lists in the description of MPIR_CVAR_<COLL>_INTRA_ALGORITHM
    (a line "name - what it does" each), the default's excepted."""
    names = [m.group(1) for ln in description.splitlines() if (m := _LINE.match(ln))]
    return [n for n in dict.fromkeys(names) if n != DEFAULT]


@dataclass
class Choice:
    procs: int
    size: int
    algorithm: str  # what to use: DEFAULT where nothing is significantly faster
    fastest: str  # the fastest measured, significant or not
    default_us: float  # geometric means of the launch medians: what the ratio divides
    fastest_us: float
    ratio: float  # fastest_us / default_us
    ci_lo: float
    ci_hi: float
    verdict: str
    ppn: int | None = None  # processes per node it was measured at (None: as launched, unstated)


def decide(
    points: dict[str, list[Point]], alpha: float = 0.05, min_effect: float = 0.02, ppn: int | None = None
) -> list[Choice]:
    """points: algorithm -> its points (one collective, one placement: `ppn` processes per
    node).  A choice per (procs, size) the default was measured at."""
    at: dict[tuple[int, int], dict[str, Point]] = {}
    for alg, pts in points.items():
        for p in pts:
            if p.median:  # an unsized collective (barrier) counts as size 0
                at.setdefault((p.procs, p.size or 0), {})[alg] = p
    out = []
    for (procs, size), algs in sorted(at.items()):
        ref = algs.get(DEFAULT)
        if not ref:
            continue
        fastest = min(algs, key=lambda a: algs[a].median)
        c = compare_launches(launch_medians(ref), launch_medians(algs[fastest]), alpha, min_effect)
        use = fastest if fastest != DEFAULT and c.verdict == "faster" else DEFAULT
        out.append(Choice(procs, size, use, fastest, c.center_a, c.center_b, c.ratio, c.ci_lo, c.ci_hi, c.verdict, ppn))
    return out


@dataclass
class Band:
    procs: int
    lo: int  # smallest size measured in the band, bytes
    hi: int  # largest
    algorithm: str
    ppn: int | None = None


def bands(choices: list[Choice]) -> list[Band]:
    """Adjacent sizes (per placement and process count) with the same choice, merged: the
    switch points."""
    out: list[Band] = []
    for c in sorted(choices, key=lambda c: (c.ppn or 0, c.procs, c.size)):
        last = out[-1] if out else None
        if last and (last.ppn, last.procs, last.algorithm) == (c.ppn, c.procs, c.algorithm):
            last.hi = c.size
        else:
            out.append(Band(c.procs, c.size, c.size, c.algorithm, c.ppn))
    return out
