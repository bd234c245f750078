"""LogGP parameters from p2p.loggp's parametrised round trips (PRTT method of Netgauge;
Hoefler, Lichei, Rehm, IPDPS 2007).

Model used, with one overhead o for sender and receiver and an empty reply:
    PRTT(1, 0, s) = 4o + 2L + (s - 1) G          (s >= 1; the (s-1)G term is 0 at s = 0)
    PRTT(n, 0, s) = PRTT(1, 0, s) + (n - 1) (g + (s - 1) G)
    PRTT(n, d, s) = PRTT(1, 0, s) + (n - 1) (o + d)          for d >= g + (s - 1) G
so
    y(s) = (PRTT(n,0,s) - PRTT(1,0,s)) / (n - 1) = g + (s - 1) G   -> least squares over s
    o    = (PRTT(n,d,s) - PRTT(1,0,s)) / (n - 1) - d               at the smallest size
    L    = (PRTT(1,0,s_min) - 4o - (s_min - 1)^+ G) / 2
All times in microseconds; G in us/byte, so 1/G is MB/s and compares with Hockney's r_inf."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from scope.model import Point


@dataclass
class LogGP:
    L_us: float
    o_us: float
    g_us: float
    G_us_per_byte: float
    n: int
    sizes: list[int] = field(default_factory=list)
    o_by_size: dict[int, float] = field(default_factory=dict)
    gap_residual_max: float = float("nan")  # largest |relative residual| of the g + (s-1)G fit

    @property
    def bandwidth_MBps(self) -> float:
        return 1.0 / self.G_us_per_byte if self.G_us_per_byte > 0 else float("inf")

    def as_dict(self) -> dict:
        return {
            "L_us": self.L_us,
            "o_us": self.o_us,
            "g_us": self.g_us,
            "G_us_per_byte": self.G_us_per_byte,
            "1/G_MBps": self.bandwidth_MBps,
            "n": self.n,
            "o_by_size": self.o_by_size,
            "gap_residual_max": self.gap_residual_max,
        }


def fit_loggp_values(
    n: int, rtt: dict[int, float], burst: dict[int, float], delayed: dict[int, float], d: dict[int, float]
) -> LogGP | None:
    """rtt/burst/delayed map size -> PRTT median (us); d maps size -> the delay used (us)."""
    sizes = sorted(set(rtt) & set(burst))
    if len(sizes) < 2 or n < 2:
        return None
    s = np.array(sizes, dtype=float)
    y = np.array([(burst[k] - rtt[k]) / (n - 1) for k in sizes])
    x = np.maximum(s - 1.0, 0.0)
    a = np.column_stack([np.ones_like(x), x])
    (g, G), *_ = np.linalg.lstsq(a, y, rcond=None)
    model = g + G * x
    with np.errstate(divide="ignore", invalid="ignore"):
        resid = np.abs((y - model) / model)
    o_by = {k: (delayed[k] - rtt[k]) / (n - 1) - d[k] for k in sorted(set(delayed) & set(rtt) & set(d))}
    if not o_by:
        return None
    s_min = min(o_by)
    o = o_by[s_min]
    L = (rtt[s_min] - 4 * o - max(s_min - 1, 0) * G) / 2
    return LogGP(
        L_us=float(L),
        o_us=float(o),
        g_us=float(g),
        G_us_per_byte=float(G),
        n=n,
        sizes=sizes,
        o_by_size=o_by,
        gap_residual_max=float(np.nanmax(resid)) if len(resid) else float("nan"),
    )


def fit_loggp(points: list[Point]) -> list[LogGP]:
    """From a run's PRTT points (the test with the role model:loggp): one fit per burst length n."""
    by_n: dict[int, dict[str, dict[int, float]]] = {}
    delays: dict[int, dict[int, float]] = {}
    for p in points:
        n = int(p.params.get("n", 16))
        pattern = p.params.get("pattern")
        by_n.setdefault(n, {}).setdefault(pattern, {})[p.size] = p.median
        if pattern == "delayed":
            delays.setdefault(n, {})[p.size] = p.extra.get("d_us")
    rtt_any = {}
    for pats in by_n.values():
        rtt_any.update(pats.get("rtt", {}))
    fits = []
    for n, pats in sorted(by_n.items()):
        rtt = pats.get("rtt") or rtt_any  # PRTT(1,0,s) does not depend on n
        f = fit_loggp_values(
            n,
            rtt,
            pats.get("burst", {}),
            pats.get("delayed", {}),
            {k: v for k, v in delays.get(n, {}).items() if v is not None},
        )
        if f:
            fits.append(f)
    return fits
