"""A stored run's facts: the run, and what its figures draw on besides it (a reference run for
the one-sided overhead, the lower levels' runs for a kernel's predictions, the predictions as
frozen when it was stored, the drift between the configuration's runs), read from the store
and handed to analysis/facts.py's derive.  The store is only asked, never written."""

from __future__ import annotations

from scope.analysis.facts import PHASED_LEVELS, RunFacts, derive, lower_tests
from scope.analysis.noise import drift_between_runs
from scope.analysis.rma import GET, PINGPONG
from scope.model import Run
from scope.store import Store
from scope.store.decode import collector_paused


def lower_runs(store: Store, run: Run) -> list[Run]:
    """The runs of the same MPI and hosts holding what a kernel run's figures and predictions
    draw on and the run lacks: for each lower test, its candidates newest first
    (Store.candidates_for), newest first in all, as analysis/inputs.py's rule reads them."""
    lower: list[Run] = []
    for t in lower_tests(run):
        for ref in store.candidates_for(run, t):
            if all(r.id != ref.id for r in lower):
                lower.append(ref)
    return sorted(lower, key=lambda r: -r.id)


def derive_stored(store: Store, run_id: int, samples: bool = True) -> RunFacts:
    """derive() of a stored run, with the reference run its one-sided figures need when the
    run lacks the lower layer itself, and its kernel predictions as frozen when it was stored."""
    run = store.load_run(run_id, samples=samples)
    with collector_paused():  # records decoded as the facts ask for them: thousands of dicts a point
        return _derived(store, run, run_id)


def _derived(store: Store, run, run_id: int) -> RunFacts:
    tests = {p.test for p in run.points}
    need = GET in tests and PINGPONG not in tests
    kernels = any(run.info(t).level in PHASED_LEVELS for t in tests)
    frozen = store.prediction_for(run_id) if kernels else None
    drift = drift_between_runs(run, store.history_for(run)) if (run.launches or 1) >= 2 else None
    return derive(run, store.reference_for(run, PINGPONG) if need else None, lower_runs(store, run), frozen, drift)
