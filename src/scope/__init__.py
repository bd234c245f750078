"""SCOPE: performance evaluation of message-passing clusters."""

import importlib

from scope.version import __version__

__all__ = ["Results", "__version__", "connect"]


def connect(path=None):
    """A results database for analysis: `scope.connect().points()` is a pandas DataFrame."""
    return __getattr__("Results")(path)


def __getattr__(name):
    # The API is loaded when first named (PEP 562): `scope --version` and every command that
    # does not use it paid numpy's and the store's import, 0.15 s of its 0.2 (issue 52).
    if name == "Results":
        return importlib.import_module("scope.api").Results
    # scope.open, the name of earlier versions, still answers (it is not exported: a star
    # import must not shadow the builtin open)
    if name == "open":
        return connect
    raise AttributeError(f"module 'scope' has no attribute {name!r}")
