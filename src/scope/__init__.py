"""SCOPE: performance evaluation of message-passing clusters."""

from scope.api import Results
from scope.version import __version__

__all__ = ["Results", "__version__", "open"]


def open(path=None):  # noqa: A001 - the natural name for "open a results database"
    """Open a results database for analysis: `scope.open().points()` is a pandas DataFrame."""
    return Results(path)
