"""SCOPE: performance evaluation of message-passing clusters."""

__version__ = "0.1.0"


def open(path=None):  # noqa: A001 - the natural name for "open a results database"
    """Open a results database for analysis: `scope.open().points()` is a pandas DataFrame."""
    from scope.api import Results

    return Results(path)
