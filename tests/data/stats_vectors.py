"""Writes stats_vectors.txt: sample vectors and their summary statistics, the truth that the
engine's core/stats.c (engine/unit/test_core.c) and the front end's analysis/stats.py
(tests/test_stats.py) are both held to.  The figures come from neither: quantiles from
numpy's type-7 interpolation, the median's interval from scipy's binomial distribution
(exact, n <= 1000) or Le Boudec's normal approximation (n > 1000), written as the text the
tests read.  Rerun only to add a vector; the file is the reference.

    .venv/bin/python tests/data/stats_vectors.py
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
from scipy.stats import binom

FIELDS = "n min max mean sd median p5 p25 p75 p95 p99 ci_lo ci_hi ci_rel".split()


def ranks(n: int):
    if n < 6:
        return None
    if n > 1000:
        r = math.sqrt(n)
        return max(1, math.floor(n / 2 - 0.98 * r)), min(n, math.ceil(n / 2 + 1 + 0.98 * r))
    j = 0
    while binom.cdf(j, n, 0.5) <= 0.025:  # P(B <= j) <= 0.025: x_(j+1) may bound it
        j += 1
    return (j, n + 1 - j) if j >= 1 else None


def truth(x: list[float]) -> list[float]:
    a = np.sort(np.asarray(x, dtype=float))
    n = len(a)
    if n == 0:
        return [0] + [math.nan] * 13
    q = np.quantile(a, [0.5, 0.05, 0.25, 0.75, 0.95, 0.99])
    rk = ranks(n)
    lo, hi = (a[rk[0] - 1], a[rk[1] - 1]) if rk else (math.nan, math.nan)
    med = q[0]
    rel = max(med - lo, hi - med) / med if rk and med > 0 else math.nan
    sd = a.std(ddof=1) if n > 1 else math.nan
    return [n, a[0], a[-1], a.mean(), sd, med, *q[1:], lo, hi, rel]


def vectors() -> list[tuple[str, list[float]]]:
    rng = np.random.default_rng(42)
    lognormal = [float(f"{v:.6g}") for v in rng.lognormal(1.0, 0.3, 100)]
    big = [float(f"{v:.6g}") for v in rng.gamma(4.0, 2.0, 1001)]
    return [
        ("none", []),
        ("one sample", [5.25]),
        ("two", [2.0, 1.0]),
        ("five: no interval yet", [3.0, 1.0, 4.0, 1.5, 9.0]),
        ("six: the first interval", [6.0, 5.0, 4.0, 3.0, 2.0, 1.0]),
        ("all equal", [3.0] * 7),
        ("ten, ties and a tail", [1.0, 1.0, 1.1, 1.2, 1.2, 1.3, 1.4, 2.0, 9.5, 1.2]),
        ("zeros: no relative width", [0.0] * 8),
        ("negative: no relative width", [-3.0, -2.0, -1.5, -1.0, -0.5, -0.25, -0.1]),
        ("100 log-normal", lognormal),
        ("1001 gamma: the normal approximation", big),
    ]


def main() -> None:
    here = Path(__file__).resolve().parent
    lines = [
        "# Summary statistics the engine (core/stats.c) and the front end (analysis/stats.py) must both give:",
        "# NAME <tab> SAMPLES (comma-separated, '-' for none) <tab> " + " ".join(FIELDS) + " ('nan': undefined).",
        "# Written by stats_vectors.py (numpy quantiles, scipy's binomial): neither implementation's output.",
    ]
    for name, x in vectors():
        vals = " ".join("nan" if isinstance(v, float) and math.isnan(v) else f"{float(v):.17g}" for v in truth(x))
        lines.append(f"{name}\t{','.join(f'{v:.17g}' for v in x) or '-'}\t{vals}")
    (here / "stats_vectors.txt").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
