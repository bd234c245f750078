"""Student's t distribution, from scipy.special, loaded on the first call.

Importing scipy.special costs 0.17 s on the reference VM (it builds array-API wrappers for every
function), which every `scope` command would pay at start although only runs of two or more
launches and comparisons ask for a t quantile: a one-launch `scope run` and `scope list` never do.
"""

from __future__ import annotations

import lazy_loader

special = lazy_loader.load("scipy.special", suppress_warning=True)  # scipy itself is cheap to import


def t_quantile(df: float, p: float) -> float:
    """The p quantile of Student's t with df degrees of freedom."""
    return float(special.stdtrit(df, p))


def t_cdf(df: float, t: float) -> float:
    return float(special.stdtr(df, t))
