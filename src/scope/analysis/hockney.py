"""Hockney's model of a message transfer (SCOPE §6.5.3, eqs. 6.11-6.13):

    t(n) = t0 + n / r_inf,     n_half = t0 * r_inf,     r(n) = r_inf / (1 + n_half / n)

fitted by least squares on *relative* residuals (weights 1/t^2): an ordinary fit on absolute
times is ruled by the largest messages and can make t0 negative, while latency is what the
small sizes are for.  Times in microseconds and sizes in bytes give r_inf in bytes/us = MB/s."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass
class HockneyFit:
    t0_us: float
    rinf_MBps: float
    nhalf_bytes: float
    points: int
    # (measured - model) / model, per point, and the points' sizes: arrays (a fit of a million
    # imported points held 70 MB of them as lists)
    residuals: np.ndarray = field(default_factory=lambda: np.zeros(0))
    sizes: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    r2: float = float("nan")  # on log times

    @property
    def max_abs_residual(self) -> float:
        return float(np.max(np.abs(self.residuals))) if len(self.residuals) else float("nan")

    def by_size(self) -> dict[int, float]:
        """Each size's residual (of the last point at a size measured more than once)."""
        return dict(zip(self.sizes.tolist(), self.residuals.tolist()))

    def predict_us(self, n: float) -> float:
        return self.t0_us + n / self.rinf_MBps

    def as_dict(self) -> dict:
        return {
            "t0_us": self.t0_us,
            "rinf_MBps": self.rinf_MBps,
            "nhalf_bytes": self.nhalf_bytes,
            "points": self.points,
            "max_abs_residual": self.max_abs_residual,
            "r2": self.r2,
            "residuals": self.by_size(),
        }


def unphysical(t0_us: float | None, rinf_MBps: float | None) -> str | None:
    """Why a fitted t0 or r_inf cannot describe a transfer (a negative start-up time or rate),
    or None.  Such a fit bends to noise or to a protocol switch inside its range."""
    if t0_us is not None and t0_us < 0:
        return "negative t0"
    if rinf_MBps is not None and rinf_MBps <= 0:
        return "r_inf not positive"
    return None


def usable(sizes, times_us) -> tuple[np.ndarray, np.ndarray]:
    """Sizes and times (float arrays) of the points with a size and a positive finite time;
    None reads as NaN, so lists and arrays alike are sifted without a Python step per point."""
    n = np.asarray(sizes, dtype=float)
    t = np.asarray(times_us, dtype=float)
    with np.errstate(invalid="ignore"):
        ok = np.isfinite(t) & (t > 0) & np.isfinite(n)
    return n[ok], t[ok]


def fit_hockney(sizes, times_us) -> HockneyFit | None:
    """Fit t = t0 + n/r_inf.  None when the data cannot determine both parameters (fewer than
    three points, fewer than two distinct sizes, or a time that does not grow with size)."""
    n, t = usable(sizes, times_us)
    if len(t) < 3 or np.all(n == n[0]):
        return None
    a = np.column_stack([np.ones_like(n), n]) / t[:, None]
    coef, *_ = np.linalg.lstsq(a, np.ones_like(t), rcond=None)
    t0, inv_r = float(coef[0]), float(coef[1])
    if not inv_r > 0:
        return None
    model = t0 + n / (1.0 / inv_r)
    resid = (t - model) / model
    lt, lm = np.log(t), np.log(np.maximum(model, 1e-12))
    ss_tot = float(np.sum((lt - lt.mean()) ** 2))
    r2 = 1.0 - float(np.sum((lt - lm) ** 2)) / ss_tot if ss_tot > 0 else float("nan")
    rinf = 1.0 / inv_r
    return HockneyFit(
        t0_us=t0,
        rinf_MBps=rinf,
        nhalf_bytes=t0 * rinf,
        points=len(t),
        residuals=resid,
        sizes=n.astype(np.int64),
        r2=r2,
    )
