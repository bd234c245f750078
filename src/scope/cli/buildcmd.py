"""scope build: the engine for an MPI, built if need be; its path printed.  With --clock-lib,
SCOPE's clock as a library for programs of one's own, built for that MPI and installed."""

from __future__ import annotations

import sys
from pathlib import Path

from scope.errors import USAGE, ScopeError
from scope.run.clocklib import checked_prefix, install, unmake
from scope.run.toolchain import engine_path, find_toolchain


def cmd_build(args) -> int:
    if args.prefix and not args.clock_lib:
        raise ScopeError("--prefix is where --clock-lib installs", "add --clock-lib, or leave --prefix out", USAGE)
    if args.clock_lib:
        prefix, made = checked_prefix(Path(args.prefix or sys.prefix))  # before the MPI is looked for
        try:
            done = install(find_toolchain(args.mpicc), prefix)
        except BaseException:
            unmake(made)  # a refused build leaves no folder it made
            raise
        print("\n".join(done.lines()))
        return 0
    print(engine_path(find_toolchain(args.mpicc)))
    return 0
