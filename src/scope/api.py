"""The Python API: a results database as pandas DataFrames.

import scope
db = scope.open()                       # or scope.open("results.db")
db.runs()                               # one row per run
db.points(run=3)                        # one row per point, parameters as columns
db.samples(3, "p2p.pingpong", 8)        # raw samples of one point (numpy array, us)
"""

from __future__ import annotations

import numpy as np

from scope.model import POINT_STATS
from scope.store import Store


class Results:
    def __init__(self, path_or_store=None):
        """A path (default: the usual database), or a Store already open."""
        self.store = path_or_store if isinstance(path_or_store, Store) else Store(path_or_store, create=False)

    def runs(self):
        import pandas as pd

        rows = [dict(r) for r in self.store.runs()]
        for r in rows:
            r.pop("context", None)
            r.pop("stderr", None)
        return pd.DataFrame(rows)

    def points(self, run=None):
        import pandas as pd

        run_ids = [self.store.resolve_run(run)] if run is not None else [r["id"] for r in self.store.runs()]
        rows = []
        for rid in run_ids:
            for p in self.store.load_run(rid, samples=False).points:
                row = {"run": rid, "test": p.test, **p.params, "size": p.size, "unit": p.unit, "count": p.count}
                row.update({k: getattr(p, k) for k in POINT_STATS})
                row.update({"bw_median_MBps": p.bw_median, "batch": p.batch, "stop": p.stop})
                rows.append(row)
        return pd.DataFrame(rows)

    def samples(self, run, test: str, size: int, **params) -> np.ndarray:
        rid = self.store.resolve_run(run)
        for p in self.store.load_run(rid).points:
            if p.test == test and p.size == size and all(p.params.get(k) == v for k, v in params.items()):
                return np.asarray(p.samples)
        raise KeyError(f"no point {test} size {size} {params or ''} in run {rid}")
