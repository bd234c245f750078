"""SCOPE: performance evaluation of message-passing clusters."""

from scope.api import Results
from scope.version import __version__

__all__ = ["Results", "__version__", "connect"]


def connect(path=None) -> Results:
    """A results database for analysis: `scope.connect().points()` is a pandas DataFrame."""
    return Results(path)


def __getattr__(name):
    # scope.open, the name of earlier versions, still answers (it is not exported: a star
    # import must not shadow the builtin open)
    if name == "open":
        return connect
    raise AttributeError(f"module 'scope' has no attribute {name!r}")
