"""The Python API: a results database as pandas DataFrames.

import scope
db = scope.connect()                    # or scope.connect("results.db")
db.runs()                               # one row per run
db.points(run=3)                        # one row per point: its statistics side by side
db.tidy(run=3)                          # one row per point and statistic (long, for plotting)
db.samples_frame(run=3)                 # one row per raw sample
db.samples(3, "p2p.pingpong", 8)        # raw samples of one point (numpy array, us)

Parameters are categorical columns, written as on the command line (`blocking` is "yes" or
"no" everywhere, never True in one frame and "yes" in another); sizes are integers (nullable
Int64: a test that is not swept over sizes has none), times in µs, rates in MB/s = 10^6 bytes/s.
"""

from __future__ import annotations

import numpy as np

from scope.catalog.testinfo import written
from scope.model import POINT_STATS, Point
from scope.store import Store


def _params(p: Point) -> dict[str, str]:
    return {k: written(v) for k, v in (p.params or {}).items() if k != "size"}


def _typed(df, params: set[str]):
    """Integer sizes and categorical parameters and names."""
    import pandas as pd

    if "size" in df:
        df["size"] = pd.array(df["size"], dtype="Int64")
    for c in ("test", "unit", "statistic", *sorted(params)):
        if c in df:
            df[c] = df[c].astype("category")
    return df


class Results:
    def __init__(self, path_or_store=None):
        """A path (default: the usual database), or a Store already open."""
        self.store = path_or_store if isinstance(path_or_store, Store) else Store(path_or_store, create=False)

    def _runs(self, run) -> list[int]:
        return [self.store.resolve_run(run)] if run is not None else [r["id"] for r in self.store.runs()]

    def _points(self, run, samples: bool = False):
        """(run id, point, its parameters as written) for every point of the runs asked for."""
        for rid in self._runs(run):
            for p in self.store.load_run(rid, samples=samples).points:
                yield rid, p, _params(p)

    def runs(self):
        import pandas as pd

        rows = [dict(r) for r in self.store.runs()]
        for r in rows:
            for private in ("context", "stderr", "pid", "host", "scratch", "command"):
                r.pop(private, None)
        return pd.DataFrame(rows)

    def points(self, run=None):
        """One row per point, its statistics as columns (wide)."""
        import pandas as pd

        rows, names = [], set()
        for rid, p, params in self._points(run):
            names |= set(params)
            row = {"run": rid, "test": p.test, **params, "size": p.size, "unit": p.unit, "count": p.count}
            row.update({k: getattr(p, k) for k in POINT_STATS})
            row.update({"bw_median_MBps": p.bw_median, "batch": p.batch, "stop": p.stop, "launches": p.launches})
            rows.append(row)
        return _typed(pd.DataFrame(rows), names)

    def tidy(self, run=None, statistics: tuple[str, ...] = POINT_STATS):
        """One row per point and statistic (long): run, test, the parameters, size, unit,
        launches, statistic, value; what seaborn and plotnine take as they are."""
        import pandas as pd

        rows, names = [], set()
        for rid, p, params in self._points(run):
            names |= set(params)
            base = {"run": rid, "test": p.test, **params, "size": p.size, "unit": p.unit, "launches": p.launches}
            rows += [dict(base, statistic=s, value=getattr(p, s)) for s in statistics if getattr(p, s) is not None]
            if p.bw_median is not None:
                rows.append(dict(base, unit="MB/s", statistic="bw_median", value=p.bw_median))
        return _typed(pd.DataFrame(rows), names)

    def samples_frame(self, run=None, test: str | None = None):
        """One row per raw sample: run, test, the parameters, size, sample (its index), value (µs)."""
        import pandas as pd

        frames, names = [], set()
        for rid, p, params in self._points(run, samples=True):
            if (test and p.test != test) or not p.samples:
                continue
            names |= set(params)
            x = np.asarray(p.samples, dtype=float)
            frame = pd.DataFrame({"sample": np.arange(len(x)), "value": x})
            for k, v in {"run": rid, "test": p.test, **params, "size": p.size, "unit": p.unit}.items():
                frame[k] = v
            frames.append(frame)
        if not frames:
            return pd.DataFrame(columns=["run", "test", "size", "unit", "sample", "value"])
        df = pd.concat(frames, ignore_index=True)
        front = ["run", "test", *sorted(names), "size", "unit", "sample", "value"]
        return _typed(df[[c for c in front if c in df]], names)

    def samples(self, run, test: str, size: int, **params) -> np.ndarray:
        rid = self.store.resolve_run(run)
        want = {k: written(v) for k, v in params.items()}
        for p in self.store.load_run(rid).points:
            if p.test == test and p.size == size and all(_params(p).get(k) == v for k, v in want.items()):
                return np.asarray(p.samples)
        raise KeyError(f"no point {test} size {size} {params or ''} in run {rid}")

    def pairs(self, run=None):
        """One row per pair a pairs-timed test measured (p2p.allpairs): run, test, mode, size,
        launch, step, a, b (ranks), n (round trips), median_us, ci_lo_us, ci_hi_us, min_us
        (one-way time).  A 1,024-host sweep is 523,776 rows a launch and size."""
        import pandas as pd

        frames = []
        for rid in self._runs(run):
            for s in self.store.load_run(rid, samples=False).pairs:
                cols = {
                    c: np.asarray(getattr(s, c)) for c in ("a", "b", "n", "median_us", "ci_lo_us", "ci_hi_us", "min_us")
                }
                frame = pd.DataFrame(cols)
                for k, v in {"run": rid, "test": s.test, "mode": s.mode, "size": s.size, "launch": s.launch,
                             "step": s.step}.items():  # fmt: skip
                    frame[k] = v
                frames.append(frame)
        front = ["run", "test", "mode", "size", "launch", "step", "a", "b", "n", "median_us", "ci_lo_us", "ci_hi_us",
                 "min_us"]  # fmt: skip
        return pd.concat(frames, ignore_index=True)[front] if frames else pd.DataFrame(columns=front)
