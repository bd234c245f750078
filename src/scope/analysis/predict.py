"""Predicting a kernel's time from the lower levels (SCOPE §7.6.4, App. F): T_comp from the
node level's rates (node.dgemm for the multiplies, node.stream for memory-bound sweeps and
copies), T_comm from the point-to-point Hockney parameters (t0, r_inf) through the standard
cost formulas of the collectives MPICH uses (Thakur, Rabenseifner & Gropp 2005), or the
fitted SCOPE broadcast model where the run has one.  With L = ceil(log2 p), a = t0,
b = 1 / r_inf (us per byte):

    point-to-point   a + m b
    broadcast        L (a + m b) below 12 KiB; (L + p - 1) a + 2 (p - 1) / p m b above
                     (binomial tree; scatter + ring allgather, van de Geijn)
    scatter, gather  L a + (p - 1) / p M b   (binomial; M the bytes of all blocks)
    all-to-all       (p - 1) (a + m b)       (pairwise exchange; m a piece)

Every prediction lists the inputs it used and the runs they came from (inputs.py gathers them);
a missing input names the command that would measure it.  Pure functions: the store is read by
the caller."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from scope.analysis.collectives import CollectiveModel
from scope.analysis.commcost import Cost, Missing
from scope.catalog.names import CANNON, JACOBI, MATMUL, MULTIGRID, PSRS

# bytes a grid-point update moves when the grids live in memory: Jacobi reads u and writes v
# (and its write-allocate read); a multigrid smoothing step reads g as well
UPDATE_BYTES = {JACOBI: 24.0, MULTIGRID: 32.0}
UPDATE_GRIDS = {JACOBI: 2, MULTIGRID: 4 * 4 / 3}  # a rank's grids, in finest grids
KERNELS = (MATMUL, CANNON, JACOBI, MULTIGRID, PSRS)
OWN_RATE = (JACOBI, MULTIGRID, PSRS)  # whose compute rate is one rank's own


@dataclass
class Rate:
    value: float  # per rank: GFLOP/s, MB/s, or ns per key and level of a comparison sort
    at: str  # what it was measured at, e.g. "n=1024 procs=1"
    run: int


@dataclass
class Inputs:
    """What a prediction draws on, each with the run it came from."""

    t0_us: float | None = None
    rinf_MBps: float | None = None
    hockney_run: int | None = None
    dgemm: list[tuple[int, int, Rate]] = field(default_factory=list)  # (n, procs, GFLOP/s per rank)
    stream: dict[str, list[tuple[int, Rate]]] = field(default_factory=dict)  # kernel -> (procs, MB/s per rank)
    sort: Rate | None = None  # kernel.psrs on one rank: ns per key per level (n log2 n)
    # a relaxation on one rank: kernel -> (n, ns a grid-point update)
    update: dict[str, list[tuple[int, Rate]]] = field(default_factory=dict)
    llc_bytes: float | None = None  # a node's last-level cache (node.stream's record)
    bcast: CollectiveModel | None = None
    bcast_run: int | None = None
    cores: int | None = None  # cores a node: ranks beyond share nothing more
    one_host: bool = False  # every rank on one host of `cores` cores (a measured run's points)
    l2_bytes: float | None = None  # a core's own L2 (the measured run's node): what sharing does not touch
    rule: str = ""  # how the inputs were chosen (inputs.RULE), kept with a frozen prediction


@dataclass
class Prediction:
    test: str
    setting: dict
    procs: int
    init_us: float = 0.0
    comp_us: float = 0.0
    comm_us: float = 0.0
    used: list[str] = field(default_factory=list)
    missing: str | None = None  # the command that would measure what is missing
    # inputs taken at the nearest measured process count, not the one the point needs: the
    # command that would measure the matching one
    lacking: list[str] = field(default_factory=list)

    @property
    def total_us(self) -> float:
        return self.init_us + self.comp_us + self.comm_us

    def error(self, measured_us: float | None) -> float | None:
        """(predicted - measured) / measured; None without either."""
        if self.missing or not measured_us or not math.isfinite(measured_us):
            return None
        return (self.total_us - measured_us) / measured_us


def _nearest(items, want: float, key):
    return min(items, key=lambda it: abs(math.log(max(key(it), 1) / max(want, 1))))


def _dgemm(out: Prediction, inp: Inputs, n: float, per_node: int) -> Rate:
    if not inp.dgemm:
        raise Missing("scope run node.dgemm -p n=256,512,1024 --procs 1,all")
    procs = _nearest({d[1] for d in inp.dgemm}, per_node, key=lambda x: x)
    _lacks(out, procs, per_node, f"node.dgemm -p n={int(n)}")
    return _nearest([d for d in inp.dgemm if d[1] == procs], n, key=lambda d: d[0])[2]


def _stream(out: Prediction, inp: Inputs, kernel: str, per_node: int) -> Rate:
    have = inp.stream.get(kernel)
    if not have:
        raise Missing(f"scope run node.stream -p kernel={kernel} --procs 1,all")
    procs, rate = _nearest(have, per_node, key=lambda s: s[0])
    _lacks(out, procs, per_node, f"node.stream -p kernel={kernel}")
    return rate


def _lacks(out: Prediction, got: int, want: int, run: str) -> None:
    """A node input measured with other than the ranks a point puts on a node (ranks sharing a
    node's memory and caches change its rate): named, with the run that would measure it."""
    if got != want:
        out.lacking.append(f"scope run -n {want} {run} --procs {want} (used procs={got}, the nearest measured)")


def predict(test: str, setting: dict, procs: int, inp: Inputs) -> Prediction:
    """The cost model of one kernel at one process count, for a setting with every parameter
    (the descriptor's defaults filled in); `missing` is set, and the times are left at 0, when
    an input is not stored."""
    out = Prediction(test, dict(setting), procs)
    if test not in _MODELS:
        out.missing = f"no cost model for {test}: SCOPE predicts {', '.join(KERNELS)}"
        return out
    try:
        _MODELS[test](out, setting, procs, inp)
    except Missing as m:
        out.missing = str(m)
        return out
    if inp.one_host and inp.cores and procs > inp.cores:
        # Ranks sharing cores take turns, for their copies as for their compute: a message
        # within a node is a copy done by the ranks, so T_comm stretches as T_comp does
        # (measured: 4 ranks on 2 cores spent 4.4-6.8 ms in matmul's scatter and broadcast
        # that one rank a core does in 1 ms, bench/results/kernels.md)
        share = procs / inp.cores
        out.comp_us *= share
        out.init_us *= share
        out.comm_us *= share
        out.used.append(f"{procs} ranks on {inp.cores} cores: each computes and copies {inp.cores}/{procs} of the time")
    return out


def _per_node(inp: Inputs, p: int) -> int:
    return min(p, inp.cores) if inp.cores else p


def _matmul(out: Prediction, s: dict, p: int, inp: Inputs) -> None:
    n = float(s["n"])
    cost = _cost(inp)
    d = _dgemm(out, inp, n, _per_node(inp, p))
    rows = math.ceil(n / p)  # the slowest rank's block
    out.comp_us = 2 * rows * n * n / (d.value * 1e3)
    whole = 8 * n * n
    out.comm_us = 2 * cost.scatter(whole, p) + cost.bcast(whole, p)
    out.used += [f"DGEMM {d.value:.3g} GFLOP/s a rank (node.dgemm {d.at}, run {d.run})", _hockney(inp)]
    if s.get("split") == "col":  # rank 0 packs B's columns and unpacks C's
        c = _stream(out, inp, "copy", 1)
        out.init_us = 2 * 2 * whole / c.value
        out.used.append(f"copy {c.value:.4g} MB/s a rank (node.stream {c.at}, run {c.run})")


def _cannon(out: Prediction, s: dict, p: int, inp: Inputs) -> None:
    n = float(s["n"])
    q = math.isqrt(p)
    if q * q != p:
        raise Missing("Cannon's algorithm runs on a square number of ranks only")
    b = n / q
    cost = _cost(inp)
    d = _dgemm(out, inp, b, _per_node(inp, p))
    c = _stream(out, inp, "copy", _per_node(inp, p))
    out.comp_us = 2 * n * n * n / p / (d.value * 1e3)
    shifts = 2 * (q - 1) + (2 if q > 1 else 0)
    out.comm_us = shifts * cost.p2p(8 * b * b) if q > 1 else 0.0
    out.init_us = 2 * 2 * 8 * b * b / c.value
    out.used += [f"DGEMM {d.value:.3g} GFLOP/s a rank (node.dgemm {d.at}, run {d.run})", _hockney(inp)]


def _update_ns(out: Prediction, test: str, n: float, p: int, grid_bytes: float, inp: Inputs) -> float:
    """A roofline for a relaxation's grid-point update: the time one rank alone needs for it
    (the kernel's own run on one rank), or, when a rank's grids overflow its share of the
    last-level cache, the time its share of memory bandwidth needs for UPDATE_BYTES (node.stream
    triad), the longer."""
    per_node = _per_node(inp, p)
    t = _stream(out, inp, "triad", per_node)
    ns = 0.0
    if inp.update.get(test):
        u = _nearest(inp.update[test], n, key=lambda x: x[0])[1]
        ns = u.value
        out.used.append(f"an update {u.value:.3g} ns on one rank ({test} {u.at}, run {u.run})")
    if not inp.update.get(test) or (inp.llc_bytes and grid_bytes > inp.llc_bytes / per_node):
        ns = max(ns, UPDATE_BYTES[test] / t.value * 1e3)
        out.used.append(
            f"triad {t.value:.4g} MB/s a rank (node.stream {t.at}, run {t.run}), {UPDATE_BYTES[test]:g} B an update"
        )
    out.init_us = 2 * 2 * grid_bytes / UPDATE_GRIDS[test] / t.value  # two grids copied from the initial one
    return ns


def _memory_share(out: Prediction, inp: Inputs, per_node: int) -> float:
    """How much slower a memory-bound step of one rank runs when `per_node` ranks share a
    node's memory: triad's rate on one rank over its rate a rank with `per_node` (1 without
    both).  A sort of 8 MiB a rank is memory-bound: on this VM 2 ranks sorted 1.65x slower a
    key than 1, where triad a rank fell 1.58x (bench/results/kernels.md)."""
    have = dict(inp.stream.get("triad") or [])
    if per_node > 1 and have and per_node not in have:
        out.lacking.append(f"scope run -n {per_node} node.stream -p kernel=triad --procs 1,{per_node} (memory shared "
                           f"by {per_node} ranks a node: not taken into account without it)")  # fmt: skip
    if per_node <= 1 or 1 not in have or per_node not in have:
        return 1.0
    one, shared = have[1], have[per_node]
    out.used.append(
        f"memory shared by {per_node} ranks a node: triad {shared.value:.4g} against {one.value:.4g} MB/s a rank "
        f"(node.stream {shared.at}, run {shared.run})"
    )
    return max(1.0, one.value / shared.value)


def _cost(inp: Inputs) -> Cost:
    return Cost(inp.t0_us, inp.rinf_MBps, inp.bcast)


def _halo(cost: Cost, p: int, row_bytes: float) -> float:
    """One halo exchange: a row to and from each neighbour, the two directions at once."""
    return (0 if p == 1 else (1 if p == 2 else 2)) * cost.p2p(row_bytes)


def _jacobi(out: Prediction, s: dict, p: int, inp: Inputs) -> None:
    n, iters = float(s["n"]), float(s["iters"])
    cost = _cost(inp)
    rows = math.ceil(n / p)
    ns = _update_ns(out, JACOBI, n, p, UPDATE_GRIDS[JACOBI] * 8 * (rows + 2) * (n + 2), inp)
    out.comp_us = iters * rows * n * ns * 1e-3
    out.comm_us = iters * _halo(cost, p, 8 * (n + 2))
    out.used.append(_hockney(inp))


def mg_levels(n: int, asked: int = 0) -> list[int]:
    """The intervals a side of each multigrid level (kernel.multigrid's rule): N = n + 1, halved
    while it stays even and the coarser grid keeps an interior point."""
    out = [n + 1]
    while len(out) < 30 and out[-1] % 2 == 0 and out[-1] // 2 >= 2 and (not asked or len(out) < asked):
        out.append(out[-1] // 2)
    return out


def _mg_rows(N0: int, p: int, levels: int) -> list[int]:
    """The most interior rows any rank holds at each level (a coarse row goes with the fine row
    under it, as the engine splits them)."""
    most = [0] * levels
    for r in range(p):
        k, extra = divmod(N0 - 1, p)
        lo = 1 + r * k + min(r, extra)
        hi = lo + k + (r < extra)
        for lev in range(levels):
            most[lev] = max(most[lev], hi - lo)
            lo, hi = (lo + 1) // 2, (hi + 1) // 2
    return most


def _multigrid(out: Prediction, s: dict, p: int, inp: Inputs) -> None:
    """V(nu, nu) cycles: at every level but the coarsest 2 nu smoothing sweeps, a residual and a
    prolongation over the fine points and a restriction over the coarse ones, with 2 nu + 3 halo
    exchanges; N sweeps (and halos) on the coarsest, N its intervals.  The slowest rank's rows set
    each level's time."""
    n, cycles, nu = int(s["n"]), float(s["cycles"]), int(s["nu"])
    Ns = mg_levels(n, int(s.get("levels") or 0))
    if len(Ns) < 2:
        raise Missing("kernel.multigrid needs n + 1 even (n = 2^k - 1)")
    cost = _cost(inp)
    rows = _mg_rows(Ns[0], p, len(Ns))
    ns = _update_ns(out, MULTIGRID, n, p, UPDATE_GRIDS[MULTIGRID] * 8 * (rows[0] + 2) * (n + 2), inp)
    visits = halos = 0.0
    for lev, N in enumerate(Ns):
        if lev + 1 < len(Ns):
            visits += (2 * nu + 2) * rows[lev] * (N - 1) + rows[lev + 1] * (Ns[lev + 1] - 1)
            halos += (2 * nu + 2) * _halo(cost, p, 8 * (N + 1)) + _halo(cost, p, 8 * (N // 2 + 1))
        else:
            visits += N * rows[lev] * (N - 1)
            halos += N * _halo(cost, p, 8 * (N + 1))
    out.comp_us = cycles * visits * ns * 1e-3
    out.comm_us = cycles * halos
    out.used.append(_hockney(inp))


def _psrs(out: Prediction, s: dict, p: int, inp: Inputs) -> None:
    n = float(s["n"])
    cost = _cost(inp)
    if not inp.sort:
        raise Missing("scope run kernel.psrs --procs 1 (its sort rate on one rank)")
    k = math.ceil(n / p)
    # The rate was measured on one rank; ranks that share a node's memory slow a sort whose keys
    # live there, not one whose keys stay in each core's own L2 (2^20 keys on 16 ranks: 512 KiB a
    # rank; the memory term once doubled that point's prediction, issue 40).
    if inp.l2_bytes and 8 * k <= inp.l2_bytes:
        share = 1.0
        out.used.append(f"keys of a rank ({8 * k / 1024:.0f} KiB) within its core's L2 ({inp.l2_bytes / 1024:.0f} KiB)")
    else:
        share = _memory_share(out, inp, _per_node(inp, p))
    c = inp.sort.value * 1e-3 * share  # us per key per level
    out.comp_us = c * (k * math.log2(max(k, 2)) + k * math.log2(max(p, 1)) + p * p * math.log2(max(p * p, 2)))
    out.comm_us = 2 * cost.scatter(8 * p * p, p) + cost.bcast(8 * (p - 1), p) + cost.alltoall(8 * n / (p * p), p)
    sort = f"sort {inp.sort.value:.3g} ns a key and level (kernel.psrs {inp.sort.at}, run {inp.sort.run})"
    out.used += [sort, _hockney(inp)]


def _hockney(inp: Inputs) -> str:
    return f"Hockney t0 {inp.t0_us:.3g} us, r_inf {inp.rinf_MBps:.4g} MB/s (p2p.pingpong, run {inp.hockney_run})"


_MODELS = {
    MATMUL: _matmul,
    CANNON: _cannon,
    JACOBI: _jacobi,
    MULTIGRID: _multigrid,
    PSRS: _psrs,
}


def counts(test: str, top: int = 10000) -> list[int]:
    """Process counts from 1 to `top` to predict at: powers of two, and squares for Cannon."""
    if test == CANNON:
        return [q * q for q in range(1, math.isqrt(top) + 1) if (q & (q - 1)) == 0 or q in (3, 6, 10, 30, 100)]
    return sorted({1 << e for e in range(int(math.log2(top)) + 1)} | {top})


def curve(test: str, setting: dict, inp: Inputs, top: int = 10000) -> list[Prediction]:
    """Predicted scalability from 1 rank to `top`: the counts that could be predicted."""
    preds = [predict(test, setting, p, inp) for p in counts(test, top)]
    return [x for x in preds if not x.missing]
