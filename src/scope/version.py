"""The front end's version (the engine has its own: scope-engine --version)."""

__version__ = "0.1.0"
