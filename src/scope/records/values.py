"""Types shared by the records: a double the engine wrote (null where it was not finite), a
parameter value."""

from __future__ import annotations

from typing import Annotated, Union

from msgspec import Meta

# Every number a record holds has a range (issue 44: an imported stream with a count of 10^30,
# ranks: -2 or a median past a double's range was stored as nonsense or ended in OverflowError):
# what the engine writes always lies inside, so a live run never meets these bounds.
LARGEST = 2**63 - 1  # SQLite's integers
Finite = Annotated[float, Meta(ge=-1.7e308, le=1.7e308)]  # no inf; NaN fails every comparison
Num = Union[Finite, None]  # a double the engine wrote; null where it was not finite
Count = Annotated[int, Meta(ge=0, le=LARGEST)]  # how many: samples, repetitions, bytes
Ranks = Annotated[int, Meta(ge=1, le=1 << 24)]  # the engine's most ranks (--plan N)
Scalar = Union[int, float, str, bool, None]
