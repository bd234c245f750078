"""The inputs of a prediction (predict.py), each the newest stored: the Hockney fit of
p2p.pingpong, node.dgemm's and node.stream's rates per rank, and the own-rate kernels' one-rank
rates (a grid-point update, a key sorted)."""

from __future__ import annotations

import math

from scope.analysis.hockney import fit_hockney
from scope.analysis.kernels import rate_of
from scope.analysis.predict import OWN_RATE, UPDATE_BYTES, Inputs, Rate
from scope.catalog.names import DGEMM, NODE_STREAM, PINGPONG, PSRS
from scope.model import Run


def gather_inputs(runs: list[Run], cores: int | None = None) -> Inputs:
    """The newest of each input in `runs` (newest first)."""
    inp = Inputs(cores=cores)
    for run in runs:
        pp = [p for p in run.points if p.test == PINGPONG and p.size and p.median and run.at_defaults(p)]
        if inp.t0_us is None and len(pp) >= 3:
            fit = fit_hockney([p.size for p in pp], [p.median for p in pp])
            if fit:
                inp.t0_us, inp.rinf_MBps, inp.hockney_run = fit.t0_us, fit.rinf_MBps, run.id
        for p in run.points:
            r, n = rate_of(p), int(p.params.get("n") or 0)
            if p.test == DGEMM and r and _newest(inp.dgemm, run.id):
                inp.dgemm.append((n, p.procs, Rate(r[0] / p.procs, f"n={n} procs={p.procs}", run.id)))
            elif p.test == NODE_STREAM and p.bw_median:
                inp.llc_bytes = inp.llc_bytes or p.extra.get("llc_bytes")
                k = str(p.params.get("kernel") or "triad")
                have = inp.stream.setdefault(k, [])
                if _newest(have, run.id):
                    have.append((p.procs, Rate(p.bw_median / p.procs, f"{k} procs={p.procs}", run.id)))
            elif (comp := one_rank_comp(p)) and n > 1:
                at = f"n={n} procs=1"
                if p.test in UPDATE_BYTES:
                    have = inp.update.setdefault(p.test, [])
                    if p.extra.get("updates") and _newest(have, run.id):
                        have.append((n, Rate(comp * 1e3 / p.extra["updates"], at, run.id)))
                elif p.test == PSRS and inp.sort is None:
                    inp.sort = Rate(comp * 1e3 / (n * math.log2(n)), at, run.id)
    return inp


def _newest(have: list[tuple], run_id: int) -> bool:
    """Whether entries may still come from this run: the input is empty or already its."""
    return all(entry[-1].run == run_id for entry in have)


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
