"""`scope tune COLLECTIVE...`: every algorithm the MPI offers for each collective, forced one
launch set at a time (MPICH: MPIR_CVAR_<COLL>_INTRA_ALGORITHM, with
MPIR_CVAR_COLLECTIVE_FALLBACK=error so an algorithm that cannot run says so instead of quietly
running another; Open MPI: coll_tuned_<coll>_algorithm under use_dynamic_rules), window-timed as
the collective level is; then the choice per (procs, size) (analysis/tuning.py), shown against
the library's default, and the MPI's own tuning file written (tunefile.py).  Each algorithm's
measurement is a stored run labelled "tune COLL ALG", so `scope show` and `scope compare` read it
like any other."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from scope.analysis.tuning import DEFAULT, algorithms_from, bands, decide
from scope.errors import ScopeError
from scope.run.launcher import OPENMPI_AS_ROOT, engine_records
from scope.views.fmt import num, size, table

COLLECTIVES = ("allreduce", "bcast", "allgather", "alltoall", "reduce", "barrier")


class Driver:
    """How one MPI names, forces and takes its collective algorithms."""

    flavor = "mpich"

    def cvar(self, coll: str) -> str:
        return f"MPIR_CVAR_{coll.upper()}_INTRA_ALGORITHM"

    def offered(self, rec: dict) -> dict[str, str]:
        """name -> the value that forces it, from the cvar's record (MPICH: names in the text)."""
        return {a: a for a in algorithms_from(rec.get("description") or "")}

    def force(self, coll: str, value: str) -> dict[str, str]:
        return {self.cvar(coll): value, "MPIR_CVAR_COLLECTIVE_FALLBACK": "error"}

    def with_file(self, path: Path) -> dict[str, str]:
        return {"MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE": str(path)}

    def check(self, path: Path, exe) -> str | None:
        """A dry run: MPICH parses the file at start-up and refuses one it cannot."""
        return mpi_version(exe, self.with_file(path))[1] or None

    def write(self, path: str, tuned: dict, ids: dict, exe, version: str) -> Path:
        from scope.tune.files import write_mpich

        return write_mpich(path, tuned, exe, version)


class OpenMPIDriver(Driver):
    """coll/tuned: algorithms are an MPI_T enumeration whose values are their ids (0 = the fixed
    decision); forcing one and reading a rules file both need use_dynamic_rules."""

    flavor = "openmpi"

    def cvar(self, coll: str) -> str:
        return f"coll_tuned_{coll}_algorithm"

    def offered(self, rec: dict) -> dict[str, str]:
        return {c["name"]: str(c["value"]) for c in rec.get("choices") or [] if c.get("value")}

    def force(self, coll: str, value: str) -> dict[str, str]:
        return {"OMPI_MCA_coll_tuned_use_dynamic_rules": "1", f"OMPI_MCA_{self.cvar(coll)}": value}

    def with_file(self, path: Path) -> dict[str, str]:
        return {"OMPI_MCA_coll_tuned_use_dynamic_rules": "1", "OMPI_MCA_coll_tuned_dynamic_rules_filename": str(path)}

    def check(self, path: Path, exe) -> str | None:
        """Open MPI ignores a rules file it cannot parse without a word: SCOPE checks the grammar."""
        from scope.tune.files import openmpi_rules_error

        why = openmpi_rules_error(path.read_text())
        return f"{why} (Open MPI would ignore the file silently)" if why else None

    def write(self, path: str, tuned: dict, ids: dict, exe, version: str) -> Path:
        from scope.tune.files import write_openmpi

        return write_openmpi(path, tuned, {c: {a: int(v) for a, v in m.items()} for c, m in ids.items()}, version)


def driver_for(flavor: str) -> Driver:
    if flavor == "openmpi":
        return OpenMPIDriver()
    if flavor == "mpich":
        return Driver()
    raise ScopeError(f"scope tune drives MPICH and Open MPI, not {flavor}", "use --mpicc with one of them")


def algorithms(exe, drv: Driver, coll: str) -> dict[str, str]:
    """The algorithms the MPI names for a collective (MPI_T, through the engine)."""
    cvar = drv.cvar(coll)
    p = subprocess.run(
        [str(exe), "--cvars", cvar], capture_output=True, text=True, timeout=60, env={**os.environ, **OPENMPI_AS_ROOT}
    )
    recs = engine_records(p.stdout)
    rec = next((r for r in recs if r.get("name") == cvar), None)
    if p.returncode or not rec:
        raise ScopeError(
            f"this MPI names no algorithms for {coll} ({cvar} is not among its control variables)",
            "see docs/tuning.md for the MPIs scope tune drives",
        )
    return drv.offered(rec)


@dataclass(frozen=True)
class Layout:
    """Where one tuning launch set runs: `ranks` processes, measured at `procs`, `ppn` per
    testbed host (None: as the launcher places them)."""

    ranks: int
    procs: str
    ppn: int | None = None

    def __str__(self) -> str:
        return f"{self.ranks} ranks at {self.ppn} per host" if self.ppn else f"{self.ranks} ranks"


def layouts(args) -> list[Layout]:
    """The placements to tune for: the launch as given, or with --ppn every (ppn, procs) the
    testbed can hold, each launched at exactly its process count so that every point has that
    many processes per host (MPICH's comm_avg_ppn sees the same)."""
    if not args.ppn:
        return [Layout(args.ranks, args.procs)]
    if not args.testbed:
        raise ScopeError("--ppn places processes on testbed hosts", "add --testbed NAME, or leave --ppn out")
    from scope.run.testbed import fits, load

    hosts = len(load(args.testbed)["hosts"])
    ppns, procs = _counts(args.ppn, "--ppn"), _counts(str(args.ranks) if args.procs == "all" else args.procs, "--procs")
    out = [Layout(p, str(p), k) for k in ppns for p in procs if fits(p, k, hosts)]
    if not out:
        raise ScopeError(
            f"no process count in {args.procs} fits {args.ppn} per host on {hosts} hosts",
            "use process counts that are multiples of --ppn, at most ppn x hosts",
        )
    return out


def _counts(text: str, flag: str) -> list[int]:
    try:
        out = sorted({int(x) for x in text.split(",")})
    except ValueError:
        out = []
    if not out or out[0] < 1:
        raise ScopeError(f"{flag} expects whole numbers, e.g. 1,2; got '{text}'")
    return out


def _launch(args, store, coll: str, label: str, env: dict, launches: int, at: Layout):
    """One stored run of the collective as the tuning measures it (sizes, budget, MPI, testbed
    from the command line; ranks, procs and ppn from the layout), with `env` in force."""
    from scope.run.runner import RunOptions, execute

    o = RunOptions(
        tests=[f"coll.{coll}"],
        ranks=at.ranks,
        engine={"sizes": args.sizes, "procs": at.procs, "budget": args.budget},
        env=env,
        label=label + (f" ppn={at.ppn}" if at.ppn else ""),
        mpicc=args.mpicc,
        testbed=args.testbed,
        ppn=at.ppn,
        timeout=args.timeout,
        progress=False,
        launches=launches,
    )
    return execute(o, store, out=io.StringIO())


def _why(r) -> str:
    """What stopped a run, in the MPI's words where it gave some: one line."""
    return str((r.errors[0].get("message") if r.errors else None) or r.reason or r.status).splitlines()[0]


def measure(args, store, drv: Driver, coll: str, algs: dict[str, str], where: list[Layout]):
    """One run per algorithm and layout, the default first.  {algorithm: run ids},
    {ppn: {algorithm: points}}, {algorithm: why not}: an algorithm that fails, is refused or
    hangs (stopped by the timeout) is left out where it did, with the reason."""
    runs: dict[str, list[int]] = {}
    points: dict[int | None, dict[str, list]] = {}
    refused: dict[str, str] = {}
    for i, alg in enumerate([DEFAULT, *algs]):
        print(f"scope tune: {coll} {alg} ({i + 1} of {len(algs) + 1})", file=sys.stderr)
        env = {} if alg == DEFAULT else drv.force(coll, algs[alg])
        for at in where:
            try:
                r = _launch(args, store, coll, f"tune {coll} {alg}", env, args.launches, at)
            except ScopeError as e:
                refused[alg] = e.message
                break
            runs.setdefault(alg, []).append(r.run_id)
            if r.status == "complete" and r.points:
                points.setdefault(at.ppn, {}).setdefault(alg, []).extend(store.load_run(r.run_id, samples=False).points)
            else:
                refused[alg] = _why(r)[:160] + (f" (run {r.run_id}, {at})" if len(where) > 1 else f" (run {r.run_id})")
    return runs, points, refused


def mpi_version(exe, env: dict | None = None) -> tuple[str, str]:
    """The MPI library's own version string; with `env`, from a singleton engine started with it
    (and its stderr when the MPI would not start, e.g. on a tuning file it cannot parse).
    Without, the engine reads it without starting MPI: an Open MPI singleton leaves its
    shared-memory segment behind in /dev/shm."""
    if not env:
        q = subprocess.run([str(exe), "--version", "--json"], capture_output=True, text=True, timeout=60)
        rec = next(iter(engine_records(q.stdout)), {})
        return str(rec.get("mpi_library", "")).strip(), "" if q.returncode == 0 else q.stderr.strip()
    p = subprocess.run(
        [str(exe), "--timers"],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **OPENMPI_AS_ROOT, **(env or {})},
    )
    version = next((r.get("mpi_library", "") for r in engine_records(p.stdout) if r.get("type") == "timers"), "")
    return version.splitlines()[0].strip() if version else "", "" if p.returncode == 0 else p.stderr.strip()


def cmd_tune(args) -> int:
    from scope.cli.commands import _store
    from scope.run.toolchain import engine_path, find_toolchain

    colls = [c.removeprefix("coll.") for c in args.collectives]
    bad = [c for c in colls if c not in COLLECTIVES]
    if bad or not colls:
        raise ScopeError(f"cannot tune {', '.join(bad) or 'nothing'}", f"name some of: {', '.join(COLLECTIVES)}")
    tc = find_toolchain(args.mpicc)
    exe, drv = engine_path(tc, quiet=True), driver_for(tc.flavor)
    if args.apply:
        from scope.tune.apply import apply

        return apply(args, exe, drv, colls)
    offered = {c: algorithms(exe, drv, c) for c in colls}  # before anything is launched
    if args.algorithms:
        asked = args.algorithms.split(",")
        for c in colls:
            unknown = [a for a in asked if a not in offered[c]]
            if unknown:
                raise ScopeError(
                    f"{c} has no algorithm {', '.join(unknown)} in this MPI", f"it offers {', '.join(offered[c])}"
                )
            offered[c] = {a: offered[c][a] for a in asked}
    where = layouts(args)
    store = _store(args)
    decided = {}
    for coll in colls:
        runs, points, refused = measure(args, store, drv, coll, offered[coll], where)
        choices = [c for ppn, pts in points.items() for c in decide(pts, args.alpha, args.min_effect, ppn)]
        decided[coll] = (points, choices)
        print(render(coll, runs, len({a for g in points.values() for a in g}), refused, choices))
    if args.report:
        from scope.views.tuning import write_report

        sections = [
            (c + (f", {ppn} per host" if ppn else ""), pts, [x for x in d[1] if x.ppn == ppn])
            for c, d in decided.items()
            for ppn, pts in d[0].items()
        ]
        page = write_report(args.report, sections)
        print(f"wrote {page}: every algorithm's curve with the band of the one to use")
    if args.output:
        tuned = {c: bands(d[1]) for c, d in decided.items()}
        path = drv.write(args.output, tuned, offered, exe, mpi_version(exe)[0])
        print(f"wrote {path}: apply it with scope tune --apply {path} {' '.join(colls)}")
    return 0


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
