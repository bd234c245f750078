"""A run on one page, the way a vendor's data sheet reads: one figure per level, each with what
it is, its unit and the point it comes from.  A level the run did not measure is left out.
Pure: a Run in, rows out."""

from __future__ import annotations

from dataclasses import dataclass

from scope.analysis.kernels import rate_of
from scope.catalog.names import (
    ALLREDUCE,
    APP_EP,
    APP_FT,
    BARRIER,
    DGEMM,
    IO_READ,
    IO_WRITE,
    JACOBI,
    MATMUL,
    NODE_STREAM,
    PINGPONG,
    RMA_PUT,
    STREAM,
)
from scope.catalog.testinfo import written
from scope.model import Point, Run


@dataclass
class Figure:
    level: str
    what: str
    value: float
    unit: str
    source: str  # test, parameters and size the figure is read at


def _at(p: Point) -> str:
    where = [f"{k}={written(v)}" for k, v in sorted(p.params.items()) if k != "procs"]
    where += [f"{p.params['procs']} procs"] if "procs" in p.params else []
    where += [f"{p.size} B"] if p.size is not None else []
    return f"{p.test} ({', '.join(where)})"


def _pick(by_test: dict[str, list[Point]], test: str, key, best=max, **params) -> Point | None:
    pts = [
        p for p in by_test.get(test, ())
        if p.median and all(str(p.params.get(k)) == str(v) for k, v in params.items()) and key(p) is not None
    ]  # fmt: skip
    return best(pts, key=key) if pts else None


def _procs(p: Point) -> int:
    return int(p.params.get("procs") or 0)


def datasheet(run: Run) -> list[Figure]:
    out: list[Figure] = []
    by_test: dict[str, list[Point]] = {}  # the run's points walked once, not once a figure (issue 52)
    for q in run.points:
        by_test.setdefault(q.test, []).append(q)

    def add(level, what, p, value, unit):
        if p is not None and value is not None:
            out.append(Figure(level, what, value, unit, _at(p)))

    p = _pick(by_test, NODE_STREAM, lambda p: (_procs(p), p.bw_median or 0), kernel="triad")
    add("node", "memory bandwidth (STREAM triad, all ranks)", p, p and p.bw_median, "MB/s")
    p = _pick(by_test, DGEMM, lambda p: (_procs(p), (rate_of(p) or (0,))[0]))
    add("node", "DGEMM rate (all ranks)", p, p and (rate_of(p) or (None,))[0], "GFLOP/s")
    p = _pick(by_test, PINGPONG, lambda p: -(p.size or 0))
    add("p2p", "MPI latency (ping-pong, smallest size)", p, p and p.median, "us")
    p = _pick(by_test, STREAM, lambda p: p.bw_median)
    add("p2p", "MPI bandwidth (stream, peak)", p, p and p.bw_median, "MB/s")
    for test, what in ((ALLREDUCE, "allreduce, smallest size, most processes"), (BARRIER, "barrier")):
        p = _pick(by_test, test, lambda p: (_procs(p), -(p.size or 0)))
        add("coll", what, p, p and p.median, "us")
    p = _pick(by_test, RMA_PUT, lambda p: -(p.size or 0))
    add("rma", "one-sided put, smallest size", p, p and p.median, "us")
    for test in (MATMUL, JACOBI):
        p = _pick(by_test, test, lambda p: (_procs(p), (rate_of(p) or (0,))[0]))
        if p is not None and rate_of(p):
            add("kernel", f"{test.split('.')[1]} at the most processes", p, rate_of(p)[0], rate_of(p)[1])
    for test in (APP_EP, APP_FT):
        p = _pick(by_test, test, lambda p: (_procs(p), (rate_of(p) or (0,))[0]))
        if p is not None and rate_of(p):
            add("app", f"NAS {test.split('.')[1].upper()} class {p.params.get('class')}", p, *rate_of(p))
        elif p is not None:
            add("app", f"NAS {test.split('.')[1].upper()} class {p.params.get('class')}", p, p.median / 1e6, "s")
    for test, what in ((IO_WRITE, "MPI-IO write"), (IO_READ, "MPI-IO read")):
        p = _pick(by_test, test, lambda p: p.bw_median)
        add("io", what + ", best block", p, p and p.bw_median, "MB/s")
    return out
