"""scope build: the engine for an MPI, built if need be; its path printed."""

from __future__ import annotations

from scope.run.toolchain import engine_path, find_toolchain


def cmd_build(args) -> int:
    print(engine_path(find_toolchain(args.mpicc)))
    return 0
