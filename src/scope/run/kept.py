"""What a command works out that the next one may read instead (issue 52: every command asked
again): the engine sources' digest and scipy-openblas32's make flags, both part of every
engine's key, each valid while what it was worked out from is unchanged; and the one way
anything is kept beside the engines (a run's plan, an engine's descriptions too)."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib
import importlib.util
import json
import os
from pathlib import Path


def keep(kept: Path, text: str) -> None:
    """`text` written to `kept` whole (a reader sees the old file or the new one), where its
    folder exists already: never made for this (a build folder make cannot take is refused when
    a build is asked for, and must not be there first), nor a failure when it cannot be written
    (a read-only build folder only costs the next command the question)."""
    if not kept.parent.is_dir():
        return
    with contextlib.suppress(OSError):
        tmp = kept.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(text)
        tmp.replace(kept)


def kept_doc(kept: Path) -> dict:
    """What a file kept beside the engines holds, or {} where it is missing, unreadable or not
    a JSON object (a damaged or planted file only costs the next command the question)."""
    try:
        doc = json.loads(kept.read_text())
    except (OSError, ValueError):
        return {}
    return doc if isinstance(doc, dict) else {}


@functools.lru_cache(maxsize=8)
def source_digest(src: Path, root: Path) -> str:
    """The digest of the engine's sources (names and contents), read again only when a file's
    size or modification time says it changed, as make decides (every command asks: hashing
    them took 7 ms of each start, issue 52). Worked out once a process: a run asks three times
    (its engine's key twice, its provenance once), and listing the sources is itself 2-5 ms."""
    files = sorted(f for f in src.rglob("*") if f.suffix in (".c", ".h") or f.name == "Makefile")
    try:
        stamp = [[str(f.relative_to(src)), st.st_size, st.st_mtime_ns] for f in files if (st := f.stat())]
    except OSError:
        stamp = None
    kept = root / "source-digests.json"
    key = hashlib.sha256(json.dumps([str(src), stamp]).encode()).hexdigest()
    doc = kept_doc(kept)
    if stamp is not None and doc.get("key") == key and isinstance(doc.get("digest"), str):
        return doc["digest"]
    h = hashlib.sha256()
    for f in files:
        if f.is_file():
            h.update(str(f.relative_to(src)).encode())
            h.update(f.read_bytes())
    digest = h.hexdigest()
    if stamp is not None:
        keep(kept, json.dumps({"key": key, "digest": digest}))
    return digest


# Environment variables an MPI's compiler wrapper reads (MPICH's MPICH_CC, Open MPI's OMPI_CC,
# Intel's I_MPI_CC ...): a change in any of them may change what `mpicc -show` says.
WRAPPER_ENV = ("MPICH_", "OMPI_", "I_MPI_", "MPICC", "MPI_")


def wrapper_answers(root: Path, mpicc: Path, mpiexec: Path | None, ask) -> tuple[str, str]:
    """What `ask(mpicc, mpiexec)` says (the compile line `mpicc -show` prints and `mpiexec
    --version`), kept beside the engines while both files and the wrappers' environment are
    unchanged: every run asked both again, two processes and 7 ms of its start (issue 52)."""
    try:
        stamp = [[str(f), st.st_size, st.st_mtime_ns, st.st_ino] for f in (mpicc, mpiexec) if f and (st := f.stat())]
    except OSError:
        return ask(mpicc, mpiexec)
    env = sorted((k, v) for k, v in os.environ.items() if k.startswith(WRAPPER_ENV))
    key = hashlib.sha256(json.dumps([stamp, env]).encode()).hexdigest()
    kept = root / "wrappers.json"
    doc = kept_doc(kept)
    if isinstance(doc.get(key), list) and len(doc[key]) == 2:
        return str(doc[key][0]), str(doc[key][1])
    show, version = ask(mpicc, mpiexec)
    if show:  # a wrapper that answered nothing is asked again next time
        others = [(k, v) for k, v in doc.items() if k != key]
        keep(kept, json.dumps(dict([*others[-7:], (key, [show, version])])))
    return show, version


@functools.lru_cache(maxsize=4)
def blas_flags(root: Path) -> tuple[str, ...]:
    """make variables for OpenBLAS from scipy-openblas32 (a dependency of the project: the
    build numpy and scipy ship, headers included) when this Python has it; none otherwise, and
    node.dgemm is then a skip that says so.  Part of every engine's key, so asked by every
    command: what the package said is kept beside the engines while its folder is unchanged
    (importing it to ask cost 15 ms of each command's start: issue 52)."""
    spec = importlib.util.find_spec("scipy_openblas32")  # found, not imported
    if spec is None or not spec.origin:
        return ()
    here = Path(spec.origin).parent
    try:
        stamp = [str(here), here.stat().st_mtime_ns, (here / "lib").stat().st_mtime_ns]
    except OSError:
        stamp = None
    kept = root / "blas-flags.json"
    doc = kept_doc(kept)
    if stamp is not None and doc.get("stamp") == stamp and isinstance(doc.get("flags"), list):
        return tuple(str(f) for f in doc["flags"])
    flags = _ask_openblas()
    if stamp is not None:
        keep(kept, json.dumps({"stamp": stamp, "flags": list(flags)}))
    return flags


def _ask_openblas() -> tuple[str, ...]:
    ob = importlib.import_module("scipy_openblas32")
    lib = Path(ob.get_lib_dir())
    so = lib / f"lib{ob.get_library()}.so"
    if not so.is_file():
        return ()
    return (f"BLAS_CFLAGS=-DSCOPE_HAVE_BLAS -I{ob.get_include_dir()}", f"BLAS_LIBS={so} -Wl,-rpath,{lib}")
