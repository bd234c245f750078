"""`scope tune --apply FILE`: the collectives again with the tuning file in force and without,
one launch at a time and alternating (so a drift of the machine falls on both sides), and the
gain per point with its significance (scope compare's test on the launch medians).  The file is
refused for another MPI version (without --force) and, before anything is measured, when the
MPI cannot use it."""

from __future__ import annotations

import json
from pathlib import Path

from scope.analysis.compare import compare_launch_sets
from scope.errors import ScopeError
from scope.store import Store
from scope.tune.drivers import Driver, mpi_version
from scope.tune.measure import Layout, launch, layouts, stop_if_interrupted, why
from scope.tune.options import TuneOptions
from scope.views.compare import render as render_compare


def apply(o: TuneOptions, exe, drv: Driver, colls: list[str]) -> int:

    path = Path(o.apply).resolve()
    meta_path = Path(f"{path}.scope.json")
    if not path.is_file():
        raise ScopeError(f"no tuning file {path}", "write one with scope tune COLLECTIVE... -o FILE")
    meta = sidecar(meta_path)
    version, _ = mpi_version(exe)
    tuned_for = (meta.get("tuned_for") or {}).get("mpi")
    if tuned_for != version and not o.force:
        raise ScopeError(
            f"{path.name} was tuned for {tuned_for or 'an unknown MPI'}, this is {version or 'unknown'}",
            "tune again for this MPI, or --force",
        )
    env = drv.with_file(path)
    error = drv.check(path, exe)  # before anything is measured
    if error:
        raise ScopeError(f"{path.name} cannot be used: {error.splitlines()[0][:200]}", "write it again with scope tune")
    where = layouts(o)
    store = Store(o.db)  # the options were checked by the caller
    for coll in colls:
        for at in where:
            ids: dict[str, list[int]] = {"default": [], "tuned": []}
            for k in range(o.launches):
                for name, extra in (("default", {}), ("tuned", env)):
                    ids[name].append(_apply_launch(o, store, coll, name, extra, k, at))
            rows = compare_launch_sets(
                [store.load_run(i) for i in ids["default"]], [store.load_run(i) for i in ids["tuned"]],
                o.alpha, o.min_effect,
            )  # fmt: skip
            a, b = ",".join(map(str, ids["default"])), ",".join(map(str, ids["tuned"]))
            head = f"coll.{coll}" + (f", {at}" if at.ppn else "")
            print(f"{head}: the library's default (runs {a}) against {path.name} (runs {b}), launches alternating")
            print(render_compare(rows, a, b, False, o.min_effect))
    return 0


def sidecar(meta_path: Path) -> dict:
    """What scope tune wrote beside a tuning file (the MPI it was tuned for, the bands); none
    is fine, a damaged one is refused in one line (it once ended in an internal error)."""
    if not meta_path.is_file():
        return {}
    try:
        meta = json.loads(meta_path.read_text(errors="replace"))
    except (ValueError, OSError) as e:
        raise ScopeError(
            f"{meta_path.name} is not the record scope tune writes beside a tuning file ({e})",
            "write the file again with scope tune ... -o FILE, or remove the damaged .scope.json",
        ) from None
    if not isinstance(meta, dict):
        raise ScopeError(f"{meta_path.name} is not the record scope tune writes beside a tuning file", "write it again")
    return meta


def _apply_launch(o: TuneOptions, store, coll: str, name: str, env: dict, k: int, at: Layout) -> int:
    r = launch(o, store, coll, f"tune apply {coll} {name}", env, 1, at)
    stop_if_interrupted(r)
    if r.status != "complete":  # e.g. a chosen algorithm that fails where the file sends it
        raise ScopeError(
            f"coll.{coll} with {name} settings failed (run {r.run_id}, launch {k + 1}): {why(r)[:200]}",
            "tune again, or leave this collective out of the file",
        )
    return r.run_id
