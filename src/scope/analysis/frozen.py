"""A prediction as it is frozen: its inputs and its predicted times as JSON values, and back
(Store.add_prediction keeps them; a stored prediction never changes when runs are added)."""

from __future__ import annotations

import math
from dataclasses import asdict

from scope.analysis.collectives import CollectiveModel
from scope.analysis.predict import Inputs, Prediction, Rate


def _finite(x):
    """JSON's numbers: NaN and infinities (a refused fit's) become null."""
    if isinstance(x, float) and not math.isfinite(x):
        return None
    if isinstance(x, dict):
        return {k: _finite(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_finite(v) for v in x]
    return x


def inputs_record(inp: Inputs) -> dict:
    """The inputs as a prediction is frozen with them (Store.add_prediction)."""
    return _finite(asdict(inp))


def inputs_of(d: dict) -> Inputs:
    """Inputs from their frozen record."""

    def rate(r: dict | None) -> Rate | None:
        return Rate(**r) if r else None

    return Inputs(
        t0_us=d.get("t0_us"),
        rinf_MBps=d.get("rinf_MBps"),
        hockney_run=d.get("hockney_run"),
        dgemm=[(n, procs, rate(r)) for n, procs, r in d.get("dgemm") or []],
        stream={k: [(procs, rate(r)) for procs, r in v] for k, v in (d.get("stream") or {}).items()},
        sort=rate(d.get("sort")),
        update={k: [(n, rate(r)) for n, r in v] for k, v in (d.get("update") or {}).items()},
        llc_bytes=d.get("llc_bytes"),
        bcast=CollectiveModel(**d["bcast"]) if d.get("bcast") else None,
        bcast_run=d.get("bcast_run"),
        cores=d.get("cores"),
        one_host=bool(d.get("one_host")),
        l2_bytes=d.get("l2_bytes"),
        rule=d.get("rule") or "",
    )


def prediction_record(x: Prediction) -> dict:
    return _finite(asdict(x))


def prediction_of(d: dict) -> Prediction:
    return Prediction(**d)


def input_runs(inp: Inputs) -> list[int]:
    """The runs a prediction drew on."""
    runs = {inp.hockney_run, inp.bcast_run, *(r.run for _, _, r in inp.dgemm), inp.sort.run if inp.sort else None}
    runs |= {r.run for v in inp.stream.values() for _, r in v} | {r.run for v in inp.update.values() for _, r in v}
    return sorted(r for r in runs if r is not None)
