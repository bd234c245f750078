"""`scope tune COLLECTIVE...`: every algorithm the MPI offers for each collective, forced one
launch set at a time (MPICH: MPIR_CVAR_<COLL>_INTRA_ALGORITHM, with
MPIR_CVAR_COLLECTIVE_FALLBACK=error so an algorithm that cannot run says so instead of quietly
running another; Open MPI: coll_tuned_<coll>_algorithm under use_dynamic_rules), window-timed as
the collective level is; then the choice per (procs, size) (analysis/tuning.py), shown against
the library's default, and the MPI's own tuning file written (tune/files.py).  Each algorithm's
measurement is a stored run labelled "tune COLL ALG", so `scope show` and `scope compare` read it
like any other."""

from __future__ import annotations

from pathlib import Path

from scope.analysis.tuning import bands, decide
from scope.errors import ScopeError
from scope.run.checks import writable_output
from scope.run.plan import ask
from scope.run.testbed import load
from scope.run.toolchain import engine_path, find_toolchain
from scope.store import Store, default_path
from scope.tune.apply import apply
from scope.tune.drivers import COLLECTIVES, algorithms, driver_for, mpi_version
from scope.tune.measure import layouts, measure
from scope.tune.options import TuneOptions
from scope.views.fmt import num, size, table
from scope.views.tuning import write_report


def cmd_tune(args) -> int:
    return tune(TuneOptions.of(args))


def tune(o: TuneOptions) -> int:
    """The command, on its typed options."""
    colls = [c.removeprefix("coll.") for c in o.collectives]
    bad = [c for c in colls if c not in COLLECTIVES]
    if bad or not colls:
        raise ScopeError(f"cannot tune {', '.join(bad) or 'nothing'}", f"name some of: {', '.join(COLLECTIVES)}")
    for path, flag in ((o.output, "-o"), (o.report, "--report")):
        if path:
            writable_output(path, flag, reads=(Path(o.db) if o.db else default_path(),))  # before measuring
    tc = find_toolchain(o.mpicc)
    exe, drv = engine_path(tc, quiet=True), driver_for(tc.flavor)
    where = layouts(o)
    check_options(exe, o, colls, where)
    if o.apply:
        return apply(o, exe, drv, colls)
    offered = {c: algorithms(exe, drv, c) for c in colls}  # before anything is launched
    if o.algorithms:
        asked = o.algorithms.split(",")
        for c in colls:
            unknown = [a for a in asked if a not in offered[c]]
            if unknown:
                raise ScopeError(
                    f"{c} has no algorithm {', '.join(unknown)} in this MPI", f"it offers {', '.join(offered[c])}"
                )
            offered[c] = {a: offered[c][a] for a in asked}
    store = Store(o.db)
    decided = {}
    for coll in colls:
        runs, points, refused = measure(o, store, drv, coll, offered[coll], where)
        choices = [c for ppn, pts in points.items() for c in decide(pts, o.alpha, o.min_effect, ppn)]
        decided[coll] = (points, choices)
        print(render(coll, runs, len({a for g in points.values() for a in g}), refused, choices))
    if o.report:
        sections = [
            (c + (f", {ppn} per host" if ppn else ""), pts, mine, bands(mine))
            for c, d in decided.items()
            for ppn, pts in d[0].items()
            for mine in [[x for x in d[1] if x.ppn == ppn]]
        ]
        page = write_report(o.report, sections)
        print(f"wrote {page}: every algorithm's curve with the band of the one to use")
    if o.output:
        tuned = {c: bands(d[1]) for c, d in decided.items()}
        path = drv.write(o.output, tuned, offered, exe, mpi_version(exe)[0])
        print(f"wrote {path}: apply it with scope tune --apply {path} {' '.join(colls)}")
    return 0


def check_options(exe, o: TuneOptions, colls: list[str], where) -> None:
    """The sizes, process counts and budget as the engine's plan reads them, for every layout,
    before anything is launched: a value the engine refuses is exit 2 in its words, not an
    algorithm left out of a tuning file written from nothing."""
    if o.testbed:
        load(o.testbed)  # up, or the one-line error saying how to start it
    tests = ",".join(f"coll.{c}" for c in colls)
    for at in where:
        ask(exe, ["--tests", tests, "--sizes", o.sizes, "--procs", at.procs, "--budget", str(o.budget)], at.ranks)


def render(coll: str, runs: dict, measured: int, refused: dict, choices) -> str:
    ids = ", ".join(str(i) for rs in runs.values() for i in rs)
    lines = [f"coll.{coll}: {measured} algorithms measured (runs {ids})"]
    lines += [f"  refused: {alg}: {why}" for alg, why in refused.items()]
    ppn = any(c.ppn for c in choices)
    rows = [
        ([str(c.ppn)] if ppn else [])
        + [str(c.procs), size(c.size), num(c.default_us), c.fastest, num(c.fastest_us)]
        + [f"{c.ratio:.3f}", f"{c.ci_lo:.3f}-{c.ci_hi:.3f}" if c.ci_lo == c.ci_lo else "-", c.verdict, c.algorithm]
        for c in choices
    ]
    head = ["procs", "size", "default us", "fastest", "its us", "ratio", "95% CI", "verdict", "use"]
    lines.append(table((["ppn"] if ppn else []) + head, rows, ("r" if ppn else "") + "rrrlrrrll"))
    lines.append("switch points (procs: sizes -> algorithm; auto = the library's own choice):")
    for b in bands(choices):
        at = f"{b.procs} at {b.ppn} per host" if b.ppn else str(b.procs)
        lines.append(f"  {at}: {size(b.lo)} .. {size(b.hi)} -> {b.algorithm}")
    return "\n".join(lines)
