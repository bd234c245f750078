"""A measured run beside its simulation on a platform calibrated from it (`scope sim check`,
issue 73): per point the simulated median over the measured one, with the measured interval,
and for a point outside the tolerance why, from what is known of it: the measurement off its
own range's fit (a curve the calibration's straight lines do not follow there), a test the
calibration has no input for, or SMPI's model of the test against the machine."""

from __future__ import annotations

from dataclasses import dataclass, field

from scope.analysis.breakpoints import fit_piecewise
from scope.analysis.simnet import Calibration, bytes_us, exchange_time_us, route_us, stream_time_us, time_us
from scope.catalog.names import PINGPING, PINGPONG, STREAM
from scope.model import Point, Run

TOLERANCE = 0.05  # relative: the bar for the testbed's p2p, and a default a user may change
CALIBRATED = (PINGPONG, STREAM, PINGPING)  # the tests a calibration is fitted to (analysis/simcal.py)


@dataclass(frozen=True)
class Row:
    test: str
    size: int | None
    procs: int  # the ranks of the point (a p2p point: the run's)
    measured_us: float
    ci_lo_us: float | None
    ci_hi_us: float | None
    simulated_us: float
    error: float  # simulated / measured - 1
    within: bool  # |error| <= the tolerance
    in_interval: bool  # the simulated median inside the measured interval
    why: str | None  # for a point outside the tolerance: a key of REASONS
    residual: float | None  # the measurement against its range's line (measured / line - 1)
    model_us: float | None  # what the calibration's formula gives (None: no formula for the test)
    algorithm: str | None = None  # the SMPI algorithm set for the point's collective (None: SMPI's choice)


@dataclass
class SimCheck:
    measured_run: int
    simulated_runs: list[int]  # every simulation: one per group of sizes
    tolerance: float
    rows: list[Row] = field(default_factory=list)
    unmatched: int = 0  # measured points the simulation has no point for (a skip, an error)

    @property
    def simulated_run(self) -> int:
        return self.simulated_runs[0]

    @property
    def within(self) -> int:
        return sum(r.within for r in self.rows)

    @property
    def worst(self) -> Row | None:
        return max(self.rows, key=lambda r: abs(r.error), default=None)

    def headline(self) -> str:
        if not self.rows:
            return "no point of the run was simulated"
        w = self.worst
        return (
            f"the simulation is within {self.tolerance * 100:g} % of the measurement at {self.within} of "
            f"{len(self.rows)} points; worst {w.error * 100:+.1f} % ({w.test}"
            + (f" {w.size} B" if w.size is not None else "")
            + f", {w.procs} ranks)"
        )


def _key(p: Point) -> tuple:
    """A point by its test, size, ranks and other parameters (a kernel's n and iterations)."""
    rest = tuple(sorted((k, str(v)) for k, v in p.params.items() if k not in ("size", "procs")))
    return p.test, p.size, p.procs, rest


def _fit_residuals(points: list[Point]) -> dict[tuple, float]:
    """Each calibrated test's point's relative residual against its own range of the test's
    piecewise fit (other tests' curves are not what the calibration follows)."""
    out: dict[tuple, float] = {}
    by_test: dict[str, list[Point]] = {}
    for p in points:
        if p.test in CALIBRATED and p.size is not None and p.median:
            by_test.setdefault(p.test, []).append(p)
    for pts in by_test.values():
        fit = fit_piecewise([p.size for p in pts], [p.median for p in pts])
        if fit is None:
            continue
        for p in pts:
            seg = next((s for s in fit.segments if s.first_size <= p.size <= s.last_size), None)
            if seg is not None:
                model = seg.t0_us + p.size / seg.rinf_MBps
                out[_key(p)] = p.median / model - 1 if model > 0 else 0.0
    return out


# Why a point is outside the tolerance, by what is known of it (the views say these words).
REASONS = {
    "off-line": "the measurement is off its range's straight line (t0 + size / rate, its residual in brackets), "
    "which the calibration follows: a size the range's fit does not hold at",
    "past-route": "the measured stream or exchange moves its bytes faster than the ping-pong at this size; the "
    "calibrated route's rate is the ping-pong's, which a simulation cannot pass",
    "uncalibrated": "no input of the calibration measures this test: the simulation is SMPI's model of it (its "
    "algorithm as the mpich selector chooses, its overlap and contention) on the calibrated links",
    "algorithm": "no input of the calibration measures this test: the simulation is SMPI's implementation of the "
    "algorithm the measured MPI chose at this size (the algorithm column), its overlap and contention, on the "
    "calibrated links",
    "oversubscribed": "the measured run had more ranks than the machine's cores (its ranks waiting in MPI spin on "
    "cores the working ones need, at every point of the run), and a simulated rank has a core of its own",
    "model": "SMPI's model of this test differs from the machine here (its overlap of messages, the route's sharing)",
}


def _why(
    p: Point,
    error: float,
    residual: float | None,
    cal: Calibration | None,
    oversubscribed: bool = False,
    algorithm: str | None = None,
) -> str:
    """Why a point is outside: the measurement's own distance from its range's line where that
    explains at least half the error (the calibration follows the line, not each point); a
    stream or an exchange faster than the calibrated route; a test no input measured; else SMPI's model."""
    if residual is not None and residual * error < 0 and abs(residual) >= abs(error) / 2:
        return "off-line"
    if oversubscribed:
        return "oversubscribed"
    floor = {STREAM: bytes_us, PINGPING: route_us}.get(p.test)  # below it no simulation of the test goes
    if floor and cal is not None and p.median < floor(cal, p.size):
        return "past-route"
    return "model" if p.test in CALIBRATED else "algorithm" if algorithm else "uncalibrated"


def _model(cal: Calibration | None, p: Point) -> float | None:
    """The calibration's own formula at the point: between it and the simulation is SMPI's
    share of the error, between it and the measurement the calibration's."""
    if cal is None or p.size is None:
        return None
    if p.test == PINGPONG:
        return time_us(cal, p.size)
    if p.test == STREAM and cal.isend:
        return stream_time_us(cal, p.size, int(p.ops_per_iter or 1))
    if p.test == PINGPING and cal.isend:
        return exchange_time_us(cal, p.size)
    return None


def check(
    measured: Run,
    simulated: list[Run],
    tolerance: float = TOLERANCE,
    cal: Calibration | None = None,
    algorithms: dict[tuple[str, int], str] | None = None,
) -> SimCheck:
    """Each measured point beside the simulated point of the same test, size, ranks and
    parameters, from whichever simulation has it (one per group of sizes whose collectives ran
    one algorithm); `cal`: the calibration simulated (None: a platform given by hand);
    `algorithms`: (test, size) -> the SMPI algorithm set for a blocking collective's point."""
    sim = {_key(p): p for run in simulated for p in run.points if p.median}
    mine = [p for p in measured.points if p.median]
    residuals = _fit_residuals(mine)
    over = bool(measured.context and measured.context.oversubscribed)
    out = SimCheck(measured.id, [r.id for r in simulated], tolerance)
    chosen = algorithms or {}
    for p in mine:
        s = sim.get(_key(p))
        if s is None:
            out.unmatched += 1
            continue
        err = s.median / p.median - 1
        lo, hi = p.ci_lo, p.ci_hi
        inside = lo is not None and hi is not None and lo <= s.median <= hi
        ok = abs(err) <= tolerance
        alg = chosen.get((p.test, p.size)) if p.params.get("nonblocking", "no") == "no" else None
        why = None if ok else _why(p, err, residuals.get(_key(p)), cal, over, alg)
        out.rows.append(Row(p.test, p.size, p.procs or measured.ranks or 0, p.median, lo, hi, s.median, err, ok, inside,
                            why, residuals.get(_key(p)), _model(cal, p), alg))  # fmt: skip
    return out
