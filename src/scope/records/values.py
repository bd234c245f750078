"""Types shared by the records: a double the engine wrote (null where it was not finite), a
parameter value."""

from __future__ import annotations

from typing import Union

Num = Union[float, None]  # a double the engine wrote; null where it was not finite
Scalar = Union[int, float, str, bool, None]
