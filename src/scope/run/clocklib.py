"""SCOPE's clock as a library for a user's own programs (issue 57, docs/clock-library.md):
built from the engine's sources with the MPI's own wrapper (an MPI library's ABI is its own,
as the engine's is) and installed with its header and pkg-config file under a prefix, by
default this Python environment's, where the Python binding (scope.clock) finds it."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from scope.errors import ENVIRONMENT, USAGE, ScopeError
from scope.run.kept import source_digest
from scope.run.leftovers import die_with
from scope.run.toolchain import Toolchain, build_root, engine_source, make_safe

SONAME = "libscopeclock.so.1"


@dataclass(frozen=True)
class Installed:
    library: Path
    header: Path
    pkgconfig: Path

    def lines(self) -> list[str]:
        folder = self.pkgconfig.parent
        return [
            f"library  {self.library}",
            f"header   {self.header}",
            f"pkg-config file  {self.pkgconfig}",
            f"compile: mpicc prog.c $(PKG_CONFIG_PATH={folder} pkg-config --cflags --libs scope-clock)",
        ]


def checked_prefix(prefix: Path) -> tuple[Path, list[Path]]:
    """The prefix, its lib/pkgconfig and include folders made: refused (a one-line reason) where
    they cannot be, before the MPI is looked for or anything built.  Also the folders this made,
    deepest first, for unmake() when the build is refused after all."""
    prefix = prefix.expanduser().resolve()
    make_safe(prefix, "--prefix", "choose a prefix whose path has none of them")
    targets = (prefix / "lib" / "pkgconfig", prefix / "include")
    made = sorted({q for t in targets for q in (t, *t.parents) if not q.exists()}, key=lambda q: -len(q.parts))
    for folder in targets:
        try:
            folder.mkdir(parents=True, exist_ok=True)
            ok = os.access(folder, os.W_OK)
        except OSError as e:
            unmake(made)
            raise ScopeError(f"cannot install under {prefix}: {e.strerror}", "choose another --prefix", USAGE) from None
        if not ok:
            unmake(made)
            raise ScopeError(
                f"cannot install under {prefix}: {folder} is not writable", "choose another --prefix", USAGE
            )
    return prefix, made


def unmake(made: list[Path]) -> None:
    """The folders checked_prefix made, removed where still empty (a refused build leaves none)."""
    for folder in made:
        try:
            folder.rmdir()
        except OSError:
            pass


def install(tc: Toolchain, prefix: Path) -> Installed:
    """The library built for this MPI (kept in the build folder per MPI and sources) and
    installed under prefix (a checked_prefix)."""
    src = engine_source()
    key = hashlib.sha256(json.dumps([str(tc.mpicc.resolve()), tc.show, source_digest(src, build_root())]).encode())
    out = build_root() / f"clocklib-{key.hexdigest()[:12]}"
    make_safe(out, "the build folder", "set SCOPE_BUILD_DIR to a folder whose path has none of them")
    cmd = ["make", "-s", "-C", str(src), f"MPICC={tc.mpicc}", f"BUILD={out}", f"PREFIX={prefix}", "install"]
    print(f"scope: building the clock library with {tc.mpicc} ...", file=sys.stderr)
    try:
        p = subprocess.run(
            cmd, capture_output=True, text=True, timeout=600, preexec_fn=die_with(os.getpid(), signal.SIGTERM)
        )
    except FileNotFoundError:
        raise ScopeError("'make' is not installed", "install make (e.g. apt-get install make)", ENVIRONMENT) from None
    done = Installed(
        prefix / "lib" / SONAME, prefix / "include" / "scope_clock.h", prefix / "lib" / "pkgconfig" / "scope-clock.pc"
    )
    if p.returncode != 0 or not done.library.is_file():
        tail = " | ".join((p.stdout + p.stderr).strip().splitlines()[-3:])
        raise ScopeError(
            f"the clock library did not build with {tc.mpicc}: {tail}",
            "check the MPI compiler wrapper (scope doctor)",
            ENVIRONMENT,
        )
    return done
