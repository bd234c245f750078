"""Finding the MPI to build and launch with, and building the engine against it.

The engine is compiled with the MPI's own compiler wrapper, so it always matches the library
that runs it.  Each (wrapper, MPI, engine source) combination gets its own build directory,
so engines for several MPIs live side by side and a changed source is never run stale."""

from __future__ import annotations

import fcntl
import functools
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from scope.cores import usable_cores
from scope.errors import ENVIRONMENT, ScopeError
from scope.run.kept import blas_flags, keep, source_digest, wrapper_answers
from scope.run.leftovers import die_with
from scope.run.stream import engine_records

NO_MPI_HINT = "install one with 'pip install mpich' in this environment, or set MPICC=/path/to/mpicc"


@dataclass(frozen=True)
class Toolchain:
    mpicc: Path
    mpiexec: Path | None
    flavor: str  # mpich, openmpi, intel or unknown
    show: str  # the wrapper's underlying compile line
    why: str = ""  # why this wrapper was chosen (find_toolchain's order)
    others: tuple[str, ...] = ()  # the other wrappers found, not chosen

    def choice(self) -> dict:
        """What a run records of the choice: the wrapper, why, and the others found."""
        return {"mpicc": str(self.mpicc), "why": self.why, "others": list(self.others)}


def repo_root() -> Path:
    """The checkout this package runs from (src/scope/run/toolchain.py is four levels down)."""
    return Path(__file__).resolve().parents[3]


def from_checkout() -> bool:
    """Whether this package runs from its source checkout (not an installed wheel)."""
    root = repo_root()
    return (root / "engine" / "main.c").is_file() and (root / "pyproject.toml").is_file()


def engine_source() -> Path:
    """The engine's C sources: $SCOPE_ENGINE_SRC, else the checkout's engine/, else the copy an
    installed wheel carries (scope/_engine, put there by setup.py's build step)."""
    given = os.environ.get("SCOPE_ENGINE_SRC")
    src = Path(given) if given else repo_root() / "engine" if from_checkout() else Path(__file__).parents[1] / "_engine"
    if not (src / "main.c").is_file():
        raise ScopeError(
            f"engine sources not found in {src}", "set SCOPE_ENGINE_SRC to the engine/ folder", ENVIRONMENT
        )
    return src


def _run(cmd: list[str], timeout: float = 30) -> str:
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        return (p.stdout + p.stderr).strip()
    except (OSError, subprocess.TimeoutExpired):
        return ""


def _runnable(path: Path) -> bool:
    """A file this user may run; one in a folder it may not read is no candidate (as `which`
    skips it): after `su`, a PATH that still names /root/bin stopped every run with
    "Permission denied" (issue 44)."""
    try:
        return path.is_file() and os.access(path, os.X_OK)
    except OSError:
        return False


def _executable(c: str) -> Path | None:
    path = Path(c) if os.sep in c else Path(shutil.which(c) or c)
    return path.absolute() if _runnable(path) else None


def _on_path_outside_env() -> list[Path]:
    """mpicc wrappers on PATH that are not this Python environment's (a loaded module, the
    system's MPI), in PATH order."""
    own = (Path(sys.prefix) / "bin").resolve()
    out = []
    for d in os.environ.get("PATH", "").split(os.pathsep):
        if not d:
            continue
        p = Path(d) / "mpicc"
        if _runnable(p) and p.parent.resolve() != own and p.absolute() not in out:
            out.append(p.absolute())
    return out


def mpi_candidates(mpicc: str | None = None) -> list[tuple[Path | None, str, str]]:
    """Every MPI compiler wrapper SCOPE would consider, in its order of choice: (path or None
    when it is no executable, why it ranks there, what was given)."""
    out: list[tuple[Path | None, str, str]] = []
    if mpicc:
        out.append((_executable(mpicc), "--mpicc", mpicc))
    if os.environ.get("MPICC"):
        out.append((_executable(os.environ["MPICC"]), "$MPICC", os.environ["MPICC"]))
    for p in _on_path_outside_env():
        out.append((p, "the mpicc on PATH outside this environment (a loaded MPI module or the system's)", str(p)))
    own = Path(sys.prefix) / "bin" / "mpicc"
    out.append((_executable(str(own)), "this Python environment's MPI (from PyPI), the fallback", str(own)))
    return out


def find_toolchain(mpicc: str | None = None) -> Toolchain:
    """The MPI to measure: --mpicc, else $MPICC, else an mpicc on PATH outside this environment
    (on a cluster the loaded MPI is the one to measure), else this environment's own (MPICH
    from PyPI on a machine without one)."""
    # asked for again by the run after its options were read: the wrappers' answers (0.05 s of
    # mpicc -show and mpiexec --version) are kept for as long as what chooses them is unchanged
    return _toolchain(mpicc, os.environ.get("MPICC"), os.environ.get("PATH"), sys.prefix)


@functools.lru_cache(maxsize=4)
def _toolchain(mpicc: str | None, *_chooses: str | None) -> Toolchain:
    found = mpi_candidates(mpicc)
    chosen = why = None
    for path, reason, given in found:
        if path is not None:
            chosen, why = path, reason
            break
        if reason in ("--mpicc", "$MPICC"):
            raise ScopeError(
                f"MPI compiler wrapper '{given}' not found or not executable",
                "give the path of an existing mpicc",
                ENVIRONMENT,
            )
    if chosen is None:
        raise ScopeError("no MPI found (no mpicc in this environment or on PATH)", NO_MPI_HINT, ENVIRONMENT)
    others = tuple(str(p) for p, _, _ in found if p is not None and p != chosen)
    sibling = chosen.parent / "mpiexec"
    mpiexec = sibling if sibling.exists() else (Path(shutil.which("mpiexec")) if shutil.which("mpiexec") else None)
    show, version = wrapper_answers(build_root(), chosen, mpiexec, _ask_wrappers)
    flavor = "unknown"
    low = (version + show).lower()
    if "hydra" in low or "mpich" in low:
        flavor = "mpich"
    elif "open mpi" in low or "openrte" in low or "open-mpi" in low:
        flavor = "openmpi"
    elif "intel" in low:
        flavor = "intel"
    return Toolchain(chosen, mpiexec, flavor, show, why, others)


def _ask_wrappers(mpicc: Path, mpiexec: Path | None) -> tuple[str, str]:
    show = _run([str(mpicc), "-show"]) or _run([str(mpicc), "--showme"])
    return show, _run([str(mpiexec), "--version"]) if mpiexec else ""


def engine_digest() -> str:
    """The engine's source, as 12 hex digits of its digest: stored with every run, so two runs
    measured by different engine code are told apart (scope compare warns)."""
    return source_digest(engine_source(), build_root())[:12]


def build_root() -> Path:
    """Where engines are built, one folder per MPI and source digest: $SCOPE_BUILD_DIR, else the
    checkout's build/engines, else the user's cache ($XDG_CACHE_HOME or ~/.cache)/scope/engines."""
    env = os.environ.get("SCOPE_BUILD_DIR")
    if env:
        return Path(env)
    if from_checkout() and os.access(repo_root(), os.W_OK):
        return repo_root() / "build" / "engines"
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "scope" / "engines"


# Characters make cannot take in a target's or a variable's path: a space splits words, ':' and
# ';' end a target, '#' starts a comment, '$' a variable, '%' a pattern, '=' an assignment.
MAKE_UNSAFE = {
    " ": "space", "\t": "tab", "\n": "newline", ":": "':'", ";": "';'", "#": "'#'", "$": "'$'", "%": "'%'",
    "=": "'='", "\\": "backslash", "'": "quote", '"': "double quote", "`": "backquote",
}  # fmt: skip


def make_safe(path: Path, what: str, fix: str) -> None:
    """Refuses a folder make cannot build in, naming the character (issue 58: a build folder
    with a space failed inside make with a hint to check the MPI compiler wrapper)."""
    bad = next((c for c in str(path) if c in MAKE_UNSAFE), None)
    if bad is not None:
        raise ScopeError(f"{what} {str(path)!r} has a {MAKE_UNSAFE[bad]} in its path, which make cannot build in", fix)


def engine_path(tc: Toolchain, quiet: bool = False) -> Path:
    """Path of an engine built for this toolchain, building it if needed."""
    src = engine_source()
    parts = [str(tc.mpicc.resolve()), tc.show, source_digest(src, build_root()), *blas_flags(build_root())]
    key = hashlib.sha256(json.dumps(parts).encode()).hexdigest()[:12]
    out = build_root() / f"{tc.flavor}-{key}"
    exe = out / "scope-engine"
    if exe.is_file():
        return exe
    fix = "set SCOPE_BUILD_DIR to a folder whose path has none of them"
    make_safe(out, "the build folder", fix if os.environ.get("SCOPE_BUILD_DIR") else f"{fix} (it is {out.parent})")
    make_safe(src, "the engine's sources", "set SCOPE_ENGINE_SRC to a copy of them in a folder whose path has none")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise ScopeError(
            f"cannot create the build directory {out}: {e.strerror}",
            "set SCOPE_BUILD_DIR to a writable folder",
            ENVIRONMENT,
        ) from None
    # One build at a time per folder: two runs started together on a fresh install (a job
    # array, a test suite's workers) would otherwise compile into the same objects at once.
    with open(out / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not exe.is_file():  # the other build may have made it while this one waited
            _make(tc, src, out, quiet)
    return exe


def _make(tc: Toolchain, src: Path, out: Path, quiet: bool) -> None:
    exe = out / "scope-engine"
    if not quiet:
        print(f"scope: building the engine with {tc.mpicc} ...", file=sys.stderr)
    jobs = f"-j{usable_cores()}"
    cmd = [
        "make",
        "-s",
        jobs,
        "-C",
        str(src),
        f"MPICC={tc.mpicc}",
        f"BUILD={out}",
        *blas_flags(build_root()),
        str(out / "scope-engine"),
    ]
    try:
        p = subprocess.run(
            cmd, capture_output=True, text=True, timeout=600, preexec_fn=die_with(os.getpid(), signal.SIGTERM)
        )
    except FileNotFoundError:
        raise ScopeError("'make' is not installed", "install make (e.g. apt-get install make)", ENVIRONMENT) from None
    if p.returncode != 0 or not exe.is_file():
        tail = " | ".join((p.stdout + p.stderr).strip().splitlines()[-3:])
        raise ScopeError(
            f"the engine did not build with {tc.mpicc}: {tail}",
            "check that the MPI compiler wrapper works (scope doctor)",
            ENVIRONMENT,
        )


def sim_engine_path(smpicc: str, quiet: bool = False) -> Path:
    """The engine built for SimGrid's SMPI (`make -C engine sim`), building it if needed."""
    src = engine_source()
    blas = blas_flags(build_root())  # the kernels multiply as the native engine's do (kernel.matmul)
    key = hashlib.sha256(json.dumps([smpicc, source_digest(src, build_root()), *blas]).encode()).hexdigest()[:12]
    out = build_root() / f"sim-{key}"
    exe = out / "sim" / "scope-engine"
    if exe.is_file():
        return exe
    make_safe(out, "the build folder", "set SCOPE_BUILD_DIR to a folder whose path has none of them")
    out.mkdir(parents=True, exist_ok=True)
    with open(out / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not exe.is_file():
            if not quiet:
                print(f"scope: building the simulation engine with {smpicc} ...", file=sys.stderr)
            cmd = [
                "make",
                "-s",
                f"-j{usable_cores()}",
                "-C",
                str(src),
                f"SMPICC={smpicc}",
                f"BUILD={out}",
                *blas,
                "sim",
            ]
            p = subprocess.run(
                cmd, capture_output=True, text=True, timeout=900, preexec_fn=die_with(os.getpid(), signal.SIGTERM)
            )
            if p.returncode != 0 or not exe.is_file():
                tail = " | ".join((p.stdout + p.stderr).strip().splitlines()[-3:])
                raise ScopeError(f"the simulation engine did not build with {smpicc}: {tail}", "", ENVIRONMENT)
    return exe


@functools.lru_cache(maxsize=8)
def describe(exe: Path) -> list[dict]:
    """The engine's published descriptions: `test` records (the registry) and `option`
    records (its option table), as dicts.  An engine's are fixed when it is built, so they are
    kept beside it (every command would otherwise start the engine once more to ask)."""
    kept = exe.parent / "describe.jsonl"
    try:
        if kept.stat().st_mtime >= exe.stat().st_mtime:
            return engine_records(kept.read_text())
    except OSError:
        pass
    p = subprocess.run([str(exe), "--list", "--json"], capture_output=True, text=True, timeout=60)
    if p.returncode != 0:
        raise ScopeError(
            f"the engine could not list its tests: {p.stderr.strip()}",
            "rebuild with scope build",
            ENVIRONMENT,
        )
    keep(kept, p.stdout)  # a read-only build directory only costs the next command a launch
    return engine_records(p.stdout)


@functools.lru_cache(maxsize=8)
def mpi_library(exe: Path) -> str:
    """The first line of the MPI library's own version string, as the engine built against it
    reads it without starting MPI (a started Open MPI singleton leaves its segment in /dev/shm)."""
    p = subprocess.run([str(exe), "--version", "--json"], capture_output=True, text=True, timeout=60)
    rec = next(iter(engine_records(p.stdout)), {}) if p.returncode == 0 else {}
    return str(rec.get("mpi_library", "")).strip()


def list_tests(exe: Path) -> list[dict]:
    """The engine's registry, as dicts (name, level, summary, roles, params ...)."""
    return [r for r in describe(exe) if r.get("type") == "test"]
