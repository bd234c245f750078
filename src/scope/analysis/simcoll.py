"""Which collective algorithm the measured MPI took at each message size, as SMPI names it.

SMPI runs one algorithm per collective for a whole simulation (`smpi/allreduce:NAME`), or its
own model of a library's selection (`smpi/coll-selector:mpich`), whose thresholds are older
MPICH's: it keeps recursive doubling for allreduce up to 2 KiB, where MPICH 5 takes reduce-
scatter + allgather past 8 B (measured on the testbed, 2 ranks: auto 17.2 us at 1 KiB, forced
recursive doubling 8.8, forced reduce_scatter_allgather 17.6).  MPICH compiles its selection
into libmpi as a JSON tree (the one tune/files.py reads); walking it for a collective, a
communicator size and a message size gives the algorithm MPICH ran, and a sim check simulates
each group of sizes with that algorithm in force (cli/simcmd.py).

The walk takes, as SCOPE's collectives call them: an intra-communicator, MPI_SUM (commutative,
built in) over the point's dtype (allreduce) or bytes, the send buffer in place as the point's
`inplace` says, and a flat hierarchy (one rank per host: no node sub-communicator); a node
whose condition it does not know stops the walk (None: SMPI's own selector decides that size).
Conditions are tried in the tree's order and the first that holds is taken, as MPICH's csel
does.  A persistent collective (api=persistent) has a tree of its own: not walked."""

from __future__ import annotations

import re
from dataclasses import dataclass

# MPICH's algorithm (its function's suffix) -> SMPI's of the same schedule (SimGrid 3.32's
# collective list); MPICH's reduce_scatter_allgather is Rabenseifner's (recursive halving, then
# recursive doubling): SMPI's rab_rdb, which SMPI's own mpich selector takes for it.
SMPI_NAMES = {
    "allreduce": {"recursive_doubling": "rdb", "reduce_scatter_allgather": "rab_rdb", "ring": "lr"},
    "alltoall": {"scattered": "basic_linear", "pairwise": "pair", "brucks": "bruck"},
    "bcast": {
        "binomial": "binomial_tree",
        "scatter_recursive_doubling_allgather": "scatter_rdb_allgather",
        "scatter_ring_allgather": "scatter_LR_allgather",
    },
}
SMPI = "smpi/"  # SimGrid's prefix of a collective's algorithm setting
TESTS = {
    "coll.allreduce": "allreduce",
    "coll.alltoall": "alltoall",
    "coll.bcast": "bcast",
}  # the test -> MPI's collective
# coll.allreduce's dtypes and their bytes (engine/benchmarks/coll_sum.h)
WORD = {"uint32": 4, "char": 1, "int": 4, "float": 4, "double": 8}
_ALGORITHM = re.compile(r"^algorithm=MPIR_([A-Za-z]+)_intra_(\w+)$")
_CONDITION = re.compile(r"^(\w+)(<=|<|=)(\w+)$")


@dataclass(frozen=True)
class Call:
    """One collective call as the selection sees it."""

    coll: str
    comm_size: int
    msg_bytes: int  # MPICH's avg_msg_size: bytes per rank (alltoall: per destination)
    count: int  # elements
    inplace: bool = False  # MPI_IN_PLACE as the send buffer

    @property
    def pof2(self) -> int:
        """The largest power of two not above the communicator's size (MPICH's MPL_pof2)."""
        return 1 << (self.comm_size.bit_length() - 1)


def _holds(key: str, op: str, value: str, c: Call) -> bool | None:
    """Whether one csel condition holds for the call; None: not a condition this walk knows."""
    if value == "any":
        return True
    flags = {"comm_type": "intra", "is_commutative": "yes", "is_op_built_in": "yes",
             "is_sendbuf_inplace": "yes" if c.inplace else "no", "comm_hierarchy": "flat"}  # fmt: skip
    if op == "=" and key in flags:
        return flags[key] == value
    if key == "comm_size" and value == "pow2":
        return c.comm_size == c.pof2
    if key == "count" and value == "pow2" and op == "<":
        return c.count < c.pof2
    if not value.isdigit():
        return None
    n = int(value)
    got = {"comm_size": c.comm_size, "avg_msg_size": c.msg_bytes, "total_msg_size": c.msg_bytes * c.comm_size,
           "count": c.count}.get(key)  # fmt: skip
    if got is None:
        return None
    return got < n if op == "<" else got <= n if op == "<=" else got == n


def mpich_algorithm(tree: dict, c: Call) -> str | None:
    """The algorithm MPICH's selection tree gives the call (its name as the MPICH cvar takes it,
    e.g. recursive_doubling), or None where the walk meets a condition it does not know."""
    node = tree.get(f"collective={c.coll}")
    while isinstance(node, dict) and node:
        for key, child in node.items():
            m = _ALGORITHM.match(key)
            if m:
                return m.group(2) if m.group(1).lower() == c.coll else None
            cond = _CONDITION.match(key)
            holds = _holds(*cond.groups(), c) if cond else None
            if holds is None:
                return None
            if holds:
                node = child
                break
        else:
            return None  # no branch holds
    return None


def smpi_settings(tree: dict, test: str, procs: int, size: int, params: dict | None = None) -> dict[str, str] | None:
    """The SMPI setting that runs what MPICH ran for a blocking point of `test` with `params`
    (its dtype, inplace and api; SCOPE's defaults where absent) (None: none known: SMPI's own
    selector decides), e.g. {"smpi/allreduce": "rab_rdb"}."""
    params = params or {}
    if test not in TESTS or str(params.get("api", "standard")) != "standard":
        return None
    coll = TESTS[test]
    word = WORD.get(str(params.get("dtype", "uint32")), 0) if coll == "allreduce" else 1  # bytes an element
    if not word:
        return None
    inplace = params.get("inplace") in (True, "yes", 1)
    alg = mpich_algorithm(tree, Call(coll, procs, size, max(size // word, 1 if size else 0), inplace))
    smpi = SMPI_NAMES[coll].get(alg or "")
    return {f"{SMPI}{coll}": smpi} if smpi else None


def size_groups(tree: dict, points: list[tuple], sizes: list[int]) -> list[tuple[dict[str, str], list[int]]]:
    """`sizes` in groups that one simulation each can run: per size, the settings of every
    collective measured at it ((test, procs, size[, params]) of each blocking point); sizes with the same
    settings together, a size no collective was measured at in the group of the size before it
    (or the first group), a collective given two algorithms at one size (two process counts)
    left to SMPI there.  Groups in ascending order of their first size."""
    per_size: dict[int, dict[str, str | None]] = {}
    for test, procs, n, *params in points:
        got = smpi_settings(tree, test, procs, n, params[0] if params else None)
        for key, alg in (got or {f"{SMPI}{TESTS[test]}": None}).items():
            had = per_size.setdefault(n, {})
            had[key] = alg if had.get(key, alg) == alg else None
    groups: dict[tuple, list[int]] = {}
    last: tuple | None = None
    for n in sorted(set(sizes) | set(per_size)):
        if n in per_size:
            last = tuple(sorted((k, v) for k, v in per_size[n].items() if v))
        groups.setdefault(last, []).append(n)
    if None in groups:  # sizes before any collective's: with the first that has one
        first = groups.pop(None)
        key = next(iter(groups), ())
        groups[key] = sorted(first + groups.get(key, []))
    return sorted(((dict(k), v) for k, v in groups.items()), key=lambda g: g[1][0])
