"""scope doctor: is this machine ready to measure, and what will the measurement stand on."""

from __future__ import annotations

import os
import platform
import subprocess
import sys

from scope.cli.common import open_store
from scope.cli.modulecmd import doctor_module
from scope.cores import usable_cores
from scope.errors import ScopeError
from scope.run.launcher import THROTTLE_ENV, Where, build_launch
from scope.run.stream import engine_records
from scope.run.toolchain import engine_path, find_toolchain
from scope.store import Store
from scope.views.fmt import num
from scope.views.jsonout import dumps

STATUS = {True: "ok", False: "fail", None: "warn"}


def render(items: list[dict]) -> str:
    marks = {"ok": "ok  ", "fail": "FAIL", "warn": "warn"}
    return "\n".join(f"[{marks[i['status']]}] {i['name']:<10} {i['text']}" for i in items)


def doctor(ranks: int, db_path, mpicc: str | None) -> tuple[list[dict], bool]:
    """Each check as {name, status (ok | warn | fail), text}, and whether all passed."""
    lines, ok = [], True

    def item(name: str, good: bool | None, text: str) -> None:
        lines.append({"name": name, "status": STATUS[good], "text": text})

    item("python", True, f"{platform.python_version()} ({sys.executable})")
    try:
        tc = find_toolchain(mpicc)
        item("mpi", True, f"{tc.mpicc} ({tc.flavor}), chosen as {tc.why}; launcher {tc.mpiexec or 'none found'}")
        if tc.others:
            item("other mpi", True, f"also found, not chosen: {', '.join(tc.others)} (--mpicc picks one)")
    except ScopeError as e:
        item("mpi", False, e.line())
        return lines, False
    try:
        exe = engine_path(tc, quiet=True)
        item("engine", True, str(exe))
    except ScopeError as e:
        item("engine", False, e.line())
        return lines, False

    timers = None
    if tc.mpiexec:
        # launched as scope run launches (as root, Open MPI needs its consent: set, and said)
        launch = build_launch(tc, exe, ["--timers"], Where(1))
        for note in launch.notes:
            item("launch", True, f"set {note}")
        try:
            p = subprocess.run(launch.argv, capture_output=True, text=True, timeout=120, env=launch.env)
            timers = next((r for r in engine_records(p.stdout) if r["type"] == "timers"), None)
        except (OSError, subprocess.TimeoutExpired):
            timers = None
    if timers:
        item("library", True, (timers.get("mpi_library") or "?").strip().splitlines()[0])
        for t in timers["all"]:
            if t["available"]:
                sel = "  <- used" if t["name"] == timers["best"] else ""
                item(
                    "timer",
                    True,
                    f"{t['name']}: read {num(t['overhead_ns'])} ns, resolution {num(t['resolution_ns'])} ns{sel}",
                )
            else:
                item("timer", None, f"{t['name']}: unavailable ({t.get('why_unavailable')})")
    else:
        item("launch", False, "a one-rank run of the engine failed: check that mpiexec works")
        ok = False

    cores = usable_cores()
    item("cores", True, f"{cores} usable here ({os.cpu_count()} online)")
    if ranks > cores:
        item(
            "ranks",
            None,
            f"{ranks} ranks on {cores} cores is oversubscribed: scope run sets "
            f"{', '.join(THROTTLE_ENV)} and marks the run; timings will not represent the hardware",
        )
    else:
        item("ranks", True, f"{ranks} ranks fit on {cores} cores")
    try:
        store = Store(db_path)
        item("database", True, f"{store.path} ({len(store.runs())} runs)")
        store.close()
    except ScopeError as e:
        item("database", False, e.line())
        ok = False
    return lines, ok


def cmd_doctor(args) -> int:
    items, ok = doctor(args.ranks, args.db, args.mpicc)
    more = None
    if args.module:
        more, fine = doctor_module(open_store(args), args.ranks, args.mpicc)
        ok = ok and fine
    if args.json:
        print(dumps({"ok": ok, "checks": items, "minimum_configuration": more}))
    else:
        print(render(items))
        if more:
            print(more)
    return 0 if ok else 3
