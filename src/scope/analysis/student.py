"""Student's t distribution, from scipy.special, loaded on the first call.

Importing scipy.special costs 0.17 s on the reference VM (it builds array-API wrappers for every
function), which every `scope` command would pay at start although only runs of two or more
launches and comparisons ask for a t quantile: a one-launch `scope run` and `scope list` never do.
"""

from __future__ import annotations

import functools
import importlib


@functools.lru_cache(maxsize=1)
def _special():
    """scipy.special, imported on the first call.  Python's import lock makes a second thread
    wait for the first's import to finish (lazy_loader's module proxy did not: the hub's threads
    met a half-made scipy.special, 'no attribute stdtr')."""
    return importlib.import_module("scipy.special")


def t_quantile(df: float, p: float) -> float:
    """The p quantile of Student's t with df degrees of freedom."""
    return float(_special().stdtrit(df, p))


def t_cdf(df: float, t: float) -> float:
    return float(_special().stdtr(df, t))
