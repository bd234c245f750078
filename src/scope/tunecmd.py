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
import json
import os
import subprocess
import sys
from pathlib import Path

from scope.analysis.tuning import DEFAULT, algorithms_from, bands, decide
from scope.errors import ScopeError
from scope.launcher import OPENMPI_AS_ROOT
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
        from scope.tunefile import write_mpich

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
        from scope.tunefile import openmpi_rules_error

        why = openmpi_rules_error(path.read_text())
        return f"{why} (Open MPI would ignore the file silently)" if why else None

    def write(self, path: str, tuned: dict, ids: dict, exe, version: str) -> Path:
        from scope.tunefile import write_openmpi

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
    recs = [json.loads(x) for x in p.stdout.splitlines() if x.startswith("{")]
    rec = next((r for r in recs if r.get("name") == cvar), None)
    if p.returncode or not rec:
        raise ScopeError(
            f"this MPI names no algorithms for {coll} ({cvar} is not among its control variables)",
            "see docs/tuning.md for the MPIs scope tune drives",
        )
    return drv.offered(rec)


def _launch(args, store, coll: str, label: str, env: dict, launches: int):
    """One stored run of the collective as the tuning measures it (sizes, procs, budget, MPI,
    testbed from the command line), with `env` in force; its RunResult."""
    from scope.runner import RunOptions, execute

    o = RunOptions(
        tests=[f"coll.{coll}"],
        ranks=args.ranks,
        engine={"sizes": args.sizes, "procs": args.procs, "budget": args.budget},
        env=env,
        label=label,
        mpicc=args.mpicc,
        testbed=args.testbed,
        timeout=args.timeout,
        progress=False,
        launches=launches,
    )
    return execute(o, store, out=io.StringIO())


def _why(r) -> str:
    """What stopped a run, in the MPI's words where it gave some: one line."""
    return str((r.errors[0].get("message") if r.errors else None) or r.reason or r.status).splitlines()[0]


def measure(args, store, drv: Driver, coll: str, algs: dict[str, str]):
    """One run per algorithm, the default first; {algorithm: run id}, {algorithm: why not}."""
    runs, refused = {}, {}
    for i, alg in enumerate([DEFAULT, *algs]):
        print(f"scope tune: {coll} {alg} ({i + 1} of {len(algs) + 1})", file=sys.stderr)
        env = {} if alg == DEFAULT else drv.force(coll, algs[alg])
        try:
            r = _launch(args, store, coll, f"tune {coll} {alg}", env, args.launches)
        except ScopeError as e:
            refused[alg] = e.message
            continue
        if r.status == "complete" and r.points:
            runs[alg] = r.run_id
        else:
            refused[alg] = _why(r)[:160]
    return runs, refused


def mpi_version(exe, env: dict | None = None) -> tuple[str, str]:
    """The MPI library's own version string, from a singleton engine (and its stderr when the
    MPI would not start, e.g. on a tuning file it cannot parse)."""
    p = subprocess.run(
        [str(exe), "--timers"],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **OPENMPI_AS_ROOT, **(env or {})},
    )
    recs = [json.loads(x) for x in p.stdout.splitlines() if x.startswith("{")]
    version = next((r.get("mpi_library", "") for r in recs if r.get("type") == "timers"), "")
    return version.splitlines()[0].strip() if version else "", "" if p.returncode == 0 else p.stderr.strip()


def cmd_tune(args) -> int:
    from scope.commands import _store
    from scope.toolchain import engine_path, find_toolchain

    colls = [c.removeprefix("coll.") for c in args.collectives]
    bad = [c for c in colls if c not in COLLECTIVES]
    if bad or not colls:
        raise ScopeError(f"cannot tune {', '.join(bad) or 'nothing'}", f"name some of: {', '.join(COLLECTIVES)}")
    tc = find_toolchain(args.mpicc)
    exe, drv = engine_path(tc, quiet=True), driver_for(tc.flavor)
    if args.apply:
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
    store = _store(args)
    decided = {}
    for coll in colls:
        runs, refused = measure(args, store, drv, coll, offered[coll])
        points = {alg: store.load_run(rid, samples=False).points for alg, rid in runs.items()}
        choices = decide(points, args.alpha, args.min_effect)
        decided[coll] = (runs, refused, choices, points)
        print(render(coll, runs, refused, choices))
    if args.report:
        from scope.views.tuning import write_report

        page = write_report(args.report, [(c, d[3], d[2]) for c, d in decided.items()])
        print(f"wrote {page}: every algorithm's curve with the band of the one to use")
    if args.output:
        tuned = {c: bands(d[2]) for c, d in decided.items()}
        path = drv.write(args.output, tuned, offered, exe, mpi_version(exe)[0])
        print(f"wrote {path}: apply it with scope tune --apply {path} {' '.join(colls)}")
    return 0


def render(coll: str, runs: dict, refused: dict, choices) -> str:
    lines = [f"coll.{coll}: {len(runs)} algorithms measured (runs {', '.join(map(str, runs.values()))})"]
    lines += [f"  refused: {alg}: {why}" for alg, why in refused.items()]
    rows = [
        [str(c.procs), size(c.size), num(c.default_us), c.fastest, num(c.fastest_us)]
        + [f"{c.ratio:.3f}", f"{c.ci_lo:.3f}-{c.ci_hi:.3f}" if c.ci_lo == c.ci_lo else "-", c.verdict, c.algorithm]
        for c in choices
    ]
    head = ["procs", "size", "default us", "fastest", "its us", "ratio", "95% CI", "verdict", "use"]
    lines.append(table(head, rows, "rrrlrrrll"))
    lines.append("switch points (procs: sizes -> algorithm; auto = the library's own choice):")
    for b in bands(choices):
        lines.append(f"  {b.procs}: {size(b.lo)} .. {size(b.hi)} -> {b.algorithm}")
    return "\n".join(lines)


def apply(args, exe, drv: Driver, colls: list[str]) -> int:
    """The collectives again, with the file in force and without, one launch at a time and
    alternating (so a drift of the machine falls on both sides), and the gain per point with
    its significance (scope compare's test on the launch medians)."""
    from scope.analysis.compare import compare_launch_sets
    from scope.commands import _store
    from scope.views.compare import render as render_compare

    path = Path(args.apply).resolve()
    meta_path = Path(f"{path}.scope.json")
    if not path.is_file():
        raise ScopeError(f"no tuning file {path}", "write one with scope tune COLLECTIVE... -o FILE")
    meta = json.loads(meta_path.read_text()) if meta_path.is_file() else {}
    version, _ = mpi_version(exe)
    tuned_for = (meta.get("tuned_for") or {}).get("mpi")
    if tuned_for != version and not args.force:
        raise ScopeError(
            f"{path.name} was tuned for {tuned_for or 'an unknown MPI'}, this is {version or 'unknown'}",
            "tune again for this MPI, or --force",
        )
    env = drv.with_file(path)
    error = drv.check(path, exe)  # before anything is measured
    if error:
        raise ScopeError(f"{path.name} cannot be used: {error.splitlines()[0][:200]}", "write it again with scope tune")
    store = _store(args)
    for coll in colls:
        ids: dict[str, list[int]] = {"default": [], "tuned": []}
        for k in range(args.launches):
            for name, extra in (("default", {}), ("tuned", env)):
                ids[name].append(_apply_launch(args, store, coll, name, extra, k))
        rows = compare_launch_sets(
            [store.load_run(i) for i in ids["default"]], [store.load_run(i) for i in ids["tuned"]],
            args.alpha, args.min_effect,
        )  # fmt: skip
        a, b = ",".join(map(str, ids["default"])), ",".join(map(str, ids["tuned"]))
        print(f"coll.{coll}: the library's default (runs {a}) against {path.name} (runs {b}), launches alternating")
        print(render_compare(rows, a, b, False, args.min_effect))
    return 0


def _apply_launch(args, store, coll: str, name: str, env: dict, k: int) -> int:
    r = _launch(args, store, coll, f"tune apply {coll} {name}", env, 1)
    if r.status != "complete":  # e.g. a chosen algorithm that fails where the file sends it
        raise ScopeError(
            f"coll.{coll} with {name} settings failed (run {r.run_id}, launch {k + 1}): {_why(r)[:200]}",
            "tune again, or leave this collective out of the file",
        )
    return r.run_id
