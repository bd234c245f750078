"""The inputs of a prediction (predict.py), chosen by one stated rule (RULE): the Hockney fit of
p2p.pingpong, node.dgemm's and node.stream's rates per rank, and the own-rate kernels' one-rank
rates (a grid-point update, a key sorted)."""

from __future__ import annotations

import math

from scope.analysis.hockney import fit_hockney
from scope.analysis.kernels import rate_of
from scope.analysis.predict import OWN_RATE, UPDATE_BYTES, Inputs, Rate
from scope.catalog.names import DGEMM, NODE_STREAM, PINGPONG, PSRS
from scope.model import Point, Run

RULE = (
    "same MPI library and hosts as the measured run; each lower test at its defaults (node.stream: arrays "
    "past STREAM's rule for the node); for node.dgemm and node.stream the procs a point needs, else the "
    "nearest measured; of those the newest run"
)


def gather_inputs(runs: list[Run], cores: int | None = None, l2_bytes: float | None = None) -> Inputs:
    """The inputs by RULE from `runs`, newest first (the measured run, then the candidates of its
    MPI and hosts, Store.candidates_for).  node.dgemm is kept per (n, procs) and node.stream per
    (kernel, procs), each from the newest run that has it: a newer run at other process counts
    adds its own and leaves the ones a point needs where they were, and a run whose points are
    not at their defaults adds nothing."""
    inp = Inputs(cores=cores, l2_bytes=l2_bytes, rule=RULE)
    seen: set[tuple] = set()

    def first(key: tuple) -> bool:
        new = key not in seen
        seen.add(key)
        return new

    for run in runs:
        pp = [p for p in run.points if p.test == PINGPONG and p.size and p.median and run.at_defaults(p)]
        if inp.t0_us is None and len(pp) >= 3:
            fit = fit_hockney([p.size for p in pp], [p.median for p in pp])
            if fit:
                inp.t0_us, inp.rinf_MBps, inp.hockney_run = fit.t0_us, fit.rinf_MBps, run.id
        for p in run.points:
            r, n = rate_of(p), int(p.params.get("n") or 0)
            if p.test == DGEMM and r and _defaults_but_n(run, p) and first((DGEMM, n, p.procs)):
                inp.dgemm.append((n, p.procs, Rate(r[0] / p.procs, f"n={n} procs={p.procs}", run.id)))
            elif p.test == NODE_STREAM and p.bw_median and _past_the_rule(p):
                k = str(p.params.get("kernel") or "triad")
                if first((NODE_STREAM, k, p.procs)):
                    inp.llc_bytes = inp.llc_bytes or p.extra.get("llc_bytes")
                    have = inp.stream.setdefault(k, [])
                    have.append((p.procs, Rate(p.bw_median / p.procs, f"{k} procs={p.procs}", run.id)))
            elif (comp := one_rank_comp(p)) and n > 1:
                at = f"n={n} procs=1"
                if p.test in UPDATE_BYTES:
                    if p.extra.get("updates") and first((p.test, n)):
                        have = inp.update.setdefault(p.test, [])
                        have.append((n, Rate(comp * 1e3 / p.extra["updates"], at, run.id)))
                elif p.test == PSRS and inp.sort is None:
                    inp.sort = Rate(comp * 1e3 / (n * math.log2(n)), at, run.id)
    return inp


def _defaults_but_n(run: Run, p: Point) -> bool:
    """node.dgemm at its defaults but for its order n, which is swept on purpose."""
    return run.info(p.test).off_default({k: v for k, v in p.params.items() if k != "n"}) == 0


def _past_the_rule(p: Point) -> bool:
    """A node.stream point whose arrays, over its ranks, are at least 4x the last-level cache
    they use: memory's rate, not the cache's (an explicit small array times the cache)."""
    arr, llc = p.extra.get("array_bytes"), p.extra.get("llc_bytes")
    return not arr or not llc or arr * max(p.procs, 1) >= 4 * llc


def one_rank_comp(p) -> float | None:
    """T_comp (us) of an own-rate kernel's point on one rank, its own rate's source, on the
    statistic the point's time is: the phases are means over the repetitions, T their median,
    and one slow mode (a 1.5x machine state in two of five repetitions) moves a mean, not a
    median; on one rank T is init + comp + comm, so comp is scaled by median / mean."""
    if p.test not in OWN_RATE or p.procs != 1 or not p.record.get("phases"):
        return None
    comp = (p.record["phases"].get("comp") or [None])[0]
    if comp is None or not p.median or not p.mean:
        return comp
    return comp * p.median / p.mean
