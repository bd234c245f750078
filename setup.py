"""The wheel carries the engine's C sources (scope/_engine), so an installed SCOPE builds its
engine against the MPI it finds, as a checkout does (run/toolchain.py: engine_source)."""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ENGINE = Path(__file__).resolve().parent / "engine"


def engine_files():
    for f in sorted(ENGINE.rglob("*")):
        if (
            f.is_file()
            and (f.suffix in (".c", ".h") or f.name in ("Makefile", "scope-clock.pc.in"))
            and "build" not in f.parts
        ):
            yield f


class BuildWithEngine(build_py):
    def run(self):
        super().run()
        dest = Path(self.build_lib) / "scope" / "_engine"
        for f in engine_files():
            target = dest / f.relative_to(ENGINE)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(f, target)


setup(cmdclass={"build_py": BuildWithEngine})
