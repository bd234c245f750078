"""MPICH's collective selection file from a tuning (MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE).

A user file replaces the library's tree whole, so the tuned file starts from the library's own:
MPICH compiles its default trees into libmpi as JSON text, and the one that selects MPIR-level
algorithms ("algorithm=MPIR_...") is read from there.  For each tuned collective its intra-
communicator subtree becomes: per tuned process count (ascending, "comm_size<=P"), the size
bands ("avg_msg_size<=S", the last "=any") leading to the chosen algorithm, or to the library's
own subtree where the default was kept; any other communicator size keeps the library's subtree.

What the file was tuned for (cluster, MPI and its version, date) goes beside it in FILE.scope.json:
MPICH's parser takes every key of the file as a selection condition, so it cannot hold them."""

from __future__ import annotations

import copy
import json
import re
import socket
import subprocess
from datetime import datetime, timezone
from pathlib import Path

from scope.analysis.tuning import DEFAULT, Band
from scope.errors import ScopeError


def mpi_library(exe) -> Path | None:
    """The MPI library the engine is linked against (ldd)."""
    p = subprocess.run(["ldd", str(exe)], capture_output=True, text=True)
    for ln in p.stdout.splitlines():
        m = re.match(r"\s*(libmpi[^ ]*\.so[^ ]*)\s+=>\s+(\S+)", ln)
        if m and not m.group(1).startswith("libmpifort"):
            return Path(m.group(2))
    return None


def _objects(blob: bytes, start: bytes):
    """Every JSON object in blob that begins with `start`, whole (braces matched)."""
    i = blob.find(start)
    while i >= 0:
        depth, j = 0, i
        while j < len(blob):
            ch = blob[j : j + 1]
            depth += ch == b"{"
            depth -= ch == b"}"
            j += 1
            if depth == 0:
                break
        try:
            yield json.loads(blob[i:j].decode())
        except (UnicodeDecodeError, ValueError):
            pass
        i = blob.find(start, j)


def library_tree(lib: Path) -> tuple[dict, bytes]:
    """MPICH's compiled-in selection tree of MPIR algorithms, and the library's bytes."""
    blob = lib.read_bytes()
    for obj in _objects(blob, b'{"collective='):
        if '"algorithm=MPIR_' in json.dumps(obj):
            return obj, blob
    raise ScopeError(f"no MPIR selection tree found in {lib}", "scope tune writes MPICH's file (MPICH 4 or later)")


def _leaf(coll: str, alg: str, library_subtree: dict, blob: bytes) -> dict:
    if alg == DEFAULT:
        return copy.deepcopy(library_subtree)
    for kind in ("intra", "allcomm"):
        fn = f"MPIR_{coll.capitalize()}_{kind}_{alg}"
        if fn.encode() in blob:
            return {f"algorithm={fn}": {}}
    return copy.deepcopy(library_subtree)  # not nameable in the file: the library decides


def tuned_subtree(coll: str, bands: list[Band], library_subtree: dict, blob: bytes) -> dict:
    out: dict = {}
    for procs in sorted({b.procs for b in bands}):
        mine = sorted((b for b in bands if b.procs == procs), key=lambda b: b.lo)
        sizes: dict = {}
        for k, b in enumerate(mine):
            key = "avg_msg_size=any" if k == len(mine) - 1 else f"avg_msg_size<={b.hi}"
            sizes[key] = _leaf(coll, b.algorithm, library_subtree, blob)
        out[f"comm_size<={procs}"] = sizes
    out["comm_size=any"] = copy.deepcopy(library_subtree)
    return out


def write_mpich(path: str, tuned: dict[str, list[Band]], exe, mpi_version: str) -> Path:
    lib = mpi_library(exe)
    if not lib:
        raise ScopeError(f"cannot tell which MPI library {exe} uses (ldd)", "build the engine with the MPI to tune")
    tree, blob = library_tree(lib)
    for coll, bands in tuned.items():
        node = tree.get(f"collective={coll}", {})
        intra = node.get("comm_type=intra")
        if intra is None:
            continue
        node["comm_type=intra"] = tuned_subtree(coll, bands, intra, blob)
    out = Path(path)
    out.write_text(json.dumps(tree, indent=1) + "\n")
    meta = {
        "tuned_for": {"host": socket.gethostname(), "mpi": mpi_version, "library": str(lib)},
        "date_utc": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "collectives": {c: [b.__dict__ for b in bs] for c, bs in tuned.items()},
    }
    Path(f"{out}.scope.json").write_text(json.dumps(meta, indent=1) + "\n")
    return out
