"""The communication costs a kernel's prediction charges (predict.py): the Hockney parameters of
the ping-pong through the cost formulas of the collectives MPICH uses (Thakur, Rabenseifner &
Gropp 2005), or the fitted SCOPE broadcast model where the run has one."""

from __future__ import annotations

import math

from scope.analysis.collectives import CollectiveModel

SHORT_BCAST = 12288  # bytes: MPICH's switch from the binomial tree to scatter + allgather


class Missing(Exception):
    """An input the prediction needs and no stored run has."""


class Cost:
    """Communication costs from the Hockney parameters (and the broadcast model)."""

    def __init__(self, t0_us: float | None, rinf_MBps: float | None, bcast: CollectiveModel | None):
        if t0_us is None or not rinf_MBps:
            raise Missing("scope run p2p.pingpong")
        self.a, self.b, self.model = t0_us, 1.0 / rinf_MBps, bcast

    def p2p(self, m: float) -> float:
        return self.a + m * self.b

    def bcast(self, m: float, p: int) -> float:
        if p <= 1:
            return 0.0
        L = math.ceil(math.log2(p))
        model = self.model
        if model and model.params:  # a fitted model (a refused one has none)
            q = model.params
            return q["t_oc"] + q["t_init"] * p + (q["t_s"] + q["t_w"] * m) * L
        if m < SHORT_BCAST:
            return L * self.p2p(m)
        return (L + p - 1) * self.a + 2 * (p - 1) / p * m * self.b

    def scatter(self, total: float, p: int) -> float:
        return 0.0 if p <= 1 else math.ceil(math.log2(p)) * self.a + (p - 1) / p * total * self.b

    def alltoall(self, piece: float, p: int) -> float:
        return 0.0 if p <= 1 else (p - 1) * self.p2p(piece)
