"""A kernel run's predictions frozen when it is stored (measured or replayed), with their
inputs, so they never change when later runs are added (analysis/predict.py; re-predicting
is `scope predict --check RUN --again`, a new record)."""

from __future__ import annotations

from scope.analysis.frozen import inputs_record, prediction_record
from scope.fetch.facts import derive_stored
from scope.store import Store


def freeze_predictions(store: Store, run_id: int) -> int | None:
    """The id of the prediction stored, or None when the run has no kernel points (or one is
    stored already)."""
    facts = derive_stored(store, run_id, samples=False)
    if not facts.kernels or facts.inputs is None or facts.frozen is not None:
        return None
    return store.add_prediction(
        run_id, None, inputs_record(facts.inputs), [prediction_record(x) for x in facts.predicted]
    )
