"""The engine's records, declared once (docs/records.md is checked against these by a test).

Every line the engine writes is validated against its type where it enters the front end
(`run/stream.py`): a record whose fields do not have these types is not a record, and the run
says how many it dropped.  Numbers the engine writes as `null` (NaN, infinities) are `None`.
A reader must ignore fields it does not know, so unknown fields pass; the record is kept as
the engine wrote it.  The front end's additions to a context (testbed, io, pattern, module,
slurm) and to a combined point (launches, modes) are declared here too."""

from scope.records.engine import Planned
from scope.records.run import Plan
from scope.records.typed import TYPES, Record, problem, typed

__all__ = ["TYPES", "Plan", "Planned", "Record", "problem", "typed"]
