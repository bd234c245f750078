"""OSU Micro-Benchmarks 7.4 as a way into SCOPE: every CPU program OMB 7.4 has, the title it
prints, and the SCOPE setting with its definition, or why there is none (`scope list --osu`,
`scope run --osu PROGRAM`; imports name a program's output by the same table).  Which SCOPE
test measures a program is the engine's word (the descriptor role `peer:<program>`); what
this table adds is the setting that makes the definitions meet, and the note that says where
they still differ (docs/method.md, docs/rma.md)."""

from __future__ import annotations

from dataclasses import dataclass, field

# OMB 7.4's title lines (its sources' BENCHMARK strings, "OSU MPI" and the accelerator taken
# off, lower case) -> the program that prints them; how its main column reads; bytes an
# operation moves, in message sizes.  A program no SCOPE test names as its peer (descriptor
# role `peer:<program>`) is refused on import, never filed under a test it is not.
OMB = {
    "latency test": ("osu_latency", "latency"),
    "bandwidth test": ("osu_bw", "bandwidth"),
    "bi-directional bandwidth test": ("osu_bibw", "bandwidth"),
    "multiple bandwidth / message rate test": ("osu_mbw_mr", "bandwidth"),
    "multi latency test": ("osu_multi_lat", "latency"),
    "multi-process latency test": ("osu_latency_mp", "latency"),
    "multi-threaded latency test": ("osu_latency_mt", "latency"),
    "latency persistent test": ("osu_latency_persistent", "latency"),
    "bandwidth persistent test": ("osu_bw_persistent", "bandwidth"),
    "bi-directional bandwidth persistent test": ("osu_bibw_persistent", "bandwidth"),
    "all-to-all personalized exchange latency test": ("osu_alltoall", "latency"),
    "all-to-allv personalized exchange latency test": ("osu_alltoallv", "latency"),
    "all-to-allw personalized exchange latency test": ("osu_alltoallw", "latency"),
    "hello world test": ("osu_hello", None),
    "init test": ("osu_init", None),
    "put latency test": ("osu_put_latency", "latency"),
    "get latency test": ("osu_get_latency", "latency"),
    "accumulate latency test": ("osu_acc_latency", "latency"),
    "get_accumulate latency test": ("osu_get_acc_latency", "latency"),
    "compare_and_swap latency test": ("osu_cas_latency", "latency"),
    "fetch_and_op latency test": ("osu_fop_latency", "latency"),
    "put bandwidth test": ("osu_put_bw", "bandwidth"),
    "put bi-directional bandwidth test": ("osu_put_bibw", "bandwidth"),
    "get bandwidth test": ("osu_get_bw", "bandwidth"),
    "get multi latency test": ("osu_get_multi_lat", "latency"),
    "get multiple bandwidth bandwidth test": ("osu_get_mbw", "bandwidth"),
}
for _coll, _prog in {
    "allgather": "allgather", "allgatherv": "allgatherv", "allreduce": "allreduce", "barrier": "barrier",
    "broadcast": "bcast", "gather": "gather", "gatherv": "gatherv", "reduce": "reduce",
    "reduce_scatter": "reduce_scatter", "reduce_scatter_block": "reduce_scatter_block", "scatter": "scatter",
    "scatterv": "scatterv",
}.items():  # fmt: skip
    OMB[f"{_coll} latency test"] = (f"osu_{_prog}", "latency")
    OMB[f"{_coll} persistent latency test"] = (f"osu_{_prog}_persistent", "latency")
    OMB[f"non-blocking {_coll} latency test"] = (f"osu_i{_prog}", "latency")
OMB["non-blocking all-to-all latency test"] = ("osu_ialltoall", "latency")
for _x, _p in (("", ""), ("v", "v"), ("w", "w")):
    OMB[f"all-to-all{_x} personalized exchange persistent latency test"] = (f"osu_alltoall{_p}_persistent", "latency")
    if _x:
        OMB[f"non-blocking all-to-all{_x} personalized exchange latency test"] = (f"osu_ialltoall{_p}", "latency")
del OMB["reduce_scatter_block persistent latency test"]  # OMB 7.4 has no such program
# Programs whose title another prints too (osu_bw's "Bandwidth Test"): listed, never imported by title
OMB_UNTITLED = {"osu_bw_fan_in": "bandwidth", "osu_bw_fan_out": "bandwidth"}
for _nb in ("allgather", "allgatherv", "alltoall", "alltoallv", "alltoallw"):
    OMB[f"neighborhood {_nb} latency test"] = (f"osu_neighbor_{_nb}", "latency")
    OMB[f"non-blocking neighborhood {_nb} latency test"] = (f"osu_ineighbor_{_nb}", "latency")
OMB["neighborhood all-to-allv latency test"] = ("osu_neighbor_alltoallv", "latency")  # 7.4's own spelling
# osu_neighbor_alltoallw prints osu_alltoallw's title; its output alone says it built a topology
NEIGHBOR_PREAMBLE = "topology graph"
OMB_CREDIT = {"osu_bibw": 2, "osu_bibw_persistent": 2, "osu_put_bibw": 2}
ACCELERATORS = ("cuda", "rocm", "openacc", "sycl", "ze")


# OMB's default message sizes (its -m), by what the program measures
OMB_SIZES = {"latency": "0-4M", "bandwidth": "1-4M", "collective": "1-1M", "one-sided": "1-4M"}
ONE_SIDED_LOOP = {"loop": "osu", "min-count": "10000", "max-count": "10000"}  # docs/rma.md


@dataclass(frozen=True)
class OsuSetting:
    osu: str  # the OMB program
    test: str | None  # the SCOPE test with its definition (a descriptor's peer role), or None
    params: dict[str, str] = field(default_factory=dict)  # -p NAME=VALUE
    options: dict[str, str] = field(default_factory=dict)  # engine options, e.g. loop=osu
    sizes: str | None = None  # OMB's default sizes
    note: str = ""

    def as_dict(self) -> dict:
        return {"osu": self.osu, "test": self.test, "params": self.params, "options": self.options,
                "sizes": self.sizes, "note": self.note}  # fmt: skip


_STREAM = {"window": "64", "receive": "one"}
# OMB's collectives: each rank's call timed alone, a barrier after it, the mean over ranks of each
# rank's mean (`--timing osu`); a fixed root 0; reductions over MPI_CHAR (OMB's default -T)
# and OMB's 1,000 iterations (it runs 100 above 8 KiB): a mean over a whole second of repetitions
# collects the machine's rare long stalls that OMB's millisecond of them mostly misses
_COLL_TIMING = {"timing": "osu", "min-count": "1000", "max-count": "1000"}
_COLL_NOTE = "OMB's timing (each rank's call between barriers, the mean over ranks): read the mean"
_ROOTED = ("bcast", "gather", "reduce", "scatter")
# OMB's non-blocking collectives print Overall (start + a computation as long as the pure call +
# wait), Compute, Pure Comm. and Overlap: SCOPE's -p nonblocking=overlap, the same definition
_NB_NOTE = (
    "start, a computation as long as the pure call, wait (OMB's Overall, read the mean; the pure call is the "
    "reference samples, overlap in show), OMB's timing"
)
_NEIGHBOR_NOTE = "OMB's default stencil (1 dimension, radius 1, periodic), OMB's timing: read the mean"
_REDUCTIONS = ("allreduce", "reduce", "reduce_scatter_block", "reduce_scatter")
# program -> (params, options, note); the test comes from the descriptors' peer roles
SETTINGS: dict[str, tuple[dict, dict, str]] = {
    "osu_latency": (
        {"reply": "own"},
        {},
        "rank 1 replies from its own buffer, as OMB (SCOPE's default echoes the ping); SCOPE reports the median "
        "with its interval, OMB the mean (--loop osu for OMB's loop)",
    ),
    "osu_latency_persistent": (
        {"api": "persistent", "reply": "own"},
        {},
        "persistent requests; rank 0 sends, then receives; rank 1 replies from its own buffer",
    ),
    "osu_bw": (_STREAM, {}, "a window of 64 received into one buffer, as osu_bw"),
    "osu_bibw": (_STREAM, {}, "a window of 64 each way, received into one buffer, as osu_bibw"),
    "osu_bw_persistent": (
        _STREAM | {"api": "persistent"},
        {},
        "a window of 64 persistent sends (MPI_Startall) received into one buffer",
    ),
    "osu_bibw_persistent": (
        _STREAM | {"api": "persistent"},
        {},
        "a window of 64 persistent sends each way (MPI_Startall), received into one buffer",
    ),
    "osu_mbw_mr": (
        _STREAM,
        {"procs": "all"},
        "window-timed over all pairs (aggregate); OMB times pairs between barriers",
    ),
    "osu_latency_mt": (
        {"threads": "2", "reply": "own"},
        {"thread-level": "multiple", "loop": "osu", "min-count": "10000", "max-count": "10000"},
        "1 sending thread, 2 serving threads (OMB's default -t 2) under MPI_THREAD_MULTIPLE; OMB's loop: read "
        "the mean; other counts: -p sender_threads=M -p threads=N",
    ),
    "osu_multi_lat": (
        {"pairs": "halves", "reply": "own"},
        {"timing": "osu", "min-count": "10000", "max-count": "10000"},
        "pairs (i, i + N/2), each round trip after a barrier, the mean over the senders (OMB's timing): read the mean",
    ),
    "osu_put_latency": (
        {"window": "1"},
        ONE_SIDED_LOOP,
        "OMB's loop (two MPI_Wtime reads an iteration): read the mean",
    ),
    "osu_get_latency": (
        {"window": "1"},
        ONE_SIDED_LOOP,
        "OMB's loop (two MPI_Wtime reads an iteration): read the mean",
    ),
    "osu_acc_latency": ({"window": "1", "type": "float"}, ONE_SIDED_LOOP, "floats, as osu_acc_latency -T mpi_float"),
    "osu_get_acc_latency": ({"window": "1"}, ONE_SIDED_LOOP, "OMB's loop: read the mean"),
    "osu_fop_latency": ({"window": "1"}, ONE_SIDED_LOOP, "OMB's loop: read the mean"),
    "osu_cas_latency": ({"window": "1"}, ONE_SIDED_LOOP, "OMB's loop: read the mean"),
    "osu_put_bw": (
        {"window": "16"},
        {"loop": "osu"},
        "a window of 16: SCOPE caps a window at 16 MiB, run OMB with -W 16",
    ),
    "osu_get_bw": (
        {"window": "16"},
        {"loop": "osu"},
        "a window of 16: SCOPE caps a window at 16 MiB, run OMB with -W 16",
    ),
}
for _c in ("allgather", "allreduce", "alltoall", "barrier", "bcast", "gather", "reduce", "reduce_scatter_block",
           "scatter", "allgatherv", "alltoallv", "gatherv", "scatterv", "alltoallw", "reduce_scatter"):  # fmt: skip
    _p = {"root": "0"} if _c.rstrip("v") in _ROOTED else {}
    _p |= {"dtype": "char"} if _c in _REDUCTIONS else {}
    _p |= {"blocks": "even"} if _c.endswith("v") or _c == "reduce_scatter" else {}  # OMB's blocks are whole
    _p |= {"call": "alltoallw"} if _c == "alltoallw" else {}
    SETTINGS[f"osu_{_c}"] = (_p, _COLL_TIMING, _COLL_NOTE)
    SETTINGS[f"osu_{_c}_persistent"] = (
        _p | {"api": "persistent"},
        _COLL_TIMING,
        "MPI-4 persistent requests (MPI_..._init once, MPI_Start + MPI_Wait), OMB's timing: read the mean",
    )
    SETTINGS[f"osu_i{_c}"] = (_p | {"nonblocking": "overlap"}, _COLL_TIMING, _NB_NOTE)
for _c, _t, _call in (("allgather", "allgather", "allgather"), ("allgatherv", "allgather", "allgatherv"),
                      ("alltoall", "alltoall", "alltoall"), ("alltoallv", "alltoall", "alltoallv"),
                      ("alltoallw", "alltoall", "alltoallw")):  # fmt: skip
    _p = {} if _call == _t else {"call": _call}
    SETTINGS[f"osu_neighbor_{_c}"] = (_p, _COLL_TIMING, _NEIGHBOR_NOTE)
    SETTINGS[f"osu_ineighbor_{_c}"] = (_p | {"nonblocking": "overlap"}, _COLL_TIMING, _NB_NOTE)
WHY_NOT = {
    "osu_latency_mp": "several processes a side: not measured by SCOPE yet",
    "osu_put_bibw": "a bidirectional put: not measured by SCOPE",
    "osu_get_mbw": "a multi-pair get: not measured by SCOPE",
    "osu_get_multi_lat": "a multi-pair get latency: not measured by SCOPE",
    "osu_hello": "no time per size",
    "osu_bw_fan_in": "congestion: several senders streaming to one rank at once; not measured by SCOPE yet "
    "(p2p.pattern sends a user's pattern concurrently, without OMB's windows)",
    "osu_bw_fan_out": "congestion: one rank streaming to several at once; not measured by SCOPE yet",
    "osu_init": "no time per size",
}


def _why_not(program: str) -> str:
    if program in WHY_NOT:
        return WHY_NOT[program]
    if program.endswith("_persistent"):
        return "MPI-4 persistent requests: not measured by SCOPE yet"
    if "neighbor" in program:
        return "neighbourhood collectives: not measured by SCOPE yet"
    if program.startswith("osu_i"):
        return "OMB's non-blocking collectives report overall, compute and overlap; SCOPE's -p nonblocking=yes differs"
    return "no SCOPE test with its definition"


def peer_names(infos) -> dict[str, str]:
    """{peer benchmark, lower case: SCOPE test} from the descriptors' `peer:` roles; OMB's
    non-blocking collectives (osu_i<op>) are measured by their blocking program's test, with
    -p nonblocking=overlap (SETTINGS), so a descriptor need not name both."""
    peers = {r.split(":", 1)[1].lower(): t.name for t in infos for r in t.roles if r.startswith("peer:")}
    for program, (params, _, _) in SETTINGS.items():
        blocking = program.replace("osu_i", "osu_", 1)
        if params.get("nonblocking") and program not in peers and blocking in peers:
            peers[program] = peers[blocking]
    return peers


def osu_settings(peers: dict[str, str]) -> list[OsuSetting]:
    """Every OMB 7.4 CPU program (accelerator variants are the same programs on device memory,
    which SCOPE does not measure), with its SCOPE setting or why there is none; `peers` is
    {program: test} from the descriptors' roles (store.importers.peer_names)."""
    out = []
    for program, kind in sorted(set(OMB.values()) | set(OMB_UNTITLED.items())):
        test = peers.get(program)
        setting = SETTINGS.get(program)
        if test is None or setting is None:
            why = _why_not(program) if setting is None else "the engine names no test its peer (an older engine?)"
            out.append(OsuSetting(program, None, note=why))
            continue
        params, options, note = setting
        size_kind = "collective" if test.startswith("coll.") else "one-sided" if test.startswith("rma.") else kind
        sizes = None if test == "coll.barrier" else OMB_SIZES.get(size_kind or "latency")
        out.append(OsuSetting(program, test, dict(params), dict(options), sizes, note))
    return out
