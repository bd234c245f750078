"""The MPI's own tuning file from a tuning: MPICH's collective selection tree
(MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE) or Open MPI's coll/tuned dynamic rules (version 2).

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
from dataclasses import replace
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


# MPICH 4-5 algorithms whose selection-file leaf takes parameters (csel reads "k=N" under the
# algorithm): the values a forced run uses by default (MPIR_CVAR_*_KVAL, 2; MPICH's
# doc/mpich/tuning_parameters.md, Table II).  An algorithm with other parameters (tree shapes,
# chunk sizes, recursive exchange's buffers) is not written: the band keeps the library's choice.
MPICH_PARAMS = {
    ("alltoall", "k_brucks"): {"k": 2},
    ("allgather", "k_brucks"): {"k": 2},
    ("barrier", "k_dissemination"): {"k": 2},
    ("barrier", "recexch"): {"k": 2},
    ("allreduce", "recursive_multiplying"): {"k": 2},
}
_PARAMETERISED = ("k_", "recexch", "tree", "multiplying")


def writable(coll: str, alg: str, blob: bytes) -> str | None:
    """The library's function name for a forced algorithm, if the file can name it whole."""
    if (coll, alg) not in MPICH_PARAMS and any(t in alg for t in _PARAMETERISED):
        return None
    for kind in ("intra", "allcomm"):
        fn = f"MPIR_{coll.capitalize()}_{kind}_{alg}"
        if fn.encode() in blob:
            return fn
    return None


def _leaf(coll: str, alg: str, library_subtree: dict, blob: bytes) -> dict:
    fn = None if alg == DEFAULT else writable(coll, alg, blob)
    if fn is None:  # the default, or an algorithm the file cannot name: the library decides
        return copy.deepcopy(library_subtree)
    params = MPICH_PARAMS.get((coll, alg), {})
    return {f"algorithm={fn}": {f"{k}={v}": {} for k, v in params.items()}}


def tuned_subtree(coll: str, bands: list[Band], library_subtree: dict, blob: bytes) -> dict:
    """Bands tuned per processes per node sit under "comm_avg_ppn<=K" (ascending), the library's
    own tree for any other; within, per process count and size as described above."""
    ppns = sorted({b.ppn for b in bands if b.ppn})
    if ppns:
        out = {
            f"comm_avg_ppn<={k}": tuned_subtree(coll, [replace(b, ppn=None) for b in bands if b.ppn == k],
                                                library_subtree, blob)
            for k in ppns
        }  # fmt: skip
        out["comm_avg_ppn=any"] = copy.deepcopy(library_subtree)
        return out
    out = {}
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
    write_meta(out, tuned, mpi_version, str(lib))
    return out


# Open MPI's collective ids (ompi/mca/coll/base/coll_base_functions.h, enum COLLTYPE)
OMPI_COLL_ID = {"allgather": 0, "allreduce": 2, "alltoall": 3, "barrier": 6, "bcast": 7, "reduce": 11}
# Collectives whose dynamic rules compare a message size scaled by the communicator size (coll/tuned's
# dynamic decisions): their bands' edges are scaled alike.
OMPI_TIMES_COMM = ("allgather", "alltoall")


def openmpi_rules(tuned: dict[str, list[Band]], ids: dict[str, dict[str, int]]) -> str:
    """coll/tuned's dynamic rules, version 2: per collective and tuned communicator size, a rule
    from each band's smallest size (the first from 0, as the file requires) to its algorithm id
    (0: the library's fixed decision)."""
    if any(b.ppn for bs in tuned.values() for b in bs):
        raise ScopeError("Open MPI's rules file has no processes-per-node condition", "tune without --ppn")
    lines = ["rule-file-version-2", f"{len(tuned)} # collectives"]
    for coll, bands in tuned.items():
        lines += [f"{OMPI_COLL_ID[coll]} # collective id: {coll}"]
        procs = sorted({b.procs for b in bands})
        lines.append(f"{len(procs)} # communicator sizes")
        for p in procs:
            mine = sorted((b for b in bands if b.procs == p), key=lambda b: b.lo)
            lines += [f"{p} # communicator size", f"{len(mine)} # rules: bytes algorithm topo segsize requests"]
            for k, b in enumerate(mine):
                lo = 0 if k == 0 else b.lo * (p if coll in OMPI_TIMES_COMM else 1)
                lines.append(f"{lo} {0 if b.algorithm == DEFAULT else ids[coll][b.algorithm]} 0 0 0 # {b.algorithm}")
    return "\n".join(lines) + "\n"


def write_meta(path: Path, tuned: dict[str, list[Band]], mpi_version: str, library: str) -> None:
    meta = {
        "tuned_for": {"host": socket.gethostname(), "mpi": mpi_version, "library": library},
        "date_utc": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "collectives": {c: [b.__dict__ for b in bs] for c, bs in tuned.items()},
    }
    Path(f"{path}.scope.json").write_text(json.dumps(meta, indent=1) + "\n")


def write_openmpi(path: str, tuned: dict[str, list[Band]], ids: dict[str, dict[str, int]], mpi_version: str) -> Path:
    out = Path(path)
    out.write_text(openmpi_rules(tuned, ids))
    write_meta(out, tuned, mpi_version, "Open MPI coll/tuned")
    return out


def openmpi_rules_error(text: str, offered: dict[int, set[int]] | None = None) -> str | None:
    """What is wrong with a coll/tuned rules file (None: nothing found).  Open MPI reads a file it
    cannot parse without a word and falls back to its fixed decisions, so the check is SCOPE's,
    after the grammar of the files it writes: counts, then per collective its id, per
    communicator size its rules (bytes algorithm topo segsize [requests]), the first from 0.
    `offered`: per collective id, the algorithm ids this Open MPI has (its MPI_T enumeration,
    what ompi_info lists); a rule naming another is an error too (0, the fixed decision, always
    exists)."""
    lines = [ln.split("#")[0].strip() for ln in text.splitlines()]
    lines = [ln for ln in lines if ln]
    width = 5 if lines and lines[0] == "rule-file-version-2" else 4
    lines = lines[1:] if width == 5 else lines
    at = 0

    def ints(n: int) -> list[int]:
        nonlocal at
        if at >= len(lines):
            raise ValueError("the file ends early")
        words = lines[at].split()
        at += 1
        if len(words) != n or not all(w.isdigit() for w in words):
            raise ValueError(f"expected {n} whole number(s), found '{lines[at - 1]}'")
        return [int(w) for w in words]

    try:
        for _ in range(ints(1)[0]):
            coll = ints(1)[0]
            if coll >= 22:
                raise ValueError("a collective id above Open MPI's 21")
            for _ in range(ints(1)[0]):
                ints(1)
                rules = [ints(width) for _ in range(ints(1)[0])]
                if rules and rules[0][0] != 0:
                    raise ValueError("a communicator size's first rule must start at 0 bytes")
                has = None if offered is None or coll not in offered else offered[coll] | {0}
                bad = next((r[1] for r in rules if has is not None and r[1] not in has), None)
                if bad is not None:
                    raise ValueError(
                        f"algorithm {bad} does not exist for collective {coll} in this Open MPI "
                        f"(it has {', '.join(map(str, sorted(has)))})"
                    )
    except ValueError as e:
        return f"line {at}: {e}"
    return None if at == len(lines) else f"line {at + 1}: more than the counts announce"
